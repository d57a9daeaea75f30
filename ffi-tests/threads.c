/*
 * Thread-safety through the C ABI, with POSIX threads:
 *  1. several threads, one handle each, running products concurrently on matrices shared
 *     read-only between them, each also provoking errors and reading its own messages;
 *  2. two threads sharing one handle (calls are serialised by the library): products with
 *     their own plans, a shared plan with separate output arrays, and one thread changing
 *     the handle's thread count between calls.
 * Every result is checked against a reference computed by the thread itself. The check
 * counters of check.h are not thread-safe, so worker threads count failures locally and
 * the main thread records one check per worker.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "spgemm.h"
#include "testlib.h"

#define NTHREADS 4
#define ROUNDS 6

/* Matrices shared read-only by all threads of part 1. */
static ref_csr shared_a, shared_b, shared_c;
static spgemm_matrix_t *shared_A, *shared_B;

typedef struct {
    int id;
    spgemm_handle_t *h;  /* part 2: the shared handle; part 1: NULL (own handle) */
    spgemm_plan_t *plan; /* part 2: a plan shared by both threads */
    const int32_t *plan_rp;
    int toggle_threads;  /* part 2: change the handle's thread count between calls */
    int failures;
    int products;
} worker_t;

static int product_ok(spgemm_handle_t *h, const spgemm_matrix_t *A, const spgemm_matrix_t *B,
                      const ref_csr *c, spgemm_index_type_t cot, spgemm_index_type_t cit,
                      const char *what) {
    typed_csr tc;
    spgemm_status_t s = two_phase(h, A, B, c->m, c->n, SPGEMM_VALUE_FLOAT64, cot, cit, 0, 0, &tc);
    int ok;
    if (s != SPGEMM_STATUS_SUCCESS) {
        fprintf(stderr, "%s: status %d: %s\n", what, (int)s, spgemm_last_error(h));
        return 0;
    }
    ok = compare_typed(what, c, &tc, CMP_EXACT);
    typed_free(&tc);
    return ok;
}

/* Part 1: own handle, own matrices and the shared ones, own error messages. */
static void *own_handle_worker(void *arg) {
    worker_t *w = (worker_t *)arg;
    spgemm_handle_t *h = NULL;
    int round;
    char what[64];
    if (spgemm_create(&h) != SPGEMM_STATUS_SUCCESS) {
        w->failures++;
        return NULL;
    }
    if (spgemm_set_num_threads(h, 1 + w->id % 2) != SPGEMM_STATUS_SUCCESS) w->failures++;
    for (round = 0; round < ROUNDS; round++) {
        uint64_t seed = 1000 + (uint64_t)w->id * 100 + (uint64_t)round;
        ref_csr a = ref_random(150, 120, 10, seed, GEN_DUPS);
        ref_csr b = ref_random(120, 130, 10, seed + 50, GEN_DUPS);
        ref_csr c = ref_product(&a, &b, 0);
        typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32,
                                      SPGEMM_VALUE_FLOAT64, 0, 1);
        typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32,
                                      SPGEMM_VALUE_FLOAT64, 0, 1);
        spgemm_matrix_t *A = NULL, *B = NULL;
        spgemm_algorithm_t alg = (spgemm_algorithm_t)((w->id + round) % 3);
        if (spgemm_set_algorithm(h, alg) != SPGEMM_STATUS_SUCCESS) w->failures++;
        if (typed_create(&A, &ta) != SPGEMM_STATUS_SUCCESS) w->failures++;
        if (typed_create(&B, &tb) != SPGEMM_STATUS_SUCCESS) w->failures++;
        snprintf(what, sizeof what, "thread %d round %d", w->id, round);
        w->failures += !product_ok(h, A, B, &c, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64, what);
        snprintf(what, sizeof what, "thread %d round %d shared", w->id, round);
        w->failures += !product_ok(h, shared_A, shared_B, &shared_c, SPGEMM_INDEX_SIZE_T,
                                   SPGEMM_INDEX_INT32, what);
        w->products += 2;
        /* an error naming this thread's value, read back while others fail too */
        {
            int32_t bad = -100 - w->id - 10 * round;
            char word[16];
            snprintf(word, sizeof word, "%d", (int)bad);
            if (spgemm_set_num_threads(h, bad) != SPGEMM_STATUS_INVALID_VALUE) w->failures++;
            if (!has_word(spgemm_last_error(h), word)) {
                fprintf(stderr, "thread %d: handle message \"%s\" lacks %s\n", w->id,
                        spgemm_last_error(h), word);
                w->failures++;
            }
            if (!has_word(spgemm_last_error(NULL), word)) {
                fprintf(stderr, "thread %d: thread message \"%s\" lacks %s\n", w->id,
                        spgemm_last_error(NULL), word);
                w->failures++;
            }
        }
        spgemm_matrix_destroy(A);
        spgemm_matrix_destroy(B);
        typed_free(&ta);
        typed_free(&tb);
        ref_free(&a);
        ref_free(&b);
        ref_free(&c);
    }
    spgemm_destroy(h);
    return NULL;
}

/* Part 2: a shared handle; own products, plus numeric calls on the shared plan. */
static void *shared_handle_worker(void *arg) {
    worker_t *w = (worker_t *)arg;
    spgemm_handle_t *h = w->h;
    int round;
    char what[64];
    int32_t *cci = (int32_t *)xmalloc((size_t)shared_c.nnz * sizeof(int32_t) + 1);
    double *cv = (double *)xmalloc((size_t)shared_c.nnz * sizeof(double) + 1);
    for (round = 0; round < ROUNDS; round++) {
        uint64_t seed = 5000 + (uint64_t)w->id * 100 + (uint64_t)round;
        ref_csr a = ref_random(140, 110, 10, seed, GEN_DUPS);
        ref_csr b = ref_random(110, 160, 10, seed + 50, GEN_DUPS);
        ref_csr c = ref_product(&a, &b, 0);
        typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                      SPGEMM_VALUE_FLOAT64, 0, 1);
        typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                      SPGEMM_VALUE_FLOAT64, 0, 1);
        spgemm_matrix_t *A = NULL, *B = NULL;
        if (w->toggle_threads &&
            spgemm_set_num_threads(h, 1 + round % 3) != SPGEMM_STATUS_SUCCESS)
            w->failures++;
        if (typed_create(&A, &ta) != SPGEMM_STATUS_SUCCESS) w->failures++;
        if (typed_create(&B, &tb) != SPGEMM_STATUS_SUCCESS) w->failures++;
        snprintf(what, sizeof what, "shared handle, thread %d round %d", w->id, round);
        w->failures += !product_ok(h, A, B, &c, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, what);
        /* the shared plan: both threads fill their own arrays */
        memset(cv, 0, (size_t)shared_c.nnz * sizeof(double));
        if (spgemm_numeric(h, w->plan, shared_A, shared_B, cci, cv) != SPGEMM_STATUS_SUCCESS ||
            !compare_c("shared plan", &shared_c, SPGEMM_INDEX_INT32, w->plan_rp,
                       SPGEMM_INDEX_INT32, cci, SPGEMM_VALUE_FLOAT64, cv, 0, CMP_EXACT)) {
            fprintf(stderr, "thread %d: shared plan failed: %s\n", w->id, spgemm_last_error(h));
            w->failures++;
        }
        w->products += 2;
        spgemm_matrix_destroy(A);
        spgemm_matrix_destroy(B);
        typed_free(&ta);
        typed_free(&tb);
        ref_free(&a);
        ref_free(&b);
        ref_free(&c);
    }
    free(cci);
    free(cv);
    return NULL;
}

static void test_own_handles(void) {
    pthread_t th[NTHREADS];
    worker_t w[NTHREADS];
    int i, products = 0;
    for (i = 0; i < NTHREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        CHECK(pthread_create(&th[i], NULL, own_handle_worker, &w[i]) == 0);
    }
    for (i = 0; i < NTHREADS; i++) {
        CHECK(pthread_join(th[i], NULL) == 0);
        if (!CHECK(w[i].failures == 0)) fprintf(stderr, "  worker %d failed\n", i);
        CHECK(w[i].products == 2 * ROUNDS);
        products += w[i].products;
    }
    printf("  own handles: %d threads, %d products\n", NTHREADS, products);
}

static void test_shared_handle(void) {
    pthread_t th[2];
    worker_t w[2];
    spgemm_handle_t *h = NULL;
    spgemm_plan_t *plan = NULL;
    int32_t *crp = (int32_t *)xmalloc(((size_t)shared_a.m + 1) * sizeof(int32_t));
    int i, products = 0;
    int32_t nt = 0;
    if (!CHECK_OK(NULL, spgemm_create(&h))) return;
    CHECK_OK(h, spgemm_set_num_threads(h, 2));
    CHECK_OK(h, spgemm_symbolic(h, shared_A, shared_B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0,
                                crp, &plan));
    for (i = 0; i < 2; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        w[i].h = h;
        w[i].plan = plan;
        w[i].plan_rp = crp;
        w[i].toggle_threads = i == 1;
        CHECK(pthread_create(&th[i], NULL, shared_handle_worker, &w[i]) == 0);
    }
    for (i = 0; i < 2; i++) {
        CHECK(pthread_join(th[i], NULL) == 0);
        if (!CHECK(w[i].failures == 0)) fprintf(stderr, "  shared-handle worker %d failed\n", i);
        CHECK(w[i].products == 2 * ROUNDS);
        products += w[i].products;
    }
    CHECK_OK(h, spgemm_get_num_threads(h, &nt));
    CHECK(nt == 1 + (ROUNDS - 1) % 3);
    printf("  shared handle: 2 threads, %d products\n", products);
    spgemm_plan_destroy(plan);
    spgemm_destroy(h);
    free(crp);
}

int main(void) {
    typed_csr ta, tb;
    shared_a = ref_random(200, 180, 12, 7, GEN_DUPS);
    shared_b = ref_random(180, 190, 12, 8, GEN_DUPS);
    shared_c = ref_product(&shared_a, &shared_b, 0);
    ta = typed_from_ref(&shared_a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64,
                        0, 1);
    tb = typed_from_ref(&shared_b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64,
                        0, 1);
    CHECK_OK(NULL, typed_create(&shared_A, &ta));
    CHECK_OK(NULL, typed_create(&shared_B, &tb));
    test_own_handles();
    test_shared_handle();
    spgemm_matrix_destroy(shared_A);
    spgemm_matrix_destroy(shared_B);
    typed_free(&ta);
    typed_free(&tb);
    ref_free(&shared_a);
    ref_free(&shared_b);
    ref_free(&shared_c);
    return check_report();
}

/* A failed call leaves nothing behind (issue: a failed call poisoned the handle and later
 * VALID products returned success with a wrong C), thread counts are bounded, the library
 * prints nothing, SpMM with k = 0 takes any leading dimension, and the last error
 * describes the latest call. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "spgemm.h"

static spgemm_matrix_t *make(int64_t m, int64_t n, const int32_t *rp, const int32_t *ci,
                             const double *v) {
    spgemm_matrix_t *mat = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&mat, m, n, SPGEMM_INDEX_INT32, rp,
                                            SPGEMM_INDEX_INT32, ci, SPGEMM_VALUE_FLOAT64, v,
                                            SPGEMM_INDEX_BASE_ZERO));
    return mat;
}

/* The valid product of the report: A = 1x2 row {1, 0}, B = 2x3 rows {0, 0} and {0, 0, 1},
 * all values 1; C = {(0, 4), (1, 1)} (sorted output). Returns 1 when C is right. */
static int valid_product_is_right(spgemm_handle_t *h) {
    static const int32_t a_rp[] = {0, 2}, a_ci[] = {1, 0};
    static const double a_v[] = {1, 1};
    static const int32_t b_rp[] = {0, 2, 5}, b_ci[] = {0, 0, 0, 0, 1};
    static const double b_v[] = {1, 1, 1, 1, 1};
    spgemm_matrix_t *a = make(1, 2, a_rp, a_ci, a_v), *b = make(2, 3, b_rp, b_ci, b_v);
    spgemm_plan_t *plan = NULL;
    int32_t c_rp[2] = {-1, -1}, c_ci[4] = {-1, -1, -1, -1};
    double c_v[4] = {0, 0, 0, 0};
    int64_t nnz = -1;
    int ok = 0;
    if (spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ZERO,
                        c_rp, &plan) == SPGEMM_STATUS_SUCCESS &&
        spgemm_plan_get_nnz(plan, &nnz) == SPGEMM_STATUS_SUCCESS && nnz == 2 &&
        spgemm_numeric(h, plan, a, b, c_ci, c_v) == SPGEMM_STATUS_SUCCESS) {
        /* Twice more: the second call learns, the third replays. */
        ok = c_rp[0] == 0 && c_rp[1] == 2 && c_ci[0] == 0 && c_ci[1] == 1 && c_v[0] == 4 &&
             c_v[1] == 1;
        for (int r = 0; r < 2 && ok; r++) {
            ok = spgemm_numeric(h, plan, a, b, c_ci, c_v) == SPGEMM_STATUS_SUCCESS &&
                 c_ci[0] == 0 && c_ci[1] == 1 && c_v[0] == 4 && c_v[1] == 1;
        }
    }
    if (!ok) {
        fprintf(stderr, "  valid product: nnz %lld, C = {(%d, %g), (%d, %g)}: %s\n",
                (long long)nnz, c_ci[0], c_v[0], c_ci[1], c_v[1], spgemm_last_error(h));
    }
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    return ok;
}

/* (a): 1x1 A and B with three entries at column 0; numeric after B's columns became
 * {0, 1, 0} (out of range, validation off). */
static void bad_numeric(spgemm_handle_t *h) {
    static const int32_t rp[] = {0, 3}, ci[] = {0, 0, 0};
    static const double v[] = {1, 1, 1};
    int32_t b_ci[] = {0, 0, 0};
    spgemm_matrix_t *a = make(1, 1, rp, ci, v), *b = make(1, 1, rp, b_ci, v);
    spgemm_plan_t *plan = NULL;
    int32_t c_rp[2], c_ci[8];
    double c_v[8];
    CHECK_OK(h, spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                SPGEMM_INDEX_BASE_ZERO, c_rp, &plan));
    b_ci[1] = 1;
    spgemm_status_t s = spgemm_numeric(h, plan, a, b, c_ci, c_v);
    /* The header allows any result for this call; a failure must say validation was off. */
    if (s != SPGEMM_STATUS_SUCCESS) {
        CHECK(strstr(spgemm_last_error(h), "validation is off") != NULL);
        CHECK(s == SPGEMM_STATUS_INDEX_OUT_OF_RANGE);
    }
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
}

/* (b): A 2x2 rows {1, 1, 0} and {}, B 2x3 rows {-1} and {0, 0}: symbolic, validation off. */
static void bad_symbolic(spgemm_handle_t *h) {
    static const int32_t a_rp[] = {0, 3, 3}, a_ci[] = {1, 1, 0};
    static const int32_t b_rp[] = {0, 1, 3}, b_ci[] = {-1, 0, 0};
    static const double v[] = {1, 1, 1};
    spgemm_matrix_t *a = make(2, 2, a_rp, a_ci, v), *b = make(2, 3, b_rp, b_ci, v);
    spgemm_plan_t *plan = NULL;
    int32_t c_rp[3];
    spgemm_status_t s = spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                        SPGEMM_INDEX_BASE_ZERO, c_rp, &plan);
    if (s != SPGEMM_STATUS_SUCCESS) {
        CHECK(plan == NULL);
        CHECK(strstr(spgemm_last_error(h), "validation is off") != NULL);
    }
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
}

/* A bad SpMM (column index past A's columns, validation off), then a valid one. */
static void bad_spmm(spgemm_handle_t *h) {
    static const int32_t rp[] = {0, 2, 3}, bad_ci[] = {0, 7, 1}, ci[] = {0, 1, 1};
    static const double v[] = {1, 2, 3};
    double x[4] = {1, 1, 1, 1}, y[4] = {0, 0, 0, 0};
    spgemm_matrix_t *bad = make(2, 2, rp, bad_ci, v), *a = make(2, 2, rp, ci, v);
    spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, 1.0, bad, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 2,
                x, 2, 0.0, y, 2);
    CHECK_OK(h, spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, 1.0, a, NULL,
                            SPGEMM_LAYOUT_ROW_MAJOR, 2, x, 2, 0.0, y, 2));
    CHECK(y[0] == 3 && y[1] == 3 && y[2] == 3 && y[3] == 3);
    spgemm_matrix_destroy(bad);
    spgemm_matrix_destroy(a);
}

static void test_failed_calls_do_not_poison(void) {
    static const spgemm_algorithm_t algs[] = {SPGEMM_ALG_AUTO, SPGEMM_ALG_KKDENSE,
                                              SPGEMM_ALG_KKLP, SPGEMM_ALG_KKMEM};
    for (int threads = 1; threads <= 2; threads++) {
        for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++) {
            for (int order = 0; order < 3; order++) {
                spgemm_handle_t *h = NULL;
                CHECK_OK(NULL, spgemm_create(&h));
                CHECK_OK(h, spgemm_set_num_threads(h, threads));
                CHECK_OK(h, spgemm_set_validation(h, 0));
                CHECK_OK(h, spgemm_set_algorithm(h, algs[i]));
                if (order == 0) bad_numeric(h);
                if (order == 1) bad_symbolic(h);
                if (order == 2) {
                    bad_numeric(h);
                    bad_symbolic(h);
                    bad_spmm(h);
                }
                /* The report's valid product ran with AUTO after KKDENSE had failed. */
                CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
                if (!CHECK(valid_product_is_right(h))) {
                    fprintf(stderr, "  after failure %d, %d threads, algorithm %d\n", order,
                            threads, (int)algs[i]);
                }
                CHECK_OK(h, spgemm_set_algorithm(h, algs[i]));
                CHECK(valid_product_is_right(h));
                spgemm_destroy(h);
            }
        }
    }
}

/* Found by the long fuzz run (segments 6-13's slow class): B has 2^31 - 1 columns and its
 * row 2 spans [1, 0) (offsets decrease), A's row 2 uses that row, validation off. The
 * symbolic phase sized its accumulators from the wrapped row length (2^31 entries: 0.2-5 s
 * of page clearing, gigabytes, then "success" with a garbage plan); it must fail at once
 * saying validation was off, and the handle must still multiply right. (KKDENSE is left
 * out: forced, it sizes its accumulator by B's 2^31 columns whatever the rows say.) */
static void test_wrapped_row_of_b(void) {
    static const spgemm_algorithm_t algs[] = {SPGEMM_ALG_AUTO, SPGEMM_ALG_KKLP, SPGEMM_ALG_KKMEM};
    static const int32_t a_rp[] = {0, 0, 0, 1, 1, 3}, a_ci[] = {2, 0, 3};
    static const int32_t b_rp[] = {0, 0, 1, 0, 1, 3, 3}, b_ci[] = {2147483599, 1, 61};
    static const double v[] = {1, 1, 1};
    for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++) {
        for (int threads = 1; threads <= 3; threads += 2) {
            spgemm_handle_t *h = NULL;
            CHECK_OK(NULL, spgemm_create(&h));
            CHECK_OK(h, spgemm_set_num_threads(h, threads));
            CHECK_OK(h, spgemm_set_validation(h, 0));
            CHECK_OK(h, spgemm_set_algorithm(h, algs[i]));
            spgemm_matrix_t *a = make(5, 6, a_rp, a_ci, v), *b = make(6, INT32_MAX, b_rp, b_ci, v);
            spgemm_plan_t *plan = NULL;
            spgemm_status_t s = spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                                SPGEMM_INDEX_BASE_ONE, NULL, &plan);
            if (!CHECK(s == SPGEMM_STATUS_INVALID_STRUCTURE && plan == NULL &&
                       strstr(spgemm_last_error(h), "validation is off") != NULL)) {
                fprintf(stderr, "  algorithm %d, %d threads: status %d: %s\n", (int)algs[i],
                        threads, (int)s, spgemm_last_error(h));
            }
            spgemm_plan_destroy(plan);
            spgemm_matrix_destroy(a);
            spgemm_matrix_destroy(b);
            CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
            CHECK(valid_product_is_right(h));
            spgemm_destroy(h);
        }
    }
}

static void test_thread_limits(void) {
    spgemm_handle_t *h = NULL;
    CHECK_OK(NULL, spgemm_create(&h));
    CHECK_ERR(h, spgemm_set_num_threads(h, INT_MAX), SPGEMM_STATUS_INVALID_VALUE,
              WORDS("4096"));
    CHECK_ERR(h, spgemm_set_num_threads(h, 100000), SPGEMM_STATUS_INVALID_VALUE,
              WORDS("4096"));
    CHECK_ERR(h, spgemm_set_num_threads(h, 20000000), SPGEMM_STATUS_INVALID_VALUE,
              WORDS("4096"));
    /* The handle still works after the refusals. */
    CHECK(valid_product_is_right(h));
    spgemm_destroy(h);

    const char *old = getenv("SPGEMM_NUM_THREADS");
    char *saved = old ? strdup(old) : NULL;
    static const char *const bad[] = {"99999999999", "4097", "-3", "two", "0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("SPGEMM_NUM_THREADS", bad[i], 1);
        spgemm_handle_t *g = (spgemm_handle_t *)1;
        CHECK_ERR(NULL, spgemm_create(&g), SPGEMM_STATUS_INVALID_VALUE,
                  WORDS("SPGEMM_NUM_THREADS"));
        CHECK(g == NULL);
    }
    setenv("SPGEMM_NUM_THREADS", "2", 1);
    spgemm_handle_t *g = NULL;
    CHECK_OK(NULL, spgemm_create(&g));
    int32_t n = 0;
    CHECK_OK(g, spgemm_get_num_threads(g, &n));
    CHECK(n == 2);
    spgemm_destroy(g);
    if (saved) {
        setenv("SPGEMM_NUM_THREADS", saved, 1);
        free(saved);
    } else {
        unsetenv("SPGEMM_NUM_THREADS");
    }
}

/* Everything the library writes to stderr while `run` runs (RUST_BACKTRACE=1 set, as a
 * caller's environment may have it). Returns the number of bytes written. */
static long stderr_bytes_during(void (*run)(void)) {
    fflush(stderr);
    FILE *tmp = tmpfile();
    if (!tmp) return -1;
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    setenv("RUST_BACKTRACE", "1", 1);
    run();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    long n = ftell(tmp) >= 0 ? (fseek(tmp, 0, SEEK_END), ftell(tmp)) : -1;
    fclose(tmp);
    return n;
}

static void failing_calls(void) {
    spgemm_handle_t *h = NULL;
    if (spgemm_create(&h) != SPGEMM_STATUS_SUCCESS) return;
    spgemm_set_num_threads(h, 2);
    spgemm_set_validation(h, 0);
    spgemm_set_algorithm(h, SPGEMM_ALG_KKDENSE);
    bad_numeric(h);
    bad_symbolic(h);
    bad_spmm(h);
    spgemm_destroy(h);
}

static void test_nothing_printed(void) {
    long n = stderr_bytes_during(failing_calls);
    if (!CHECK(n == 0)) fprintf(stderr, "  the library wrote %ld bytes to stderr\n", n);
}

static void test_spmm_k_zero(void) {
    static const int32_t rp[] = {0, 1, 2}, ci[] = {0, 1};
    static const double v[] = {1, 2};
    spgemm_handle_t *h = NULL;
    CHECK_OK(NULL, spgemm_create(&h));
    spgemm_matrix_t *a = make(2, 2, rp, ci, v);
    double x = 0, y = 0;
    CHECK_OK(h, spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, 1.0, a, NULL,
                            SPGEMM_LAYOUT_ROW_MAJOR, 0, &x, 0, 0.0, &y, 0));
    CHECK_OK(h, spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, 1.0, a, NULL,
                            SPGEMM_LAYOUT_COL_MAJOR, 0, &x, 0, 0.0, &y, 0));
    CHECK_OK(h, spgemm_spmm(h, SPGEMM_OPERATION_TRANSPOSE, 1.0, a, NULL,
                            SPGEMM_LAYOUT_ROW_MAJOR, 0, NULL, 0, 1.0, NULL, 0));
    spgemm_matrix_destroy(a);
    spgemm_destroy(h);
}

static void test_last_error_follows_the_latest_call(void) {
    spgemm_handle_t *h = NULL;
    CHECK_OK(NULL, spgemm_create(&h));
    CHECK_ERR(h, spgemm_set_num_threads(h, -1), SPGEMM_STATUS_INVALID_VALUE,
              WORDS("negative"));
    CHECK(spgemm_last_error(h)[0] != '\0');
    CHECK(spgemm_last_error(NULL)[0] != '\0');
    CHECK_OK(h, spgemm_set_num_threads(h, 1));
    CHECK(spgemm_last_error(h)[0] == '\0');
    CHECK(spgemm_last_error(NULL)[0] == '\0');
    spgemm_destroy(h);
}

int main(void) {
    test_failed_calls_do_not_poison();
    test_wrapped_row_of_b();
    test_thread_limits();
    test_nothing_printed();
    test_spmm_k_zero();
    test_last_error_follows_the_latest_call();
    return check_report();
}

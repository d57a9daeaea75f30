/*
 * Regression tests for the findings of the C ABI fuzzer (fuzz/spgemm_fuzz.c, issue 27), each
 * a minimal reproducer of one call sequence. Findings:
 *  F1  an invalid call with validation off that ends in INTERNAL (a caught panic) leaves the
 *      handle's workspace dirty: a later VALID product on the same handle is wrong (the
 *      issue's cases (a), (b), (c), and the same with AUTO and 3 threads);
 *  F2  the message of that caught panic is printed to stderr (the library must not write);
 *  F3  SpMM with k = 0, row-major and ldx = ldy = 0 is rejected (INVALID_VALUE, "k ... = 1"),
 *      though the header asks only ld >= k and says k = 0 does nothing;
 *  F4  SpMM with a pattern-only A succeeds when Y is empty (m = 0), where the header lists
 *      "A without values" as INVALID_VALUE;
 *  F5  spgemm_destroy returns while the handle's worker threads are still running (they exit
 *      a little later), so "destroys a handle and its threads" does not hold on return: leak
 *      checkers run right after it report the workers' memory, and unloading the library then
 *      is unsafe;
 *  F6  spgemm_symbolic starts rayon's global thread pool (one unnamed thread per core, alive
 *      until the process exits): the parallel fill of C's row offsets
 *      (spgemm::exec::write_row_offsets) runs outside the handle's workers, whatever
 *      spgemm_set_num_threads and the thread binding say;
 *  F7  from the third numeric call on a plan (validation on), the reuse path reads the column
 *      indices already in the caller's c_col_indices and uses them as indices before it checks
 *      them against the plan's digest: C arrays fresh from malloc are read uninitialised
 *      (valgrind: "conditional jump depends on uninitialised value", src/cpu/gustavson.rs:558,
 *      563). The values come out right, so this test fails only under `make valgrind`.
 *  F8  the structure digest that tells a numeric call's A and B from the plan's (validation
 *      on) gave column indices {0,0,0} and {1,0,1} the same digest (its hash lanes started
 *      at seed ^ lane, so two words changed by 1 exchanged lanes 0 and 1): a numeric call
 *      with A corrupted that way ran the kernels on an out-of-range column and returned
 *      INTERNAL (a caught panic) instead of PLAN_MISMATCH.
 *  F9  a plan made with validation off keeps no structure digests: after a legal change of A
 *      (same nnz), a numeric call with validation on returned INTERNAL ("index out of bounds:
 *      the len is 0 but the index is 0": KKLP's level 2, never prepared, took the row the
 *      plan had planned short), and with op(A) = A^T gave a silently wrong C (the plan's
 *      transpose of the old A); both must be PLAN_MISMATCH (fuzz/corpus/
 *      issue27-plan-without-digests-kklp-row-grows).
 * Each prints what went wrong; the program prints "N passed, M failed" and exits non-zero
 * on failure.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* ---- stderr capture: fd 2 goes to a temporary file around the calls under test ---- */

static int saved_fd2 = -1;
static FILE *cap_file = NULL;

static void capture_begin(void) {
    fflush(stderr);
    cap_file = tmpfile();
    saved_fd2 = dup(2);
    if (cap_file == NULL || saved_fd2 < 0) {
        fprintf(stderr, "regressions: cannot capture stderr\n");
        exit(2);
    }
    dup2(fileno(cap_file), 2);
}

/* Restores fd 2; returns the number of bytes the library wrote (prints their start). */
static long capture_end(void) {
    long n;
    fflush(stderr);
    dup2(saved_fd2, 2);
    close(saved_fd2);
    n = (long)lseek(fileno(cap_file), 0, SEEK_END);
    if (n > 0) {
        char buf[200];
        size_t got;
        rewind(cap_file);
        got = fread(buf, 1, sizeof buf - 1, cap_file);
        buf[got] = '\0';
        fprintf(stderr, "  the library wrote %ld bytes to stderr: \"%.120s...\"\n", n, buf);
    }
    fclose(cap_file);
    return n;
}

/* ---- small CSR matrices: int32 offsets and indices, double values, base 0 ---- */

static spgemm_matrix_t *csr(int64_t m, int64_t n, const int32_t *rp, const int32_t *ci, const double *v) {
    spgemm_matrix_t *a = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&a, m, n, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT32, ci,
                                            SPGEMM_VALUE_FLOAT64, v, SPGEMM_INDEX_BASE_ZERO));
    return a;
}

/*
 * Two-phase product on h; checks nnz(C), row offsets, and each row's (column, value) pairs as
 * a set against the expected ones (rows given by exp_rp, 0-based, values exact: small
 * integers). Returns 1 when all matched.
 */
static int product_is(spgemm_handle_t *h, const spgemm_matrix_t *a, const spgemm_matrix_t *b, int64_t m,
                      int64_t exp_nnz, const int64_t *exp_rp, const int64_t *exp_ci, const double *exp_v,
                      const char *what) {
    int64_t rp[16], ci[64], nnz = -1, i, p, q;
    double v[64];
    spgemm_plan_t *plan = NULL;
    int ok = 1;
    if (!CHECK_OK(h, spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64, 0, rp, &plan))) return 0;
    CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
    if (!CHECK(nnz == exp_nnz)) {
        fprintf(stderr, "  %s: nnz(C) = %lld, expected %lld\n", what, (long long)nnz, (long long)exp_nnz);
        spgemm_plan_destroy(plan);
        return 0;
    }
    ok = CHECK_OK(h, spgemm_numeric(h, plan, a, b, ci, v));
    spgemm_plan_destroy(plan);
    if (!ok) return 0;
    for (i = 0; i <= m; i++) ok &= rp[i] == exp_rp[i];
    for (i = 0; i < m && ok; i++)
        for (p = exp_rp[i]; p < exp_rp[i + 1]; p++) {
            int found = 0;
            for (q = rp[i]; q < rp[i + 1]; q++) found |= ci[q] == exp_ci[p] && v[q] == exp_v[p];
            ok &= found;
        }
    if (!CHECK(ok)) {
        fprintf(stderr, "  %s: C =", what);
        for (i = 0; i < m; i++)
            for (q = rp[i]; q < rp[i + 1]; q++) fprintf(stderr, " (%lld,%lld)=%g", (long long)i, (long long)ci[q], v[q]);
        fprintf(stderr, "\n");
    }
    return ok;
}

/* The issue's product (c): A = 1x2 row {1,0}, B = 2x3 rows {0,0} and {0,0,1}, values 1:
   C = {(0,0) = 4, (0,1) = 1}. */
static int issue_c_product(spgemm_handle_t *h, const char *what) {
    static const int32_t arp[2] = {0, 2}, aci[2] = {1, 0}, brp[3] = {0, 2, 5}, bci[5] = {0, 0, 0, 0, 1};
    static const double av[2] = {1, 1}, bv[5] = {1, 1, 1, 1, 1};
    static const int64_t crp[2] = {0, 2}, cci[2] = {0, 1};
    static const double cv[2] = {4, 1};
    spgemm_matrix_t *a = csr(1, 2, arp, aci, av), *b = csr(2, 3, brp, bci, bv);
    int ok = product_is(h, a, b, 1, 2, crp, cci, cv, what);
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    return ok;
}

static spgemm_handle_t *handle(int validation, int threads, spgemm_algorithm_t alg) {
    spgemm_handle_t *h = NULL;
    CHECK_OK(NULL, spgemm_create(&h));
    CHECK_OK(h, spgemm_set_backend(h, SPGEMM_BACKEND_CPU));
    CHECK_OK(h, spgemm_set_num_threads(h, threads));
    CHECK_OK(h, spgemm_set_validation(h, validation));
    CHECK_OK(h, spgemm_set_algorithm(h, alg));
    return h;
}

/* F1 (a): validation off, 1 thread, KKDENSE: symbolic of A = B = 1x1 {0,0,0}, then numeric
   with B's columns {0,1,0} (out of range: any status is allowed); the same valid product
   again must give C = {(0,0) = 9}, and the issue's (c) with AUTO its right answer. */
static void test_f1_issue_a(void) {
    static const int32_t rp[2] = {0, 3}, ci[3] = {0, 0, 0}, bad_ci[3] = {0, 1, 0};
    static const double v[3] = {1, 1, 1};
    static const int64_t crp[2] = {0, 1}, cci[1] = {0};
    static const double cv[1] = {9};
    spgemm_handle_t *h = handle(0, 1, SPGEMM_ALG_KKDENSE);
    spgemm_matrix_t *a = csr(1, 1, rp, ci, v), *b = csr(1, 1, rp, ci, v), *bad = csr(1, 1, rp, bad_ci, v);
    spgemm_plan_t *plan = NULL;
    int32_t crow[2];
    int32_t ccol[1];
    double cval[1];
    spgemm_status_t s;
    CHECK_OK(h, spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crow, &plan));
    capture_begin();
    s = spgemm_numeric(h, plan, a, bad, ccol, cval); /* invalid input, validation off: any status */
    CHECK(capture_end() == 0);                      /* F2: nothing on stderr */
    fprintf(stderr, "  F1(a): numeric with B's columns {0,1,0} returned %d (%s)\n", (int)s, spgemm_status_string(s));
    spgemm_plan_destroy(plan);
    product_is(h, a, b, 1, 1, crp, cci, cv, "F1(a): A*B after the invalid numeric (KKDENSE)");
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
    issue_c_product(h, "F1(a)+(c): the issue's product with AUTO after the invalid numeric");
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    spgemm_matrix_destroy(bad);
    spgemm_destroy(h);
}

/* F1 (b): validation off, 1 thread, KKDENSE: symbolic of A 2x2 (rows {1,1,0}, {}) times B 2x3
   (rows {-1}, {0,0}) (negative index: any status); then (c) must still be right. */
static void test_f1_issue_b(void) {
    static const int32_t arp[3] = {0, 3, 3}, aci[3] = {1, 1, 0}, brp[3] = {0, 1, 3}, bci[3] = {-1, 0, 0};
    static const double av[3] = {1, 1, 1}, bv[3] = {1, 1, 1};
    spgemm_handle_t *h = handle(0, 1, SPGEMM_ALG_KKDENSE);
    spgemm_matrix_t *a = csr(2, 2, arp, aci, av), *b = csr(2, 3, brp, bci, bv);
    spgemm_plan_t *plan = NULL;
    int32_t crow[3];
    spgemm_status_t s;
    capture_begin();
    s = spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crow, &plan);
    CHECK(capture_end() == 0); /* F2 */
    fprintf(stderr, "  F1(b): symbolic with B's column -1 returned %d (%s)\n", (int)s, spgemm_status_string(s));
    spgemm_plan_destroy(plan);
    issue_c_product(h, "F1(b)+(c): KKDENSE product after the invalid symbolic");
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
    issue_c_product(h, "F1(b)+(c): AUTO product after the invalid symbolic");
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    spgemm_destroy(h);
}

/* F1 with AUTO and 3 threads (found by the fuzzer): a negative column index in B makes
   symbolic fail with INTERNAL; the next symbolic of valid inputs on the handle is wrong. */
static void test_f1_auto_threads(void) {
    static const int32_t arp[3] = {0, 2, 3}, aci[3] = {0, 1, 1}, brp[3] = {0, 2, 3}, bci[3] = {1, -1, 0},
                         good_bci[3] = {1, 0, 0};
    static const double av[3] = {1, 2, 3}, bv[3] = {1, 1, 1};
    static const int64_t crp[3] = {0, 2, 3}, cci[3] = {0, 1, 0};
    static const double cv[3] = {3, 1, 3};
    spgemm_handle_t *h = handle(0, 3, SPGEMM_ALG_AUTO);
    spgemm_matrix_t *a = csr(2, 2, arp, aci, av), *b = csr(2, 2, brp, bci, bv), *good = csr(2, 2, brp, good_bci, bv);
    spgemm_plan_t *plan = NULL;
    int32_t crow[3];
    spgemm_status_t s;
    capture_begin();
    s = spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crow, &plan);
    CHECK(capture_end() == 0); /* F2 */
    fprintf(stderr, "  F1(auto): symbolic with B's column -1 returned %d (%s)\n", (int)s, spgemm_status_string(s));
    spgemm_plan_destroy(plan);
    product_is(h, a, good, 2, 3, crp, cci, cv, "F1(auto, 3 threads): valid product after the invalid symbolic");
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    spgemm_matrix_destroy(good);
    spgemm_destroy(h);
}

/* F3: k = 0, row-major, ldx = ldy = 0 satisfies "ld >= k"; k = 0 does nothing. */
static void test_f3_spmm_k0(void) {
    static const int32_t rp[3] = {0, 1, 2}, ci[2] = {0, 1};
    static const double v[2] = {1, 2};
    double x[1] = {0}, y[1] = {0};
    spgemm_handle_t *h = handle(1, 1, SPGEMM_ALG_AUTO);
    spgemm_matrix_t *a = csr(2, 2, rp, ci, v);
    CHECK_OK(h, spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, 1.0, a, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 0, x, 0, 0.0, y, 0));
    spgemm_matrix_destroy(a);
    spgemm_destroy(h);
}

/* F4: SpMM needs values; a pattern-only A is INVALID_VALUE even when Y is empty (m = 0). */
static void test_f4_spmm_pattern_empty(void) {
    static const int32_t rp[1] = {0};
    double x[2] = {1, 1}, y[1] = {0};
    spgemm_handle_t *h = handle(1, 1, SPGEMM_ALG_AUTO);
    spgemm_matrix_t *a = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&a, 0, 2, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT32, NULL,
                                            SPGEMM_VALUE_FLOAT64, NULL, SPGEMM_INDEX_BASE_ZERO));
    CHECK_STATUS(h, spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, 1.0, a, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1, 0.0, y, 1),
                 SPGEMM_STATUS_INVALID_VALUE);
    spgemm_matrix_destroy(a);
    spgemm_destroy(h);
}

/* Threads of this process (/proc/self/task entries). */
static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* F6: a handle of 1 thread runs its products on that one worker: a symbolic call starts
   no other thread (run first: the global pool, once started, stays). */
static void test_f6_no_global_pool(void) {
    static const int32_t rp[3] = {0, 1, 2}, ci[2] = {1, 0};
    static const double v[2] = {1, 2};
    spgemm_handle_t *h = handle(1, 1, SPGEMM_ALG_AUTO);
    spgemm_matrix_t *a = csr(2, 2, rp, ci, v);
    spgemm_plan_t *plan = NULL;
    int32_t crow[3];
    int with_handle = thread_count(), after;
    CHECK_OK(h, spgemm_symbolic(h, a, a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crow, &plan));
    after = thread_count();
    if (!CHECK(after == with_handle))
        fprintf(stderr, "  F6: %d threads with a 1-thread handle, %d after one symbolic call\n", with_handle, after);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    spgemm_destroy(h);
}

/* F7: numeric into fresh (uninitialised) C arrays after three calls into the same arrays. */
static void test_f7_fresh_arrays_after_reuse(void) {
    enum { M = 64 };
    int32_t rp[M + 1], ci[3 * M], crow[M + 1], *cc, *cc2;
    double v[3 * M], *cv, *cv2;
    int64_t nnz = 0, q;
    int i, j, p = 0, r, same = 1;
    spgemm_handle_t *h = handle(1, 1, SPGEMM_ALG_AUTO);
    spgemm_matrix_t *a;
    spgemm_plan_t *plan = NULL;
    for (i = 0; i <= M; i++) {
        rp[i] = p;
        for (j = 0; i < M && j < 3; j++, p++) {
            ci[p] = (i * 7 + j * 5) % M;
            v[p] = 1 + j;
        }
    }
    a = csr(M, M, rp, ci, v);
    CHECK_OK(h, spgemm_symbolic(h, a, a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crow, &plan));
    CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
    cc = (int32_t *)malloc((size_t)nnz * sizeof *cc);
    cv = (double *)malloc((size_t)nnz * sizeof *cv);
    cc2 = (int32_t *)malloc((size_t)nnz * sizeof *cc2); /* left uninitialised, as callers do */
    cv2 = (double *)malloc((size_t)nnz * sizeof *cv2);
    for (r = 0; r < 3; r++) CHECK_OK(h, spgemm_numeric(h, plan, a, a, cc, cv));
    CHECK_OK(h, spgemm_numeric(h, plan, a, a, cc2, cv2));
    for (q = 0; q < nnz; q++) same &= cc[q] == cc2[q] && cv[q] == cv2[q];
    CHECK(same);
    free(cc);
    free(cv);
    free(cc2);
    free(cv2);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    spgemm_destroy(h);
}

/* F8: a changed structure whose digest used to collide with the plan's is PLAN_MISMATCH. */
static void test_f8_digest_collision(void) {
    int32_t rp[2] = {0, 3}, ci[3] = {0, 0, 0}, crow[2], cc[1];
    double v[3] = {1.5, 8, 0}, cv[1];
    spgemm_handle_t *h = handle(1, 3, SPGEMM_ALG_KKMEM);
    spgemm_matrix_t *a = csr(1, 1, rp, ci, v);
    spgemm_plan_t *plan = NULL;
    CHECK_OK(h, spgemm_symbolic(h, a, a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crow, &plan));
    ci[0] = 1;
    ci[2] = 1;
    CHECK_STATUS(h, spgemm_numeric(h, plan, a, a, cc, cv), SPGEMM_STATUS_PLAN_MISMATCH);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    spgemm_destroy(h);
}

/* F9: plan made with validation off (KKLP, unsorted), A's column moved so that row 0 of C
   grows from 1 to 16 entries, then validation on: PLAN_MISMATCH naming the row (also with
   validation off now), and the plan still right with the planned A. */
static void test_f9_plan_without_digests_row_grows(void) {
    int32_t arp[3] = {0, 1, 1}, aci[1] = {0}, brp[3] = {0, 1, 17}, bci[17], crow[3], cc[1];
    double av[1] = {2}, bv[17], cv[1];
    int i;
    spgemm_handle_t *h = handle(0, 1, SPGEMM_ALG_KKLP);
    spgemm_matrix_t *a, *b;
    spgemm_plan_t *plan = NULL;
    spgemm_status_t s;
    bci[0] = 3;
    for (i = 1; i < 17; i++) bci[i] = i - 1;
    for (i = 0; i < 17; i++) bv[i] = i + 1;
    a = csr(2, 2, arp, aci, av);
    b = csr(2, 16, brp, bci, bv);
    CHECK_OK(h, spgemm_set_sorted_output(h, 0));
    CHECK_OK(h, spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crow, &plan));
    CHECK_OK(h, spgemm_numeric(h, plan, a, b, cc, cv));
    CHECK(crow[1] == 1 && cc[0] == 3 && cv[0] == 2);
    aci[0] = 1; /* legal: row 0 of A now reads B's row of 16 columns */
    CHECK_OK(h, spgemm_set_validation(h, 1));
    capture_begin();
    s = spgemm_numeric(h, plan, a, b, cc, cv);
    CHECK(capture_end() == 0);
    CHECK_ERR(h, s, SPGEMM_STATUS_PLAN_MISMATCH, WORDS("row", "0", "plan"));
    CHECK_OK(h, spgemm_set_validation(h, 0));
    s = spgemm_numeric(h, plan, a, b, cc, cv);
    if (!CHECK(s != SPGEMM_STATUS_INTERNAL)) fprintf(stderr, "  F9: validation off: %s\n", spgemm_last_error(h));
    aci[0] = 0;
    CHECK_OK(h, spgemm_set_validation(h, 1));
    CHECK_OK(h, spgemm_numeric(h, plan, a, b, cc, cv));
    CHECK(cc[0] == 3 && cv[0] == 2);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    spgemm_destroy(h);
}

/* F9 with op(A) = A^T: A's two entries swap rows (C's row lengths stay 1 and 1), which the
   plan's transpose of the old A hid: PLAN_MISMATCH naming A, then the planned A is right. */
static void test_f9_plan_without_digests_transpose(void) {
    int32_t arp[3] = {0, 1, 2}, aci[2] = {0, 1}, brp[3] = {0, 1, 2}, bci[2] = {0, 1}, crow[3], cc[2];
    double av[2] = {2, 3}, bv[2] = {5, 7}, cv[2];
    spgemm_handle_t *h = handle(0, 2, SPGEMM_ALG_AUTO);
    spgemm_matrix_t *a = csr(2, 2, arp, aci, av), *b = csr(2, 2, brp, bci, bv);
    spgemm_plan_t *plan = NULL;
    CHECK_OK(h, spgemm_symbolic_op(h, SPGEMM_OPERATION_TRANSPOSE, a, SPGEMM_OPERATION_NON_TRANSPOSE, b,
                                   SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crow, &plan));
    aci[0] = 1; /* legal: A = {(0,1) 2, (1,0) 3}, so C = A^T B = {(0,1) 21, (1,0) 10} */
    aci[1] = 0;
    CHECK_OK(h, spgemm_set_validation(h, 1));
    CHECK_ERR(h, spgemm_numeric(h, plan, a, b, cc, cv), SPGEMM_STATUS_PLAN_MISMATCH, WORDS("A", "structure"));
    aci[0] = 0;
    aci[1] = 1;
    CHECK_OK(h, spgemm_numeric(h, plan, a, b, cc, cv));
    CHECK(crow[1] == 1 && crow[2] == 2 && cc[0] == 0 && cv[0] == 10 && cc[1] == 1 && cv[1] == 21);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    spgemm_destroy(h);
}

/* F5: when spgemm_destroy returns, the handle's worker threads are gone. */
static void test_f5_destroy_joins_workers(void) {
    int i, alive = 0, before = thread_count();
    for (i = 0; i < 10 && before > 0; i++) {
        spgemm_handle_t *h = NULL;
        CHECK_OK(NULL, spgemm_create(&h));
        CHECK_OK(h, spgemm_set_num_threads(h, 3));
        CHECK_OK(NULL, spgemm_destroy(h));
        alive += thread_count() > before;
        while (thread_count() > before) usleep(1000); /* let them go before the next round */
    }
    if (!CHECK(alive == 0)) fprintf(stderr, "  F5: %d of 10 spgemm_destroy calls returned with workers running\n", alive);
}

int main(void) {
    test_f6_no_global_pool();
    test_f1_issue_a();
    test_f1_issue_b();
    test_f1_auto_threads();
    test_f3_spmm_k0();
    test_f4_spmm_pattern_empty();
    test_f5_destroy_joins_workers();
    test_f7_fresh_arrays_after_reuse();
    test_f8_digest_collision();
    test_f9_plan_without_digests_row_grows();
    test_f9_plan_without_digests_transpose();
    return check_report();
}

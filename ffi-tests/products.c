/*
 * Correct products through the C ABI, as C, Fortran-style and Tpetra-style callers make
 * them: every storage format, pattern-only inputs, degenerate shapes, unsorted rows with
 * repeated columns, cancellation, NaN/Inf, unsorted output, value reuse, the one-call
 * multiply, plan queries, every algorithm, and bitwise determinism across thread counts.
 * Every product is checked against a naive reference computed here.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "spgemm.h"
#include "testlib.h"

static const spgemm_algorithm_t ALGS[] = {SPGEMM_ALG_AUTO, SPGEMM_ALG_KKDENSE, SPGEMM_ALG_KKLP,
                                            SPGEMM_ALG_KKMEM};
#define NALGS 4

/* A 3x4 times 4x2 product with small integers, checked against literal expected arrays. */
static void test_literal_int32(spgemm_handle_t *h) {
    /* A = [1 0 2 0; 0 0 0 0; 0 3 0 4], B = [1 2; 0 1; 5 0; 0 -1] */
    const int32_t arp[] = {0, 2, 2, 4}, aci[] = {0, 2, 1, 3};
    const double av[] = {1, 2, 3, 4};
    const int32_t brp[] = {0, 2, 3, 4, 5}, bci[] = {0, 1, 1, 0, 1};
    const double bv[] = {1, 2, 1, 5, -1};
    /* C = [11 2; 0 0; 0 -1] with C(2,1) = 3*1 + 4*(-1) */
    const int32_t want_rp[] = {0, 2, 2, 3}, want_ci[] = {0, 1, 1};
    const double want_v[] = {11, 2, -1};
    int32_t crp[4] = {-7, -7, -7, -7}, cci[3] = {-7, -7, -7};
    double cv[3] = {0, 0, 0};
    spgemm_matrix_t *A = NULL, *B = NULL;
    spgemm_plan_t *plan = NULL;
    int64_t nnz = -1;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&A, 3, 4, SPGEMM_INDEX_INT32, arp, SPGEMM_INDEX_INT32,
                                            aci, SPGEMM_VALUE_FLOAT64, av,
                                            SPGEMM_INDEX_BASE_ZERO));
    CHECK_OK(NULL, spgemm_matrix_create_csr(&B, 4, 2, SPGEMM_INDEX_INT32, brp, SPGEMM_INDEX_INT32,
                                            bci, SPGEMM_VALUE_FLOAT64, bv,
                                            SPGEMM_INDEX_BASE_ZERO));
    CHECK_OK(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                SPGEMM_INDEX_BASE_ZERO, crp, &plan));
    CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
    CHECK(nnz == 3);
    CHECK(memcmp(crp, want_rp, sizeof want_rp) == 0);
    CHECK_OK(h, spgemm_numeric(h, plan, A, B, cci, cv));
    CHECK(memcmp(cci, want_ci, sizeof want_ci) == 0);
    CHECK(cv[0] == want_v[0] && cv[1] == want_v[1] && cv[2] == want_v[2]);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
}

/*
 * Every storage format: offsets {int32, int64, size_t} x indices {int32, int64} x values
 * {float, double} x bases of A and B x every C format, on a random rectangular product with
 * empty rows, unsorted rows and repeated columns. The named caller styles are among them:
 * 0-based int32 (C), 1-based int64 offsets and indices (Fortran), size_t offsets with int32
 * indices (Tpetra).
 */
static void test_all_formats(spgemm_handle_t *h) {
    const spgemm_index_type_t offs[] = {SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64,
                                        SPGEMM_INDEX_SIZE_T};
    const spgemm_index_type_t idxs[] = {SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64};
    const spgemm_value_type_t vals[] = {SPGEMM_VALUE_FLOAT32, SPGEMM_VALUE_FLOAT64};
    int oi, ii, vi, ab, bb, coi, cii, cb;
    int combos = 0, failures = 0;
    for (vi = 0; vi < 2; vi++) {
        int in_float = vals[vi] == SPGEMM_VALUE_FLOAT32;
        ref_csr a = ref_random(23, 17, 6, 11 + (uint64_t)vi, GEN_DUPS);
        ref_csr b = ref_random(17, 29, 5, 12 + (uint64_t)vi, GEN_DUPS);
        ref_csr c;
        if (in_float) {
            ref_round_to_float(&a);
            ref_round_to_float(&b);
        }
        c = ref_product(&a, &b, in_float);
        for (oi = 0; oi < 3; oi++)
            for (ii = 0; ii < 2; ii++)
                for (ab = 0; ab < 2; ab++)
                    for (bb = 0; bb < 2; bb++) {
                        typed_csr ta = typed_from_ref(&a, offs[oi], idxs[ii], vals[vi], ab, 1);
                        typed_csr tb = typed_from_ref(&b, offs[oi], idxs[ii], vals[vi], bb, 1);
                        spgemm_matrix_t *A = NULL, *B = NULL;
                        CHECK_OK(NULL, typed_create(&A, &ta));
                        CHECK_OK(NULL, typed_create(&B, &tb));
                        for (coi = 0; coi < 3; coi++)
                            for (cii = 0; cii < 2; cii++)
                                for (cb = 0; cb < 2; cb++) {
                                    typed_csr tc;
                                    char what[160];
                                    snprintf(what, sizeof what,
                                             "formats off=%d idx=%d val=%d base=%d/%d -> "
                                             "C off=%d idx=%d base=%d",
                                             offs[oi], idxs[ii], vals[vi], ab, bb, offs[coi],
                                             idxs[cii], cb);
                                    combos++;
                                    if (!CHECK_OK(h, two_phase(h, A, B, a.m, b.n, vals[vi],
                                                               offs[coi], idxs[cii], cb, 0,
                                                               &tc))) {
                                        failures++;
                                        continue;
                                    }
                                    if (!CHECK(compare_typed(what, &c, &tc, CMP_TOL)))
                                        failures++;
                                    /* the header promises the documented summation order */
                                    if (!CHECK(compare_typed(what, &c, &tc, CMP_EXACT)))
                                        failures++;
                                    typed_free(&tc);
                                }
                        spgemm_matrix_destroy(A);
                        spgemm_matrix_destroy(B);
                        typed_free(&ta);
                        typed_free(&tb);
                    }
        ref_free(&a);
        ref_free(&b);
        ref_free(&c);
    }
    printf("  formats: %d format combinations, %d failures\n", combos, failures);
}

/* Pattern-only inputs (values NULL): numeric_structure gives C's structure, and the
 * one-call multiply gives a pattern-only C. Valued inputs work with numeric_structure too. */
static void test_pattern_only(spgemm_handle_t *h) {
    ref_csr a = ref_random(40, 31, 7, 21, GEN_DUPS);
    ref_csr b = ref_random(31, 45, 7, 22, GEN_DUPS);
    ref_csr c = ref_product(&a, &b, 0);
    typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 0);
    typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 0);
    typed_csr tav = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                   SPGEMM_VALUE_FLOAT64, 0, 1);
    spgemm_matrix_t *A = NULL, *B = NULL, *Av = NULL, *C = NULL;
    typed_csr tc;
    int a_idx;
    CHECK(ta.v == NULL);
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&B, &tb));
    CHECK_OK(NULL, typed_create(&Av, &tav));
    for (a_idx = 0; a_idx < NALGS; a_idx++) {
        CHECK_OK(h, spgemm_set_algorithm(h, ALGS[a_idx]));
        if (CHECK_OK(h, two_phase(h, A, B, a.m, b.n, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                  SPGEMM_INDEX_INT32, 0, 1, &tc))) {
            CHECK(tc.v == NULL);
            CHECK(compare_typed("pattern-only", &c, &tc, CMP_PATTERN));
            typed_free(&tc);
        }
        /* values of A present, B pattern-only: structure-only product still works */
        if (CHECK_OK(h, two_phase(h, Av, B, a.m, b.n, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT64,
                                  SPGEMM_INDEX_INT64, 1, 1, &tc))) {
            CHECK(compare_typed("pattern-only, A valued", &c, &tc, CMP_PATTERN));
            typed_free(&tc);
        }
    }
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
    /* one-call multiply of pattern-only inputs: C is pattern-only */
    if (CHECK_OK(h, spgemm_multiply(h, A, B, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, 0, &C))) {
        const void *rp = NULL, *ci = NULL, *v = (const void *)&a;
        int64_t nnz = -1;
        CHECK_OK(NULL, spgemm_matrix_get_info(C, NULL, NULL, &nnz, NULL, NULL, NULL, NULL));
        CHECK(nnz == c.nnz);
        CHECK_OK(NULL, spgemm_matrix_export_csr(C, &rp, &ci, &v));
        CHECK(v == NULL);
        CHECK(compare_c("multiply pattern-only", &c, SPGEMM_INDEX_INT64, rp, SPGEMM_INDEX_INT32,
                        ci, SPGEMM_VALUE_FLOAT64, NULL, 0, CMP_PATTERN));
    }
    spgemm_matrix_destroy(C);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    spgemm_matrix_destroy(Av);
    typed_free(&ta);
    typed_free(&tb);
    typed_free(&tav);
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/* One product of the given shape through two_phase and multiply, every algorithm. */
static void check_shape(spgemm_handle_t *h, int64_t m, int64_t n, int64_t k, int64_t max_row,
                        uint64_t seed) {
    ref_csr a = ref_random(m, n, max_row, seed, GEN_DUPS);
    ref_csr b = ref_random(n, k, max_row, seed + 1, GEN_DUPS);
    ref_csr c = ref_product(&a, &b, 0);
    typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    spgemm_matrix_t *A = NULL, *B = NULL;
    char what[96];
    int ai;
    snprintf(what, sizeof what, "shape %lld x %lld x %lld", (long long)m, (long long)n,
             (long long)k);
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&B, &tb));
    for (ai = 0; ai < NALGS; ai++) {
        typed_csr tc;
        spgemm_matrix_t *C = NULL;
        CHECK_OK(h, spgemm_set_algorithm(h, ALGS[ai]));
        if (CHECK_OK(h, two_phase(h, A, B, m, k, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                  SPGEMM_INDEX_INT32, 0, 0, &tc))) {
            CHECK(compare_typed(what, &c, &tc, CMP_EXACT));
            typed_free(&tc);
        }
        if (CHECK_OK(h, spgemm_multiply(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64, 1, &C))) {
            int64_t cm = -1, ck = -1, cnnz = -1;
            const void *rp = NULL, *ci = NULL, *v = NULL;
            CHECK_OK(NULL, spgemm_matrix_get_info(C, &cm, &ck, &cnnz, NULL, NULL, NULL, NULL));
            CHECK(cm == m && ck == k && cnnz == c.nnz);
            CHECK_OK(NULL, spgemm_matrix_export_csr(C, &rp, &ci, &v));
            CHECK(compare_c(what, &c, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT64, ci,
                            SPGEMM_VALUE_FLOAT64, v, 1, CMP_EXACT));
        }
        spgemm_matrix_destroy(C);
    }
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    typed_free(&ta);
    typed_free(&tb);
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/* Rectangular, empty rows, 0 x n, n x 0, empty inner dimension, 0 x 0. */
static void test_shapes(spgemm_handle_t *h) {
    check_shape(h, 50, 7, 90, 4, 31);  /* wide C */
    check_shape(h, 90, 60, 3, 5, 33);  /* tall, narrow C */
    check_shape(h, 0, 5, 6, 3, 35);    /* A is 0 x 5 */
    check_shape(h, 6, 5, 0, 3, 37);    /* B is 5 x 0 */
    check_shape(h, 6, 0, 4, 3, 39);    /* A is 6 x 0, B is 0 x 4: C is 6 x 4, empty */
    check_shape(h, 0, 0, 0, 3, 41);    /* all empty */
    check_shape(h, 1, 1, 1, 1, 43);    /* 1 x 1 */
    check_shape(h, 40, 40, 40, 0, 45); /* all rows empty */
}

/* Unsorted rows with repeated columns: repeats are summed, explicitly checked. */
static void test_duplicates(spgemm_handle_t *h) {
    /* A = row 0: (2: 1.5), (0: 2), (2: 0.25)  -> A(0,0)=2, A(0,2)=1.75
     *     row 1: (1: 1), (1: 1), (1: 1)      -> A(1,1)=3 */
    const int32_t arp[] = {0, 3, 6}, aci[] = {2, 0, 2, 1, 1, 1};
    const double av[] = {1.5, 2, 0.25, 1, 1, 1};
    /* B = I (3x3) with B(2,2) stored as 0.5 + 0.5, row 2 unsorted with an extra col 0 */
    const int32_t brp[] = {0, 1, 2, 5}, bci[] = {0, 1, 2, 0, 2};
    const double bv[] = {1, 1, 0.5, 4, 0.5};
    /* C row 0 = 2*e0 + 1.5*(4 e0 + e2) + 0.25*(4 e0 + e2) = (2+6+1) e0 + 1.75 e2
     * C row 1 = 3*e1 */
    const int32_t want_rp[] = {0, 2, 3}, want_ci[] = {0, 2, 1};
    const double want_v[] = {9, 1.75, 3};
    spgemm_matrix_t *A = NULL, *B = NULL;
    int ai;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&A, 2, 3, SPGEMM_INDEX_INT32, arp, SPGEMM_INDEX_INT32,
                                            aci, SPGEMM_VALUE_FLOAT64, av, 0));
    CHECK_OK(NULL, spgemm_matrix_create_csr(&B, 3, 3, SPGEMM_INDEX_INT32, brp, SPGEMM_INDEX_INT32,
                                            bci, SPGEMM_VALUE_FLOAT64, bv, 0));
    for (ai = 0; ai < NALGS; ai++) {
        typed_csr tc;
        CHECK_OK(h, spgemm_set_algorithm(h, ALGS[ai]));
        if (CHECK_OK(h, two_phase(h, A, B, 2, 3, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                  SPGEMM_INDEX_INT32, 0, 0, &tc))) {
            CHECK(tc.nnz == 3);
            CHECK(memcmp(tc.rp, want_rp, sizeof want_rp) == 0);
            CHECK(tc.nnz == 3 && memcmp(tc.ci, want_ci, sizeof want_ci) == 0);
            CHECK(tc.nnz == 3 && memcmp(tc.v, want_v, sizeof want_v) == 0);
            typed_free(&tc);
        }
    }
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    /* and a random sweep with heavy repetition, sorted and unsorted */
    check_shape(h, 70, 30, 50, 20, 51);
}

/* Entries that cancel stay in C with value 0.0 (nnz counts them). */
static void test_cancellation(spgemm_handle_t *h) {
    /* A = [1 1; 2 0], B = [1 3; -1 5]: C = [0 8; 2 6], C(0,0) = 1 - 1 cancels */
    const int64_t arp[] = {1, 3, 4}, aci[] = {1, 2, 1};
    const double av[] = {1, 1, 2};
    const int64_t brp[] = {1, 3, 5}, bci[] = {1, 2, 1, 2};
    const double bv[] = {1, 3, -1, 5};
    const int64_t want_rp[] = {1, 3, 5}, want_ci[] = {1, 2, 1, 2};
    const double want_v[] = {0, 8, 2, 6};
    spgemm_matrix_t *A = NULL, *B = NULL;
    typed_csr tc;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&A, 2, 2, SPGEMM_INDEX_INT64, arp, SPGEMM_INDEX_INT64,
                                            aci, SPGEMM_VALUE_FLOAT64, av, 1));
    CHECK_OK(NULL, spgemm_matrix_create_csr(&B, 2, 2, SPGEMM_INDEX_INT64, brp, SPGEMM_INDEX_INT64,
                                            bci, SPGEMM_VALUE_FLOAT64, bv, 1));
    if (CHECK_OK(h, two_phase(h, A, B, 2, 2, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT64,
                              SPGEMM_INDEX_INT64, 1, 0, &tc))) {
        CHECK(tc.nnz == 4);
        CHECK(memcmp(tc.rp, want_rp, sizeof want_rp) == 0);
        CHECK(tc.nnz == 4 && memcmp(tc.ci, want_ci, sizeof want_ci) == 0);
        CHECK(tc.nnz == 4 && memcmp(tc.v, want_v, sizeof want_v) == 0);
        typed_free(&tc);
    }
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
}

/* NaN and Inf propagate to exactly the entries they touch (Inf * 0 = NaN). */
static void test_nan_inf(spgemm_handle_t *h) {
    /* A = [NaN 0 1; 0 Inf 1], B = [1 0; 0 0(stored); 0 2] */
    double dense_a[] = {1, 0, 1, 0, 1, 1};
    double dense_b[] = {1, 0, 1, 0, 0, 2};
    ref_csr a = ref_from_dense(2, 3, dense_a);
    ref_csr b = ref_from_dense(3, 2, dense_b);
    ref_csr c;
    typed_csr ta, tb, tc;
    spgemm_matrix_t *A = NULL, *B = NULL;
    int ai;
    a.v[0] = NAN;      /* A(0,0) */
    a.v[2] = INFINITY; /* A(1,1) */
    b.v[1] = 0.0;      /* B(1,0) stored zero: Inf * 0 = NaN in C(1,0) */
    c = ref_product(&a, &b, 0);
    /* C = [NaN 2; NaN 2]: row 0 col 0 NaN (NaN*1), col 1 finite; row 1 col 0 NaN */
    CHECK(c.nnz == 4 && isnan(c.v[0]) && c.v[1] == 2.0 && isnan(c.v[2]) && c.v[3] == 2.0);
    ta = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64, 0, 1);
    tb = typed_from_ref(&b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64, 0, 1);
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&B, &tb));
    for (ai = 0; ai < NALGS; ai++) {
        CHECK_OK(h, spgemm_set_algorithm(h, ALGS[ai]));
        if (CHECK_OK(h, two_phase(h, A, B, 2, 2, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                  SPGEMM_INDEX_INT32, 0, 0, &tc))) {
            CHECK(compare_typed("nan/inf", &c, &tc, CMP_TOL));
            CHECK(tc.nnz == 4 && isnan(((double *)tc.v)[0]) && ((double *)tc.v)[1] == 2.0);
            typed_free(&tc);
        }
    }
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    typed_free(&ta);
    typed_free(&tb);
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/* Unsorted output (spgemm_set_sorted_output(h, 0)): rows are the right sets of columns
 * with the right values; sorted output has strictly increasing rows. */
static void test_sorted_vs_unsorted(spgemm_handle_t *h) {
    ref_csr a = ref_random(120, 200, 12, 61, GEN_DUPS);
    ref_csr b = ref_random(200, 300, 12, 62, GEN_DUPS);
    ref_csr c = ref_product(&a, &b, 0);
    typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    spgemm_matrix_t *A = NULL, *B = NULL;
    int32_t sorted = -1;
    int ai, s;
    CHECK_OK(h, spgemm_get_sorted_output(h, &sorted));
    CHECK(sorted == 1);
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&B, &tb));
    for (s = 0; s < 2; s++) {
        CHECK_OK(h, spgemm_set_sorted_output(h, s));
        CHECK_OK(h, spgemm_get_sorted_output(h, &sorted));
        CHECK(sorted == s);
        for (ai = 0; ai < NALGS; ai++) {
            typed_csr tc;
            spgemm_matrix_t *C = NULL;
            int mode = s ? CMP_EXACT : (CMP_EXACT | CMP_UNSORTED);
            CHECK_OK(h, spgemm_set_algorithm(h, ALGS[ai]));
            if (CHECK_OK(h, two_phase(h, A, B, a.m, b.n, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                      SPGEMM_INDEX_INT32, 0, 0, &tc))) {
                CHECK(compare_typed(s ? "sorted" : "unsorted", &c, &tc, mode));
                typed_free(&tc);
            }
            if (CHECK_OK(h, two_phase(h, A, B, a.m, b.n, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                      SPGEMM_INDEX_INT32, 0, 1, &tc))) {
                CHECK(compare_typed(s ? "sorted structure" : "unsorted structure", &c, &tc,
                                    CMP_PATTERN | (s ? 0 : CMP_UNSORTED)));
                typed_free(&tc);
            }
            if (CHECK_OK(h, spgemm_multiply(h, A, B, SPGEMM_INDEX_SIZE_T, SPGEMM_INDEX_INT64, 0,
                                            &C))) {
                const void *rp = NULL, *ci = NULL, *v = NULL;
                CHECK_OK(NULL, spgemm_matrix_export_csr(C, &rp, &ci, &v));
                CHECK(compare_c(s ? "sorted multiply" : "unsorted multiply", &c,
                                SPGEMM_INDEX_SIZE_T, rp, SPGEMM_INDEX_INT64, ci,
                                SPGEMM_VALUE_FLOAT64, v, 0, mode));
            }
            spgemm_matrix_destroy(C);
        }
    }
    CHECK_OK(h, spgemm_set_sorted_output(h, 7)); /* any non-zero means sorted */
    CHECK_OK(h, spgemm_get_sorted_output(h, &sorted));
    CHECK(sorted == 1);
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    typed_free(&ta);
    typed_free(&tb);
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/* Reuse: numeric again after changing A's and B's values in place gives the new product;
 * new descriptors with the same structure and other value arrays work with the plan too. */
static void test_reuse(spgemm_handle_t *h) {
    ref_csr a = ref_random(80, 60, 9, 71, GEN_DUPS);
    ref_csr b = ref_random(60, 70, 9, 72, GEN_DUPS);
    ref_csr c = ref_product(&a, &b, 0);
    typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    spgemm_matrix_t *A = NULL, *B = NULL, *A2 = NULL;
    spgemm_plan_t *plan = NULL;
    int32_t *crp = (int32_t *)xmalloc(((size_t)a.m + 1) * sizeof(int32_t));
    int32_t *cci = NULL;
    double *cv = NULL;
    double *a2v = (double *)xmalloc((size_t)a.nnz * sizeof(double));
    int64_t nnz = -1, p;
    int round;
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&B, &tb));
    if (!CHECK_OK(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crp,
                                     &plan)))
        goto done;
    CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
    CHECK(nnz == c.nnz);
    cci = (int32_t *)xmalloc((size_t)nnz * sizeof(int32_t));
    cv = (double *)xmalloc((size_t)nnz * sizeof(double));
    for (round = 0; round < 4; round++) {
        rng_t r = rng_seed(700 + (uint64_t)round);
        if (round > 0) { /* new values for A (rounds 1, 3) and/or B (rounds 2, 3) */
            if (round != 2)
                for (p = 0; p < a.nnz; p++) a.v[p] = rng_value(&r);
            if (round != 1)
                for (p = 0; p < b.nnz; p++) b.v[p] = rng_value(&r);
            for (p = 0; p < a.nnz; p++) ((double *)ta.v)[p] = a.v[p];
            for (p = 0; p < b.nnz; p++) ((double *)tb.v)[p] = b.v[p];
            ref_free(&c);
            c = ref_product(&a, &b, 0);
        }
        memset(cv, 0xff, (size_t)nnz * sizeof(double));
        if (CHECK_OK(h, spgemm_numeric(h, plan, A, B, cci, cv))) {
            CHECK(compare_c("reuse", &c, SPGEMM_INDEX_INT32, crp, SPGEMM_INDEX_INT32, cci,
                            SPGEMM_VALUE_FLOAT64, cv, 0, CMP_EXACT));
        }
    }
    /* a second descriptor, same structure arrays, different value array */
    for (p = 0; p < a.nnz; p++) a2v[p] = a.v[p] = 2.0 * a.v[p] + 1.0;
    ref_free(&c);
    c = ref_product(&a, &b, 0);
    CHECK_OK(NULL, spgemm_matrix_create_csr(&A2, a.m, a.n, SPGEMM_INDEX_INT32, ta.rp,
                                            SPGEMM_INDEX_INT32, ta.ci, SPGEMM_VALUE_FLOAT64, a2v,
                                            0));
    if (CHECK_OK(h, spgemm_numeric(h, plan, A2, B, cci, cv))) {
        CHECK(compare_c("reuse, new descriptor", &c, SPGEMM_INDEX_INT32, crp, SPGEMM_INDEX_INT32,
                        cci, SPGEMM_VALUE_FLOAT64, cv, 0, CMP_EXACT));
    }
    /* the same plan on another handle (plans are not tied to a handle's threads) */
    {
        spgemm_handle_t *h2 = NULL;
        CHECK_OK(NULL, spgemm_create(&h2));
        CHECK_OK(h2, spgemm_set_num_threads(h2, 1));
        memset(cv, 0, (size_t)nnz * sizeof(double));
        if (CHECK_OK(h2, spgemm_numeric(h2, plan, A2, B, cci, cv))) {
            CHECK(compare_c("reuse, other handle", &c, SPGEMM_INDEX_INT32, crp,
                            SPGEMM_INDEX_INT32, cci, SPGEMM_VALUE_FLOAT64, cv, 0, CMP_EXACT));
        }
        spgemm_destroy(h2);
    }
done:
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(A2);
    spgemm_matrix_destroy(B);
    free(crp);
    free(cci);
    free(cv);
    free(a2v);
    typed_free(&ta);
    typed_free(&tb);
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/* spgemm_multiply + get_info + export_csr, and get_info/export on caller descriptors. */
static void test_multiply_info_export(spgemm_handle_t *h) {
    ref_csr a = ref_random(33, 21, 6, 81, GEN_DUPS);
    ref_csr b = ref_random(21, 44, 6, 82, GEN_DUPS);
    ref_csr c = ref_product(&a, &b, 0);
    typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_SIZE_T, SPGEMM_INDEX_INT64,
                                  SPGEMM_VALUE_FLOAT64, 1, 1);
    typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_SIZE_T, SPGEMM_INDEX_INT64,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    spgemm_matrix_t *A = NULL, *B = NULL, *C = NULL;
    int64_t m = -1, n = -1, nnz = -1;
    spgemm_index_type_t ot = -1, it = -1;
    spgemm_value_type_t vt = -1;
    spgemm_index_base_t base = -1;
    const void *rp = NULL, *ci = NULL, *v = NULL;
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&B, &tb));
    /* descriptor: info is what was given, export gives back the caller's pointers */
    CHECK_OK(NULL, spgemm_matrix_get_info(A, &m, &n, &nnz, &ot, &it, &vt, &base));
    CHECK(m == 33 && n == 21 && nnz == a.nnz);
    CHECK(ot == SPGEMM_INDEX_SIZE_T && it == SPGEMM_INDEX_INT64 && vt == SPGEMM_VALUE_FLOAT64);
    CHECK(base == 1);
    CHECK_OK(NULL, spgemm_matrix_export_csr(A, &rp, &ci, &v));
    CHECK(rp == ta.rp && ci == ta.ci && v == ta.v);
    CHECK_OK(NULL, spgemm_matrix_export_csr(A, NULL, NULL, NULL));
    CHECK_OK(NULL, spgemm_matrix_get_info(A, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    /* result of multiply, in each C format */
    {
        const spgemm_index_type_t cots[] = {SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64,
                                            SPGEMM_INDEX_SIZE_T};
        int oi, ii, cb;
        for (oi = 0; oi < 3; oi++)
            for (ii = 0; ii < 2; ii++)
                for (cb = 0; cb < 2; cb++) {
                    C = NULL;
                    if (!CHECK_OK(h, spgemm_multiply(h, A, B, cots[oi], ii, cb, &C))) continue;
                    m = n = nnz = -1;
                    ot = it = vt = base = -1;
                    CHECK_OK(NULL, spgemm_matrix_get_info(C, &m, &n, &nnz, &ot, &it, &vt, &base));
                    CHECK(m == 33 && n == 44 && nnz == c.nnz);
                    CHECK(ot == cots[oi] && it == ii && vt == SPGEMM_VALUE_FLOAT64 && base == cb);
                    rp = ci = v = NULL;
                    CHECK_OK(NULL, spgemm_matrix_export_csr(C, &rp, &ci, &v));
                    CHECK(rp != NULL && v != NULL);
                    CHECK(compare_c("multiply", &c, cots[oi], rp, ii, ci, SPGEMM_VALUE_FLOAT64, v,
                                    cb, CMP_EXACT));
                    spgemm_matrix_destroy(C);
                }
    }
    /* float values through multiply */
    {
        ref_csr a32 = ref_random(25, 30, 6, 83, GEN_DUPS), b32 = ref_random(30, 20, 6, 84, 0);
        ref_csr c32;
        typed_csr tfa, tfb;
        spgemm_matrix_t *FA = NULL, *FB = NULL;
        ref_round_to_float(&a32);
        ref_round_to_float(&b32);
        c32 = ref_product(&a32, &b32, 1);
        tfa = typed_from_ref(&a32, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT32,
                             0, 1);
        tfb = typed_from_ref(&b32, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT32,
                             0, 1);
        CHECK_OK(NULL, typed_create(&FA, &tfa));
        CHECK_OK(NULL, typed_create(&FB, &tfb));
        C = NULL;
        if (CHECK_OK(h, spgemm_multiply(h, FA, FB, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, &C))) {
            CHECK_OK(NULL, spgemm_matrix_get_info(C, NULL, NULL, &nnz, NULL, NULL, &vt, NULL));
            CHECK(vt == SPGEMM_VALUE_FLOAT32 && nnz == c32.nnz);
            CHECK_OK(NULL, spgemm_matrix_export_csr(C, &rp, &ci, &v));
            CHECK(compare_c("multiply float", &c32, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT32, ci,
                            SPGEMM_VALUE_FLOAT32, v, 0, CMP_TOL));
            CHECK(compare_c("multiply float", &c32, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT32, ci,
                            SPGEMM_VALUE_FLOAT32, v, 0, CMP_EXACT));
        }
        spgemm_matrix_destroy(C);
        spgemm_matrix_destroy(FA);
        spgemm_matrix_destroy(FB);
        typed_free(&tfa);
        typed_free(&tfb);
        ref_free(&a32);
        ref_free(&b32);
        ref_free(&c32);
    }
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    typed_free(&ta);
    typed_free(&tb);
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/* Library-owned results recycle their arrays through the handle's cache
 * (spgemm_set_output_cache): the second product lands in the first one's arrays (same
 * pointers, still holding the first product's numbers) and must still be exact; with the
 * cache off nothing is kept. */
static void test_output_cache(spgemm_handle_t *h) {
    ref_csr a = ref_random(30000, 20000, 12, 91, GEN_DUPS);
    ref_csr b = ref_random(20000, 40000, 12, 92, GEN_DUPS);
    ref_csr a2 = ref_random(24000, 20000, 12, 93, GEN_DUPS); /* C about 4/5 as large */
    ref_csr c = ref_product(&a, &b, 0), c2 = ref_product(&a2, &b, 0);
    typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    typed_csr ta2 = typed_from_ref(&a2, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                   SPGEMM_VALUE_FLOAT64, 0, 1);
    typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    spgemm_matrix_t *A = NULL, *A2 = NULL, *B = NULL, *C = NULL;
    const void *rp = NULL, *ci = NULL, *v = NULL, *ci1 = NULL, *v1 = NULL;
    size_t limit = 0, held = 1;
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&A2, &ta2));
    CHECK_OK(NULL, typed_create(&B, &tb));
    CHECK_OK(h, spgemm_get_output_cache(h, &limit, &held));
    CHECK(limit == ((size_t)1 << 30) && held == 0);
    CHECK_OK(h, spgemm_get_output_cache(h, NULL, NULL));
    if (CHECK_OK(h, spgemm_multiply(h, A, B, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, 0, &C))) {
        CHECK_OK(NULL, spgemm_matrix_export_csr(C, &rp, &ci1, &v1));
        CHECK(compare_c("cache: first", &c, SPGEMM_INDEX_INT64, rp, SPGEMM_INDEX_INT32, ci1,
                        SPGEMM_VALUE_FLOAT64, v1, 0, CMP_EXACT));
    }
    spgemm_matrix_destroy(C);
    C = NULL;
    CHECK_OK(h, spgemm_get_output_cache(h, NULL, &held));
    CHECK(c.nnz >= (1 << 18)); /* arrays of at least 1 MiB are kept */
    CHECK(held >= (size_t)c.nnz * 12);
    if (CHECK_OK(h, spgemm_multiply(h, A2, B, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, 0, &C))) {
        CHECK_OK(NULL, spgemm_matrix_export_csr(C, &rp, &ci, &v));
        CHECK(ci == ci1 && v == v1);
        CHECK(compare_c("cache: recycled", &c2, SPGEMM_INDEX_INT64, rp, SPGEMM_INDEX_INT32, ci,
                        SPGEMM_VALUE_FLOAT64, v, 0, CMP_EXACT));
    }
    spgemm_matrix_destroy(C);
    C = NULL;
    /* off: what is kept is freed and nothing more is kept */
    CHECK_OK(h, spgemm_set_output_cache(h, 0));
    CHECK_OK(h, spgemm_get_output_cache(h, &limit, &held));
    CHECK(limit == 0 && held == 0);
    if (CHECK_OK(h, spgemm_multiply(h, A, B, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, 0, &C))) {
        CHECK_OK(NULL, spgemm_matrix_export_csr(C, &rp, &ci, &v));
        CHECK(compare_c("cache: off", &c, SPGEMM_INDEX_INT64, rp, SPGEMM_INDEX_INT32, ci,
                        SPGEMM_VALUE_FLOAT64, v, 0, CMP_EXACT));
    }
    spgemm_matrix_destroy(C);
    CHECK_OK(h, spgemm_get_output_cache(h, NULL, &held));
    CHECK(held == 0);
    CHECK_OK(h, spgemm_set_output_cache(h, (size_t)1 << 30));
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(A2);
    spgemm_matrix_destroy(B);
    typed_free(&ta);
    typed_free(&ta2);
    typed_free(&tb);
    ref_free(&a);
    ref_free(&a2);
    ref_free(&b);
    ref_free(&c);
    ref_free(&c2);
}

/* Plan queries and handle options. */
static void test_plan_queries(spgemm_handle_t *h) {
    ref_csr a = ref_random(57, 43, 8, 91, GEN_DUPS);
    ref_csr b = ref_random(43, 38, 8, 92, GEN_DUPS);
    ref_csr c = ref_product(&a, &b, 0);
    typed_csr ta = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    typed_csr tb = typed_from_ref(&b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64,
                                  SPGEMM_VALUE_FLOAT64, 0, 1);
    spgemm_matrix_t *A = NULL, *B = NULL;
    int32_t validation = -1;
    spgemm_algorithm_t alg = -1;
    int ai, cb;
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&B, &tb));
    CHECK_OK(h, spgemm_get_algorithm(h, &alg));
    CHECK(alg == SPGEMM_ALG_AUTO);
    CHECK_OK(h, spgemm_get_validation(h, &validation));
    CHECK(validation == 1);
    for (ai = 0; ai < NALGS; ai++)
        for (cb = 0; cb < 2; cb++) {
            spgemm_plan_t *plan = NULL;
            int64_t nnz = -1, pm = -1, pk = -1, mults = -1;
            spgemm_algorithm_t sym = -1, num = -1;
            int64_t *crp = (int64_t *)xmalloc(((size_t)a.m + 1) * sizeof(int64_t));
            int64_t *crp2 = (int64_t *)xmalloc(((size_t)a.m + 1) * sizeof(int64_t));
            CHECK_OK(h, spgemm_set_algorithm(h, ALGS[ai]));
            CHECK_OK(h, spgemm_get_algorithm(h, &alg));
            CHECK(alg == ALGS[ai]);
            /* symbolic without row offsets, fetched afterwards */
            if (CHECK_OK(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, cb,
                                            NULL, &plan))) {
                int64_t i;
                int ok = 1;
                CHECK_OK(NULL, spgemm_plan_get_nnz(plan, &nnz));
                CHECK(nnz == c.nnz);
                CHECK_OK(NULL, spgemm_plan_get_info(plan, &pm, &pk, &mults));
                CHECK(pm == a.m && pk == b.n);
                CHECK(mults == ref_multiplications(&a, &b));
                CHECK_OK(NULL, spgemm_plan_get_info(plan, NULL, NULL, NULL));
                CHECK_OK(NULL, spgemm_plan_get_algorithm(plan, &sym, &num));
                CHECK(sym == SPGEMM_ALG_KKDENSE || sym == SPGEMM_ALG_KKLP ||
                      sym == SPGEMM_ALG_KKMEM);
                CHECK(num == SPGEMM_ALG_KKDENSE || num == SPGEMM_ALG_KKLP ||
                      num == SPGEMM_ALG_KKMEM);
                if (ALGS[ai] != SPGEMM_ALG_AUTO) CHECK(sym == ALGS[ai] && num == ALGS[ai]);
                CHECK_OK(NULL, spgemm_plan_get_algorithm(plan, NULL, NULL));
                memset(crp, 0xab, ((size_t)a.m + 1) * sizeof(int64_t));
                CHECK_OK(NULL, spgemm_plan_row_offsets(plan, crp));
                for (i = 0; i <= a.m; i++) ok &= crp[i] == c.rp[i] + cb;
                CHECK(ok);
                spgemm_plan_destroy(plan);
                plan = NULL;
            }
            /* symbolic writing row offsets: identical to the plan's */
            memset(crp2, 0xcd, ((size_t)a.m + 1) * sizeof(int64_t));
            if (CHECK_OK(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, cb,
                                            crp2, &plan))) {
                CHECK(memcmp(crp, crp2, ((size_t)a.m + 1) * sizeof(int64_t)) == 0);
                spgemm_plan_destroy(plan);
            }
            free(crp);
            free(crp2);
        }
    /* the plan keeps the algorithm it was made with */
    {
        spgemm_plan_t *plan = NULL;
        spgemm_algorithm_t sym = -1, num = -1;
        CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_KKLP));
        if (CHECK_OK(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, NULL,
                                        &plan))) {
            int32_t *cci = (int32_t *)xmalloc((size_t)c.nnz * sizeof(int32_t));
            double *cv = (double *)xmalloc((size_t)c.nnz * sizeof(double));
            int32_t *crp = (int32_t *)xmalloc(((size_t)a.m + 1) * sizeof(int32_t));
            CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_KKDENSE));
            CHECK_OK(h, spgemm_set_sorted_output(h, 0));
            CHECK_OK(NULL, spgemm_plan_get_algorithm(plan, &sym, &num));
            CHECK(sym == SPGEMM_ALG_KKLP && num == SPGEMM_ALG_KKLP);
            CHECK_OK(NULL, spgemm_plan_row_offsets(plan, crp));
            /* sortedness too: the plan was made with sorted output */
            if (CHECK_OK(h, spgemm_numeric(h, plan, A, B, cci, cv)))
                CHECK(compare_c("plan keeps options", &c, SPGEMM_INDEX_INT32, crp,
                                SPGEMM_INDEX_INT32, cci, SPGEMM_VALUE_FLOAT64, cv, 0, CMP_EXACT));
            CHECK_OK(h, spgemm_set_sorted_output(h, 1));
            spgemm_plan_destroy(plan);
            free(cci);
            free(cv);
            free(crp);
        }
    }
    /* validation off: valid input still gives the right product */
    CHECK_OK(h, spgemm_set_validation(h, 0));
    CHECK_OK(h, spgemm_get_validation(h, &validation));
    CHECK(validation == 0);
    for (ai = 0; ai < NALGS; ai++) {
        typed_csr tc;
        CHECK_OK(h, spgemm_set_algorithm(h, ALGS[ai]));
        if (CHECK_OK(h, two_phase(h, A, B, a.m, b.n, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                  SPGEMM_INDEX_INT32, 0, 0, &tc))) {
            CHECK(compare_typed("validation off", &c, &tc, CMP_EXACT));
            typed_free(&tc);
        }
    }
    CHECK_OK(h, spgemm_set_validation(h, 1));
    CHECK_OK(h, spgemm_get_validation(h, &validation));
    CHECK(validation == 1);
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    typed_free(&ta);
    typed_free(&tb);
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/*
 * Bitwise determinism: for 1, 2 and 3 threads and every algorithm, row offsets, column
 * indices and values are identical (memcmp) to the single-thread result and to the
 * reference. The product is large enough that rows are split between threads, with some
 * long rows (a few dense rows of A) to unbalance the work.
 */
static void test_thread_determinism(void) {
    const int64_t n = 3000;
    ref_csr a = ref_random(n, n, 24, 101, GEN_DUPS);
    ref_csr b = ref_random(n, n, 24, 102, GEN_DUPS);
    ref_csr c;
    typed_csr ta, tb, first;
    spgemm_matrix_t *A = NULL, *B = NULL;
    spgemm_handle_t *h = NULL;
    int ai, t, s, have_first = 0, compared = 0;
    int32_t nt = -1;
    c = ref_product(&a, &b, 0);
    ta = typed_from_ref(&a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64, 0, 1);
    tb = typed_from_ref(&b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64, 0, 1);
    memset(&first, 0, sizeof first);
    CHECK_OK(NULL, typed_create(&A, &ta));
    CHECK_OK(NULL, typed_create(&B, &tb));
    if (!CHECK_OK(NULL, spgemm_create(&h))) return;
    CHECK_OK(h, spgemm_get_num_threads(h, &nt));
    CHECK(nt >= 1);
    for (s = 1; s >= 0; s--) {
        CHECK_OK(h, spgemm_set_sorted_output(h, s));
        for (ai = 0; ai < NALGS; ai++) {
            CHECK_OK(h, spgemm_set_algorithm(h, ALGS[ai]));
            for (t = 1; t <= 3; t++) {
                typed_csr tc;
                CHECK_OK(h, spgemm_set_num_threads(h, t));
                CHECK_OK(h, spgemm_get_num_threads(h, &nt));
                CHECK(nt == t);
                if (!CHECK_OK(h, two_phase(h, A, B, n, n, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                           SPGEMM_INDEX_INT32, 0, 0, &tc)))
                    continue;
                CHECK(compare_typed("threads", &c, &tc,
                                    s ? CMP_EXACT : (CMP_EXACT | CMP_UNSORTED)));
                if (s == 1) { /* sorted output is fully determined: compare bytes */
                    if (!have_first) {
                        first = tc;
                        have_first = 1;
                        continue;
                    }
                    CHECK(tc.nnz == first.nnz);
                    CHECK(memcmp(tc.rp, first.rp, ((size_t)n + 1) * sizeof(int32_t)) == 0);
                    CHECK(tc.nnz == first.nnz &&
                          memcmp(tc.ci, first.ci, (size_t)tc.nnz * sizeof(int32_t)) == 0);
                    CHECK(tc.nnz == first.nnz &&
                          memcmp(tc.v, first.v, (size_t)tc.nnz * sizeof(double)) == 0);
                    compared++;
                }
                typed_free(&tc);
            }
        }
    }
    /* unsorted output: deterministic per algorithm across thread counts */
    for (ai = 0; ai < NALGS; ai++) {
        typed_csr one;
        CHECK_OK(h, spgemm_set_algorithm(h, ALGS[ai]));
        CHECK_OK(h, spgemm_set_num_threads(h, 1));
        if (!CHECK_OK(h, two_phase(h, A, B, n, n, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                   SPGEMM_INDEX_INT32, 0, 0, &one)))
            continue;
        for (t = 2; t <= 3; t++) {
            typed_csr tc;
            CHECK_OK(h, spgemm_set_num_threads(h, t));
            if (!CHECK_OK(h, two_phase(h, A, B, n, n, SPGEMM_VALUE_FLOAT64, SPGEMM_INDEX_INT32,
                                       SPGEMM_INDEX_INT32, 0, 0, &tc)))
                continue;
            CHECK(tc.nnz == one.nnz &&
                  memcmp(tc.ci, one.ci, (size_t)tc.nnz * sizeof(int32_t)) == 0 &&
                  memcmp(tc.v, one.v, (size_t)tc.nnz * sizeof(double)) == 0);
            typed_free(&tc);
        }
        typed_free(&one);
    }
    CHECK_OK(h, spgemm_set_num_threads(h, 0)); /* back to the default */
    CHECK_OK(h, spgemm_get_num_threads(h, &nt));
    CHECK(nt >= 1);
    printf("  determinism: %d results compared bytewise (nnz(C) = %lld)\n", compared,
           (long long)c.nnz);
    typed_free(&first);
    spgemm_destroy(h);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    typed_free(&ta);
    typed_free(&tb);
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/* The version macros and spgemm_version agree; every status has a description. */
static void test_version_and_strings(void) {
    int32_t major = -1, minor = -1, patch = -1;
    spgemm_status_t s;
    CHECK_OK(NULL, spgemm_version(&major, &minor, &patch));
    CHECK(major == SPGEMM_VERSION_MAJOR && minor == SPGEMM_VERSION_MINOR &&
          patch == SPGEMM_VERSION_PATCH);
    major = -1;
    CHECK_OK(NULL, spgemm_version(&major, NULL, NULL));
    CHECK(major == SPGEMM_VERSION_MAJOR);
    CHECK_OK(NULL, spgemm_version(NULL, NULL, NULL));
    for (s = SPGEMM_STATUS_SUCCESS; s <= SPGEMM_STATUS_INTERNAL; s++) {
        const char *str = spgemm_status_string(s);
        CHECK(str != NULL && str[0] != '\0' && strcmp(str, "unknown status") != 0);
    }
}

int main(void) {
    spgemm_handle_t *h = NULL;
    if (!CHECK_OK(NULL, spgemm_create(&h))) return check_report();
    /* several threads where the machine has them, so that partitions are exercised */
    CHECK_OK(h, spgemm_set_num_threads(h, 3));
    test_version_and_strings();
    test_literal_int32(h);
    test_all_formats(h);
    test_pattern_only(h);
    test_shapes(h);
    test_duplicates(h);
    test_cancellation(h);
    test_nan_inf(h);
    test_sorted_vs_unsorted(h);
    test_reuse(h);
    test_multiply_info_export(h);
    test_output_cache(h);
    test_plan_queries(h);
    CHECK_OK(h, spgemm_destroy(h));
    test_thread_determinism();
    return check_report();
}

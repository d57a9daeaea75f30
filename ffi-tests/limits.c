/*
 * The memory limit and the length-aware entry points (issue 27), from C:
 *  - spgemm_set_memory_limit / spgemm_get_memory_limit: each of the symbolic phase, the
 *    numeric phase, the one-call product and the SpMM analysis fails with ALLOC_FAILED one
 *    byte below its estimate (read from the message, which names the estimate and the limit)
 *    and succeeds at it, with the same result as without a limit; a failed call leaves the
 *    handle usable and writes nothing;
 *  - spgemm_matrix_create_csr_nnz: the last row offset minus the base must equal nnz;
 *  - spgemm_numeric_sized: the types and lengths of C's arrays are checked against the
 *    plan before anything is written.
 * Prints "N passed, M failed"; exits non-zero on failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* A deterministic m x n CSR matrix (0-based, int32, sorted rows, a long row every 31). */
typedef struct {
    int64_t m, n, nnz;
    int32_t *rp, *ci;
    double *v;
} csr_t;

static csr_t make(int64_t m, int64_t n, int per_row, uint32_t seed) {
    csr_t a;
    int64_t i, cap = m * (int64_t)per_row * 4 + 1;
    a.m = m;
    a.n = n;
    a.rp = malloc(sizeof(int32_t) * (size_t)(m + 1));
    a.ci = malloc(sizeof(int32_t) * (size_t)cap);
    a.v = malloc(sizeof(double) * (size_t)cap);
    a.nnz = 0;
    a.rp[0] = 0;
    for (i = 0; i < m; i++) {
        int len = (i % 31 == 0) ? 4 * per_row : 1 + (int)((seed + (uint32_t)i * 7u) % (uint32_t)per_row);
        int64_t c = (int64_t)((seed * 13u + (uint32_t)i * 17u) % (uint32_t)n);
        int t;
        for (t = 0; t < len && c < n; t++) {
            a.ci[a.nnz] = (int32_t)c;
            a.v[a.nnz] = 1.0 + (double)((a.nnz + seed) % 5);
            a.nnz++;
            c += 1 + (int64_t)((seed + (uint32_t)t) % 3);
        }
        a.rp[i + 1] = (int32_t)a.nnz;
    }
    return a;
}

static void release(csr_t *a) {
    free(a->rp);
    free(a->ci);
    free(a->v);
}

static spgemm_matrix_t *describe(const csr_t *a) {
    spgemm_matrix_t *m = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr_nnz(&m, a->m, a->n, a->nnz, SPGEMM_INDEX_INT32, a->rp,
                                                SPGEMM_INDEX_INT32, a->ci, SPGEMM_VALUE_FLOAT64,
                                                a->v, SPGEMM_INDEX_BASE_ZERO));
    return m;
}

/* The estimate in the handle's last error ("... needs an estimated N bytes ..."), or 0. */
static unsigned long long estimate_in(const spgemm_handle_t *h) {
    const char *msg = spgemm_last_error(h);
    const char *p = strstr(msg, "needs an estimated ");
    if (p == NULL) {
        fprintf(stderr, "no estimate in \"%s\"\n", msg);
        return 0;
    }
    return strtoull(p + strlen("needs an estimated "), NULL, 10);
}

static void test_limit_options(void) {
    spgemm_handle_t *h = NULL;
    size_t got = 7;
    CHECK_OK(NULL, spgemm_create(&h));
    CHECK_OK(h, spgemm_get_memory_limit(h, &got));
    CHECK(got == 0);
    CHECK_OK(h, spgemm_set_memory_limit(h, (size_t)123456789));
    CHECK_OK(h, spgemm_get_memory_limit(h, &got));
    CHECK(got == 123456789u);
    CHECK_ERR(NULL, spgemm_set_memory_limit(NULL, 1), SPGEMM_STATUS_NULL_POINTER, WORDS("handle"));
    CHECK_ERR(NULL, spgemm_get_memory_limit(NULL, &got), SPGEMM_STATUS_NULL_POINTER,
              WORDS("handle"));
    CHECK_ERR(h, spgemm_get_memory_limit(h, NULL), SPGEMM_STATUS_NULL_POINTER,
              WORDS("max_bytes"));
    spgemm_destroy(h);
}

/* Symbolic, numeric, multiply and the SpMM analysis below, at and without the limit. */
static void test_memory_limit(spgemm_algorithm_t alg, int64_t k) {
    csr_t a = make(300, 200, 6, 3u), b = make(200, k, 5, 11u);
    spgemm_matrix_t *ma = describe(&a), *mb = describe(&b), *c = NULL;
    spgemm_handle_t *h = NULL, *ref = NULL;
    spgemm_plan_t *plan = NULL, *ref_plan = NULL;
    spgemm_spmm_analysis_t *an = NULL;
    int64_t nnz = 0, ref_nnz = 0, p;
    int32_t *rp = calloc((size_t)a.m + 1, sizeof(int32_t));
    int32_t *ref_rp = calloc((size_t)a.m + 1, sizeof(int32_t));
    int32_t *cols, *ref_cols;
    double *vals, *ref_vals;
    unsigned long long est;
    size_t lim;

    CHECK_OK(NULL, spgemm_create(&h));
    CHECK_OK(NULL, spgemm_create(&ref));
    CHECK_OK(h, spgemm_set_num_threads(h, 2));
    CHECK_OK(h, spgemm_set_algorithm(h, alg));
    CHECK_OK(ref, spgemm_set_algorithm(ref, alg));
    CHECK_OK(ref, spgemm_symbolic(ref, ma, mb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, ref_rp,
                                  &ref_plan));
    CHECK_OK(ref, spgemm_plan_get_nnz(ref_plan, &ref_nnz));
    ref_cols = malloc(sizeof(int32_t) * (size_t)(ref_nnz + 1));
    ref_vals = malloc(sizeof(double) * (size_t)(ref_nnz + 1));
    CHECK_OK(ref, spgemm_numeric(ref, ref_plan, ma, mb, ref_cols, ref_vals));

    /* Symbolic: 1 byte, estimate - 1 (fail, nothing written), estimate (succeeds). */
    CHECK_OK(h, spgemm_set_memory_limit(h, 1));
    CHECK_ERR(h, spgemm_symbolic(h, ma, mb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, rp, &plan),
              SPGEMM_STATUS_ALLOC_FAILED,
              WORDS("symbolic", "estimated", "limit", "spgemm_set_memory_limit"));
    CHECK(plan == NULL);
    est = estimate_in(h);
    CHECK(est > 1);
    lim = (size_t)(est - 1);
    CHECK_OK(h, spgemm_set_memory_limit(h, lim));
    CHECK_STATUS(h, spgemm_symbolic(h, ma, mb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, rp, &plan),
                 SPGEMM_STATUS_ALLOC_FAILED);
    CHECK(estimate_in(h) == est);
    CHECK(rp[a.m] == 0);
    CHECK_OK(h, spgemm_set_memory_limit(h, (size_t)est));
    CHECK_OK(h, spgemm_symbolic(h, ma, mb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, rp, &plan));
    CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
    CHECK(nnz == ref_nnz && memcmp(rp, ref_rp, sizeof(int32_t) * (size_t)(a.m + 1)) == 0);

    /* Numeric likewise; the failed calls leave C's arrays as they were. */
    cols = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
    vals = malloc(sizeof(double) * (size_t)(nnz + 1));
    for (p = 0; p < nnz; p++) cols[p] = -5;
    CHECK_OK(h, spgemm_set_memory_limit(h, 1));
    CHECK_ERR(h, spgemm_numeric(h, plan, ma, mb, cols, vals), SPGEMM_STATUS_ALLOC_FAILED,
              WORDS("numeric", "estimated", "limit"));
    est = estimate_in(h);
    CHECK(est > 1);
    CHECK_OK(h, spgemm_set_memory_limit(h, (size_t)(est - 1)));
    CHECK_STATUS(h, spgemm_numeric(h, plan, ma, mb, cols, vals), SPGEMM_STATUS_ALLOC_FAILED);
    CHECK(nnz == 0 || cols[0] == -5);
    CHECK_OK(h, spgemm_set_memory_limit(h, (size_t)est));
    CHECK_OK(h, spgemm_numeric(h, plan, ma, mb, cols, vals));
    CHECK(memcmp(cols, ref_cols, sizeof(int32_t) * (size_t)nnz) == 0);
    CHECK(memcmp(vals, ref_vals, sizeof(double) * (size_t)nnz) == 0);
    /* Without a limit the handle goes on as before. */
    CHECK_OK(h, spgemm_set_memory_limit(h, 0));
    CHECK_OK(h, spgemm_numeric(h, plan, ma, mb, cols, vals));
    CHECK(memcmp(vals, ref_vals, sizeof(double) * (size_t)nnz) == 0);

    /* The one-call product counts C's arrays too. */
    CHECK_OK(h, spgemm_set_memory_limit(h, 1));
    CHECK_ERR(h, spgemm_multiply(h, ma, mb, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, 0, &c),
              SPGEMM_STATUS_ALLOC_FAILED, WORDS("estimated", "limit"));
    CHECK(c == NULL);
    CHECK_OK(h, spgemm_set_memory_limit(h, (size_t)1 << 40));
    CHECK_OK(h, spgemm_multiply(h, ma, mb, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, 0, &c));
    if (c != NULL) {
        int64_t got = -1;
        CHECK_OK(NULL, spgemm_matrix_get_info(c, NULL, NULL, &got, NULL, NULL, NULL, NULL));
        CHECK(got == nnz);
    }
    spgemm_matrix_destroy(c);

    /* The SpMM analysis (its transpose for A^T). */
    CHECK_OK(h, spgemm_set_memory_limit(h, 1));
    CHECK_ERR(h,
              spgemm_spmm_analysis_create(h, SPGEMM_OPERATION_TRANSPOSE, ma,
                                          SPGEMM_LAYOUT_ROW_MAJOR, 4, &an),
              SPGEMM_STATUS_ALLOC_FAILED, WORDS("SpMM", "analysis", "transpose", "limit"));
    CHECK(an == NULL);
    est = estimate_in(h);
    CHECK_OK(h, spgemm_set_memory_limit(h, (size_t)est));
    CHECK_OK(h, spgemm_spmm_analysis_create(h, SPGEMM_OPERATION_TRANSPOSE, ma,
                                            SPGEMM_LAYOUT_ROW_MAJOR, 4, &an));
    spgemm_spmm_analysis_destroy(an);

    free(cols);
    free(vals);
    free(ref_cols);
    free(ref_vals);
    free(rp);
    free(ref_rp);
    spgemm_plan_destroy(plan);
    spgemm_plan_destroy(ref_plan);
    spgemm_matrix_destroy(ma);
    spgemm_matrix_destroy(mb);
    spgemm_destroy(h);
    spgemm_destroy(ref);
    release(&a);
    release(&b);
}

static void test_create_csr_nnz(void) {
    /* 2 x 3, base 1: rows {1, 3} and {2}. */
    int32_t rp[3] = {1, 3, 4}, ci[3] = {1, 3, 2};
    int64_t rp64[3] = {0, 2, 3}, got = -1;
    double v[3] = {1, 2, 3};
    spgemm_matrix_t *m = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr_nnz(&m, 2, 3, 3, SPGEMM_INDEX_INT32, rp,
                                                SPGEMM_INDEX_INT32, ci, SPGEMM_VALUE_FLOAT64, v,
                                                SPGEMM_INDEX_BASE_ONE));
    CHECK_OK(NULL, spgemm_matrix_get_info(m, NULL, NULL, &got, NULL, NULL, NULL, NULL));
    CHECK(got == 3);
    spgemm_matrix_destroy(m);
    m = NULL;
    /* Offsets that claim more (or fewer) entries than the arrays hold. */
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr_nnz(&m, 2, 3, 2, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT32,
                                           ci, SPGEMM_VALUE_FLOAT64, v, SPGEMM_INDEX_BASE_ONE),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("row_offsets", "nnz", "2", "3"));
    CHECK(m == NULL);
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr_nnz(&m, 2, 3, 4, SPGEMM_INDEX_INT64, rp64,
                                           SPGEMM_INDEX_INT32, ci, SPGEMM_VALUE_FLOAT64, v,
                                           SPGEMM_INDEX_BASE_ZERO),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("nnz", "4"));
    /* The base is subtracted: the same offsets read 0-based claim 4 entries. */
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr_nnz(&m, 2, 3, 3, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT32,
                                           ci, SPGEMM_VALUE_FLOAT64, v, SPGEMM_INDEX_BASE_ZERO),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("nnz", "4", "3"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr_nnz(&m, 2, 3, -1, SPGEMM_INDEX_INT32, rp,
                                           SPGEMM_INDEX_INT32, ci, SPGEMM_VALUE_FLOAT64, v,
                                           SPGEMM_INDEX_BASE_ONE),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("nnz", "negative"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr_nnz(&m, 2, 3, 3, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT32,
                                           NULL, SPGEMM_VALUE_FLOAT64, v, SPGEMM_INDEX_BASE_ONE),
              SPGEMM_STATUS_NULL_POINTER, WORDS("col_indices"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr_nnz(NULL, 2, 3, 3, SPGEMM_INDEX_INT32, rp,
                                           SPGEMM_INDEX_INT32, ci, SPGEMM_VALUE_FLOAT64, v,
                                           SPGEMM_INDEX_BASE_ONE),
              SPGEMM_STATUS_NULL_POINTER, WORDS("matrix"));
    /* An empty matrix with no arrays but its offsets. */
    {
        int32_t zero[1] = {0};
        CHECK_OK(NULL, spgemm_matrix_create_csr_nnz(&m, 0, 5, 0, SPGEMM_INDEX_INT32, zero,
                                                    SPGEMM_INDEX_INT32, NULL,
                                                    SPGEMM_VALUE_FLOAT64, NULL,
                                                    SPGEMM_INDEX_BASE_ZERO));
        spgemm_matrix_destroy(m);
    }
    /* Offsets changed after creation: the next use says so instead of reading past. */
    {
        spgemm_handle_t *h = NULL;
        spgemm_plan_t *plan = NULL;
        m = NULL;
        CHECK_OK(NULL, spgemm_create(&h));
        CHECK_OK(NULL, spgemm_matrix_create_csr_nnz(&m, 2, 3, 3, SPGEMM_INDEX_INT32, rp,
                                                    SPGEMM_INDEX_INT32, ci,
                                                    SPGEMM_VALUE_FLOAT64, v,
                                                    SPGEMM_INDEX_BASE_ONE));
        rp[2] = 9;
        CHECK_ERR(h, spgemm_symbolic(h, m, m, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, NULL,
                                     &plan),
                  SPGEMM_STATUS_INVALID_VALUE, WORDS("nnz", "8", "3"));
        rp[2] = 4;
        CHECK(plan == NULL);
        spgemm_matrix_destroy(m);
        spgemm_destroy(h);
    }
}

static void test_numeric_sized(void) {
    csr_t a = make(120, 90, 5, 5u), b = make(90, 140, 4, 9u);
    spgemm_matrix_t *ma = describe(&a), *mb = describe(&b);
    spgemm_handle_t *h = NULL;
    spgemm_plan_t *plan = NULL;
    int64_t nnz = 0, p;
    int32_t *rp = calloc((size_t)a.m + 1, sizeof(int32_t));
    int32_t *rp2 = calloc((size_t)a.m + 2, sizeof(int32_t));
    int32_t *cols, *ref_cols;
    int64_t *cols64;
    double *vals, *ref_vals;
    float *vals32;

    CHECK_OK(NULL, spgemm_create(&h));
    CHECK_OK(h, spgemm_symbolic(h, ma, mb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, rp, &plan));
    CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
    CHECK(nnz > 2);
    cols = malloc(sizeof(int32_t) * (size_t)(nnz + 4));
    ref_cols = malloc(sizeof(int32_t) * (size_t)nnz);
    cols64 = malloc(sizeof(int64_t) * (size_t)nnz);
    vals = malloc(sizeof(double) * (size_t)(nnz + 4));
    ref_vals = malloc(sizeof(double) * (size_t)nnz);
    vals32 = malloc(sizeof(float) * (size_t)nnz);
    CHECK_OK(h, spgemm_numeric(h, plan, ma, mb, ref_cols, ref_vals));

    for (p = 0; p < nnz + 4; p++) {
        cols[p] = -7;
        vals[p] = -7.0;
    }
    /* Arrays too short: nothing is written. */
    CHECK_ERR(h,
              spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_INT32, rp2, a.m + 1,
                                   SPGEMM_INDEX_INT32, cols, nnz - 1, SPGEMM_VALUE_FLOAT64, vals,
                                   nnz),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("c_col_indices", "nnz"));
    CHECK_ERR(h,
              spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_INT32, rp2, a.m + 1,
                                   SPGEMM_INDEX_INT32, cols, nnz, SPGEMM_VALUE_FLOAT64, vals,
                                   nnz - 2),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("c_values", "nnz"));
    CHECK_ERR(h,
              spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_INT32, rp2, a.m,
                                   SPGEMM_INDEX_INT32, cols, nnz, SPGEMM_VALUE_FLOAT64, vals, nnz),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("c_row_offsets"));
    CHECK_ERR(h,
              spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_INT32, rp2, a.m + 1,
                                   SPGEMM_INDEX_INT32, cols, -1, SPGEMM_VALUE_FLOAT64, vals, nnz),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("negative"));
    CHECK(cols[0] == -7 && vals[0] == -7.0 && rp2[a.m] == 0);
    /* Element types that differ from the plan's. */
    CHECK_ERR(h,
              spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_INT32, NULL, 0,
                                   SPGEMM_INDEX_INT64, cols64, nnz, SPGEMM_VALUE_FLOAT64, vals,
                                   nnz),
              SPGEMM_STATUS_TYPE_MISMATCH, WORDS("c_col_indices", "int64", "int32"));
    CHECK_ERR(h,
              spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_INT32, NULL, 0,
                                   SPGEMM_INDEX_INT32, cols, nnz, SPGEMM_VALUE_FLOAT32, vals32,
                                   nnz),
              SPGEMM_STATUS_TYPE_MISMATCH, WORDS("c_values", "float", "double"));
    CHECK_ERR(h,
              spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_SIZE_T, rp2, a.m + 1,
                                   SPGEMM_INDEX_INT32, cols, nnz, SPGEMM_VALUE_FLOAT64, vals, nnz),
              SPGEMM_STATUS_TYPE_MISMATCH, WORDS("c_row_offsets", "size_t"));
    CHECK_ERR(h,
              spgemm_numeric_sized(h, plan, ma, mb, 9, rp2, a.m + 1, SPGEMM_INDEX_INT32, cols, nnz,
                                   SPGEMM_VALUE_FLOAT64, vals, nnz),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("c_offset_type"));
    CHECK(cols[0] == -7 && vals[0] == -7.0);
    /* Longer arrays: the first entries are C, the rest untouched. */
    CHECK_OK(h, spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_INT32, rp2, a.m + 2,
                                     SPGEMM_INDEX_INT32, cols, nnz + 4, SPGEMM_VALUE_FLOAT64, vals,
                                     nnz + 4));
    CHECK(memcmp(rp2, rp, sizeof(int32_t) * (size_t)(a.m + 1)) == 0 && rp2[a.m + 1] == 0);
    CHECK(memcmp(cols, ref_cols, sizeof(int32_t) * (size_t)nnz) == 0);
    CHECK(memcmp(vals, ref_vals, sizeof(double) * (size_t)nnz) == 0);
    CHECK(cols[nnz] == -7 && vals[nnz + 3] == -7.0);
    /* Structure only (no values; the value type is then not checked). */
    memset(cols, 0, sizeof(int32_t) * (size_t)nnz);
    CHECK_OK(h, spgemm_numeric_sized(h, plan, ma, mb, SPGEMM_INDEX_INT32, NULL, 0,
                                     SPGEMM_INDEX_INT32, cols, nnz, SPGEMM_VALUE_FLOAT32, NULL, 0));
    CHECK(memcmp(cols, ref_cols, sizeof(int32_t) * (size_t)nnz) == 0);
    CHECK_ERR(h,
              spgemm_numeric_sized(h, NULL, ma, mb, SPGEMM_INDEX_INT32, NULL, 0,
                                   SPGEMM_INDEX_INT32, cols, nnz, SPGEMM_VALUE_FLOAT64, vals, nnz),
              SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));

    free(cols);
    free(cols64);
    free(ref_cols);
    free(vals);
    free(vals32);
    free(ref_vals);
    free(rp);
    free(rp2);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(ma);
    spgemm_matrix_destroy(mb);
    spgemm_destroy(h);
    release(&a);
    release(&b);
}

int main(void) {
    test_limit_options();
    test_memory_limit(SPGEMM_ALG_AUTO, 150);
    test_memory_limit(SPGEMM_ALG_KKDENSE, 150);
    test_memory_limit(SPGEMM_ALG_KKLP, 100000);
    test_memory_limit(SPGEMM_ALG_KKMEM, 100000);
    test_create_csr_nnz();
    test_numeric_sized();
    return check_report();
}

/*
 * Migrating from Intel MKL inspector-executor (mkl_sparse_sp2m) to libspgemm.
 *
 * multiply_mkl_style() is written the way MKL users write a two-stage product: create CSR
 * handles over their arrays, run the NNZ_COUNT stage, allocate, run the FINALIZE stage,
 * export the result, and run FINALIZE again when A's values change. Each MKL call is shown
 * in a comment above its libspgemm replacement. main() then computes the same products with
 * plain one-call libspgemm (spgemm_multiply, int64 1-based output read through
 * spgemm_matrix_export_csr) and checks that both give the same C: same structure, values
 * within 1e-12 relative. Exit status 1 if not.
 *
 * Usage: mkl_migration [m] [k] [n]     (A is m x k, B is k x n; default 1000 800 900)
 *
 * MKL_INT: the LP64 interface uses 32-bit indices (int32_t, SPGEMM_INDEX_INT32); with ILP64
 * change mkl_int_t to int64_t and MKL_INDEX to SPGEMM_INDEX_INT64.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spgemm.h"

typedef int32_t mkl_int_t;
#define MKL_INDEX SPGEMM_INDEX_INT32

#define CALL(h, call)                                                                  \
    do {                                                                               \
        spgemm_status_t st_ = (call);                                                  \
        if (st_ != SPGEMM_STATUS_SUCCESS) {                                            \
            fprintf(stderr, "%s failed: %s\n", #call, spgemm_last_error(h));           \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* A CSR matrix as an MKL user keeps it: 3-array CSR (rows_start = ia, rows_end = ia + 1). */
typedef struct {
    mkl_int_t rows, cols;
    mkl_int_t *ia, *ja;
    double *val;
} user_csr;

static uint64_t rng_state = 12345;
static uint32_t rng(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* Random rows x cols matrix, 1..12 distinct unsorted columns per row (0 for every 7th row). */
static int random_csr(mkl_int_t rows, mkl_int_t cols, user_csr *out) {
    out->rows = rows;
    out->cols = cols;
    out->ia = malloc(((size_t)rows + 1) * sizeof *out->ia);
    out->ja = malloc((size_t)rows * 12 * sizeof *out->ja);
    out->val = malloc((size_t)rows * 12 * sizeof *out->val);
    if (!out->ia || !out->ja || !out->val) return 1;
    mkl_int_t nz = 0;
    out->ia[0] = 0;
    for (mkl_int_t i = 0; i < rows; ++i) {
        int len = (i % 7 == 6) ? 0 : 1 + (int)(rng() % 12);
        for (int t = 0; t < len; ++t) {
            mkl_int_t c = (mkl_int_t)(rng() % (uint32_t)cols);
            int dup = 0;
            for (mkl_int_t q = out->ia[i]; q < nz; ++q) dup |= out->ja[q] == c;
            if (dup) continue;
            out->ja[nz] = c;
            out->val[nz] = (double)(rng() % 2001) / 1000.0 - 1.0;
            ++nz;
        }
        out->ia[i + 1] = nz;
    }
    return 0;
}

static void free_csr(user_csr *x) {
    free(x->ia);
    free(x->ja);
    free(x->val);
}

/* C as the MKL code ends up with it after export (rows_start/rows_end = c_ia, c_ia + 1). */
typedef struct {
    mkl_int_t rows, cols;
    mkl_int_t *ia, *ja;
    double *val;
} result_csr;

/* Compares C (0-based, mkl_int_t) with a 1-based int64 CSR result of plain libspgemm. */
static int same_c(const char *when, const result_csr *c, int64_t rows, int64_t cols,
                  const int64_t *rp, const int64_t *ci, const double *v) {
    if (rows != c->rows || cols != c->cols) {
        fprintf(stderr, "%s: shape %lld x %lld differs\n", when, (long long)rows, (long long)cols);
        return 0;
    }
    for (int64_t i = 0; i < rows; ++i) {
        int64_t len = rp[i + 1] - rp[i];
        if (len != c->ia[i + 1] - c->ia[i]) {
            fprintf(stderr, "%s: row %lld has %lld entries, expected %lld\n", when, (long long)i,
                    (long long)(c->ia[i + 1] - c->ia[i]), (long long)len);
            return 0;
        }
        for (int64_t t = 0; t < len; ++t) {
            int64_t p = rp[i] - 1 + t, q = c->ia[i] + t;
            double x = v[p], y = c->val[q];
            if (ci[p] - 1 != c->ja[q]) {
                fprintf(stderr, "%s: row %lld entry %lld: column %lld, expected %lld\n", when,
                        (long long)i, (long long)t, (long long)c->ja[q], (long long)(ci[p] - 1));
                return 0;
            }
            if (!(fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y)))) {
                fprintf(stderr, "%s: C(%lld,%lld) = %.17g, expected %.17g\n", when, (long long)i,
                        (long long)c->ja[q], y, x);
                return 0;
            }
        }
    }
    return 1;
}

/* The reference: plain one-call libspgemm, C in int64 1-based arrays owned by the library. */
static int check_against_plain(spgemm_handle_t *h, spgemm_matrix_t *a, spgemm_matrix_t *b,
                               const result_csr *c, const char *when) {
    spgemm_matrix_t *ref = NULL;
    int64_t rows, cols, nnz;
    const void *rp, *ci, *v;
    CALL(h, spgemm_multiply(h, a, b, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                            SPGEMM_INDEX_BASE_ONE, &ref));
    CALL(NULL, spgemm_matrix_get_info(ref, &rows, &cols, &nnz, NULL, NULL, NULL, NULL));
    CALL(NULL, spgemm_matrix_export_csr(ref, &rp, &ci, &v));
    int ok = same_c(when, c, rows, cols, rp, ci, v);
    spgemm_matrix_destroy(ref);
    if (!ok) return 1;
    printf("mkl_migration: %s: C (%lld x %lld, %lld entries) equals plain libspgemm's\n", when,
           (long long)rows, (long long)cols, (long long)nnz);
    return 0;
}

/* The migrated MKL-style program. Also runs the checks (they are not part of a migration). */
static int multiply_mkl_style(spgemm_handle_t *h, user_csr *ua, user_csr *ub) {
    /* MKL:  sparse_matrix_t A = NULL, B = NULL, C = NULL;                          */
    spgemm_matrix_t *A = NULL, *B = NULL;
    spgemm_plan_t *C_plan = NULL; /* plays the role of MKL's C handle between stages */
    result_csr C = {ua->rows, ub->cols, NULL, NULL, NULL};

    /* MKL:  mkl_sparse_d_create_csr(&A, SPARSE_INDEX_BASE_ZERO, ua->rows, ua->cols,
     *                               ua->ia, ua->ia + 1, ua->ja, ua->val);           */
    CALL(NULL, spgemm_matrix_create_csr(&A, ua->rows, ua->cols, MKL_INDEX, ua->ia, MKL_INDEX,
                                        ua->ja, SPGEMM_VALUE_FLOAT64, ua->val,
                                        SPGEMM_INDEX_BASE_ZERO));
    /* MKL:  mkl_sparse_d_create_csr(&B, SPARSE_INDEX_BASE_ZERO, ub->rows, ub->cols,
     *                               ub->ia, ub->ia + 1, ub->ja, ub->val);           */
    CALL(NULL, spgemm_matrix_create_csr(&B, ub->rows, ub->cols, MKL_INDEX, ub->ia, MKL_INDEX,
                                        ub->ja, SPGEMM_VALUE_FLOAT64, ub->val,
                                        SPGEMM_INDEX_BASE_ZERO));

    /* MKL:  struct matrix_descr d = { .type = SPARSE_MATRIX_TYPE_GENERAL };
     *       mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, d, A,
     *                       SPARSE_OPERATION_NON_TRANSPOSE, d, B,
     *                       SPARSE_STAGE_NNZ_COUNT, &C);
     * libspgemm: the symbolic phase; you choose C's index types and base and receive C's
     * row offsets (MKL keeps them inside C until export).                            */
    C.ia = malloc(((size_t)C.rows + 1) * sizeof *C.ia);
    if (!C.ia) return 1;
    CALL(h, spgemm_symbolic(h, A, B, MKL_INDEX, MKL_INDEX, SPGEMM_INDEX_BASE_ZERO, C.ia,
                            &C_plan));
    int64_t nnz;
    CALL(NULL, spgemm_plan_get_nnz(C_plan, &nnz)); /* MKL: C.ia[rows] - C.ia[0] after export */

    /* MKL:  mkl_sparse_sp2m(..., SPARSE_STAGE_FINALIZE_MULT, &C);
     * libspgemm: C's arrays are yours: allocate nnz entries, then the numeric phase.  */
    C.ja = malloc((size_t)nnz * sizeof *C.ja + 1);
    C.val = malloc((size_t)nnz * sizeof *C.val + 1);
    if (!C.ja || !C.val) return 1;
    CALL(h, spgemm_numeric(h, C_plan, A, B, C.ja, C.val));

    /* MKL:  mkl_sparse_order(C);
     * libspgemm: rows are sorted by default (spgemm_set_sorted_output(h, 0) skips it). */

    /* MKL:  sparse_index_base_t base; MKL_INT rows, cols, *rs, *re, *ja; double *val;
     *       mkl_sparse_d_export_csr(C, &base, &rows, &cols, &rs, &re, &ja, &val);
     * libspgemm: nothing to export: rs = C.ia, re = C.ia + 1, ja = C.ja, val = C.val.  */
    if (check_against_plain(h, A, B, &C, "first product")) return 1;

    /* MKL:  new values in ua->val (same pattern), then
     *       mkl_sparse_sp2m(..., SPARSE_STAGE_FINALIZE_MULT, &C);   again
     * libspgemm: spgemm_numeric again with the same plan; no symbolic work.          */
    for (int step = 1; step <= 3; ++step) {
        for (mkl_int_t q = 0; q < ua->ia[ua->rows]; ++q) ua->val[q] = ua->val[q] * 0.5 + step;
        CALL(h, spgemm_numeric(h, C_plan, A, B, C.ja, C.val));
        char when[64];
        snprintf(when, sizeof when, "reuse step %d", step);
        if (check_against_plain(h, A, B, &C, when)) return 1;
    }

    /* MKL:  mkl_sparse_destroy(C); mkl_sparse_destroy(B); mkl_sparse_destroy(A);
     * libspgemm: destroy the plan and descriptors; C's arrays are freed by you.       */
    spgemm_plan_destroy(C_plan);
    spgemm_matrix_destroy(B);
    spgemm_matrix_destroy(A);
    free(C.ia);
    free(C.ja);
    free(C.val);
    return 0;
}

int main(int argc, char **argv) {
    mkl_int_t m = argc > 1 ? atoi(argv[1]) : 1000;
    mkl_int_t k = argc > 2 ? atoi(argv[2]) : 800;
    mkl_int_t n = argc > 3 ? atoi(argv[3]) : 900;
    if (m < 0 || k < 1 || n < 1) {
        fprintf(stderr, "usage: %s [m >= 0] [k >= 1] [n >= 1]\n", argv[0]);
        return 2;
    }
    user_csr a, b;
    if (random_csr(m, k, &a) || random_csr(k, n, &b)) return 1;
    spgemm_handle_t *h = NULL; /* MKL has no handle: one libspgemm handle per thread */
    CALL(NULL, spgemm_create(&h));
    int rc = multiply_mkl_style(h, &a, &b);
    spgemm_destroy(h);
    free_csr(&a);
    free_csr(&b);
    if (rc == 0) printf("mkl_migration: OK\n");
    return rc;
}

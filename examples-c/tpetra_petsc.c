/*
 * libspgemm with the index layouts of Trilinos/Tpetra and PETSc, 0-based, with plan reuse
 * across a loop in which the values change (MatMatMult(..., MAT_REUSE_MATRIX, ...) in
 * PETSc; a reused KokkosKernels handle in Tpetra):
 *
 *   tpetra_style: row offsets size_t, column indices int32 (local ordinals), double values;
 *                 C in the same layout.
 *   petsc_style:  everything int64 (PetscInt with --with-64-bit-indices), double values.
 *
 * Both compute C = A*B for a 2D 5-point operator A (g x g grid) and a rectangular B (a
 * 2D aggregation onto a coarser grid, scaled), and check every round against this file's
 * own reference product (a dense-accumulator row-by-row product). Exit status 1 on a wrong
 * answer.
 *
 * Usage: tpetra_petsc [g] [rounds]     (default 100 5)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spgemm.h"

#define CALL(h, call)                                                                  \
    do {                                                                               \
        spgemm_status_t st_ = (call);                                                  \
        if (st_ != SPGEMM_STATUS_SUCCESS) {                                            \
            fprintf(stderr, "%s failed: %s\n", #call, spgemm_last_error(h));           \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* The test problem in int64 arrays (converted to each layout below). */
typedef struct {
    int64_t rows, cols;
    int64_t *rp, *ci;
    double *v;
} csr64;

static void free64(csr64 *x) {
    free(x->rp);
    free(x->ci);
    free(x->v);
}

/* Structure of the 5-point operator on a g x g grid (values: operator_values). */
static int operator_2d(int64_t g, csr64 *a) {
    int64_t n = g * g, nz = 0;
    a->rows = a->cols = n;
    a->rp = malloc((size_t)(n + 1) * sizeof *a->rp);
    a->ci = malloc((size_t)(5 * n) * sizeof *a->ci);
    a->v = malloc((size_t)(5 * n) * sizeof *a->v);
    if (!a->rp || !a->ci || !a->v) return 1;
    for (int64_t y = 0; y < g; ++y)
        for (int64_t x = 0; x < g; ++x) {
            int64_t r = y * g + x;
            a->rp[r] = nz;
            if (y > 0) a->ci[nz++] = r - g;
            if (x > 0) a->ci[nz++] = r - 1;
            a->ci[nz++] = r;
            if (x < g - 1) a->ci[nz++] = r + 1;
            if (y < g - 1) a->ci[nz++] = r + g;
        }
    a->rp[n] = nz;
    return 0;
}

/* Values at time t (a time-dependent coefficient): diagonal 4 + t/10, off-diagonals vary. */
static void operator_values(const csr64 *a, double t, double *v) {
    for (int64_t r = 0; r < a->rows; ++r)
        for (int64_t k = a->rp[r]; k < a->rp[r + 1]; ++k)
            v[k] = a->ci[k] == r ? 4.0 + 0.1 * t : -1.0 - 0.01 * t * (double)(r % 5);
}

/* Aggregation of the g x g grid onto a ceil(g/3) x ceil(g/3) grid (3x3 blocks). */
static int aggregation_2d(int64_t g, csr64 *b) {
    int64_t gc = (g + 2) / 3, n = g * g;
    b->rows = n;
    b->cols = gc * gc;
    b->rp = malloc((size_t)(n + 1) * sizeof *b->rp);
    b->ci = malloc((size_t)n * sizeof *b->ci);
    b->v = malloc((size_t)n * sizeof *b->v);
    if (!b->rp || !b->ci || !b->v) return 1;
    for (int64_t y = 0; y < g; ++y)
        for (int64_t x = 0; x < g; ++x) {
            int64_t r = y * g + x;
            b->rp[r] = r;
            b->ci[r] = (y / 3) * gc + x / 3;
            b->v[r] = 1.0 / 3.0;
        }
    b->rp[n] = n;
    return 0;
}

/* Reference check of C = A*B (int64 copies of C's arrays): dense accumulator per row. */
static int check_product(const char *who, int round, const csr64 *a, const csr64 *b,
                         const int64_t *c_rp, const int64_t *c_ci, const double *c_v) {
    double *acc = calloc((size_t)b->cols, sizeof *acc);
    double *got = calloc((size_t)b->cols, sizeof *got);
    int ok = acc && got;
    for (int64_t i = 0; ok && i < a->rows; ++i) {
        double scale = 0.0;
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; ++k)
            for (int64_t q = b->rp[a->ci[k]]; q < b->rp[a->ci[k] + 1]; ++q) {
                acc[b->ci[q]] += a->v[k] * b->v[q];
                scale += fabs(a->v[k] * b->v[q]);
            }
        for (int64_t q = c_rp[i]; q < c_rp[i + 1]; ++q) got[c_ci[q]] += c_v[q];
        for (int64_t j = 0; j < b->cols; ++j) {
            if (fabs(acc[j] - got[j]) > 1e-12 * scale) {
                fprintf(stderr, "%s: round %d: C(%lld,%lld) = %.17g, expected %.17g\n", who,
                        round, (long long)i, (long long)j, got[j], acc[j]);
                ok = 0;
            }
        }
        /* Clear only what this row touched. */
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; ++k)
            for (int64_t q = b->rp[a->ci[k]]; q < b->rp[a->ci[k] + 1]; ++q) acc[b->ci[q]] = 0.0;
        for (int64_t q = c_rp[i]; q < c_rp[i + 1]; ++q) got[c_ci[q]] = 0.0;
    }
    free(acc);
    free(got);
    return ok ? 0 : 1;
}

/* Tpetra layout: size_t row offsets, int32 local column indices. */
static int tpetra_style(spgemm_handle_t *h, csr64 *a64, const csr64 *b64, int rounds) {
    int64_t m = a64->rows, n = b64->cols, nza = a64->rp[m], nzb = b64->rp[b64->rows];
    size_t *a_rp = malloc((size_t)(m + 1) * sizeof *a_rp);
    size_t *b_rp = malloc((size_t)(b64->rows + 1) * sizeof *b_rp);
    int32_t *a_ci = malloc((size_t)nza * sizeof *a_ci), *b_ci = malloc((size_t)nzb * sizeof *b_ci);
    size_t *c_rp = malloc((size_t)(m + 1) * sizeof *c_rp);
    if (!a_rp || !b_rp || !a_ci || !b_ci || !c_rp) return 1;
    for (int64_t i = 0; i <= m; ++i) a_rp[i] = (size_t)a64->rp[i];
    for (int64_t i = 0; i <= b64->rows; ++i) b_rp[i] = (size_t)b64->rp[i];
    for (int64_t k = 0; k < nza; ++k) a_ci[k] = (int32_t)a64->ci[k];
    for (int64_t k = 0; k < nzb; ++k) b_ci[k] = (int32_t)b64->ci[k];
    /* The values array is shared with the reference (a64->v): updated in place below. */

    spgemm_matrix_t *A = NULL, *B = NULL;
    spgemm_plan_t *plan = NULL;
    CALL(NULL, spgemm_matrix_create_csr(&A, m, a64->cols, SPGEMM_INDEX_SIZE_T, a_rp,
                                        SPGEMM_INDEX_INT32, a_ci, SPGEMM_VALUE_FLOAT64, a64->v,
                                        SPGEMM_INDEX_BASE_ZERO));
    CALL(NULL, spgemm_matrix_create_csr(&B, b64->rows, n, SPGEMM_INDEX_SIZE_T, b_rp,
                                        SPGEMM_INDEX_INT32, b_ci, SPGEMM_VALUE_FLOAT64, b64->v,
                                        SPGEMM_INDEX_BASE_ZERO));
    CALL(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_SIZE_T, SPGEMM_INDEX_INT32,
                            SPGEMM_INDEX_BASE_ZERO, c_rp, &plan));
    int64_t nnz;
    CALL(NULL, spgemm_plan_get_nnz(plan, &nnz));
    int32_t *c_ci = malloc((size_t)nnz * sizeof *c_ci + 1);
    double *c_v = malloc((size_t)nnz * sizeof *c_v + 1);
    int64_t *c_rp64 = malloc((size_t)(m + 1) * sizeof *c_rp64);
    int64_t *c_ci64 = malloc((size_t)nnz * sizeof *c_ci64 + 1);
    if (!c_ci || !c_v || !c_rp64 || !c_ci64) return 1;
    for (int64_t i = 0; i <= m; ++i) c_rp64[i] = (int64_t)c_rp[i];

    int rc = 0;
    for (int round = 0; round < rounds && rc == 0; ++round) {
        operator_values(a64, round, a64->v); /* new values, same structure */
        CALL(h, spgemm_numeric(h, plan, A, B, c_ci, c_v));
        for (int64_t k = 0; k < nnz; ++k) c_ci64[k] = c_ci[k];
        rc = check_product("tpetra_style", round, a64, b64, c_rp64, c_ci64, c_v);
    }
    if (rc == 0)
        printf("tpetra_style (size_t offsets, int32 indices): C is %lld x %lld with %lld "
               "entries, %d rounds of numeric reuse: OK\n",
               (long long)m, (long long)n, (long long)nnz, rounds);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    free(a_rp), free(b_rp), free(a_ci), free(b_ci), free(c_rp);
    free(c_ci), free(c_v), free(c_rp64), free(c_ci64);
    return rc;
}

/* PETSc layout with 64-bit PetscInt: int64 offsets and column indices everywhere. */
static int petsc_style(spgemm_handle_t *h, csr64 *a, const csr64 *b, int rounds) {
    spgemm_matrix_t *A = NULL, *B = NULL;
    spgemm_plan_t *plan = NULL;
    int64_t *c_rp = malloc((size_t)(a->rows + 1) * sizeof *c_rp);
    if (!c_rp) return 1;
    CALL(NULL, spgemm_matrix_create_csr(&A, a->rows, a->cols, SPGEMM_INDEX_INT64, a->rp,
                                        SPGEMM_INDEX_INT64, a->ci, SPGEMM_VALUE_FLOAT64, a->v,
                                        SPGEMM_INDEX_BASE_ZERO));
    CALL(NULL, spgemm_matrix_create_csr(&B, b->rows, b->cols, SPGEMM_INDEX_INT64, b->rp,
                                        SPGEMM_INDEX_INT64, b->ci, SPGEMM_VALUE_FLOAT64, b->v,
                                        SPGEMM_INDEX_BASE_ZERO));
    /* MatMatMult(A, B, MAT_INITIAL_MATRIX, fill, &C): symbolic once. */
    CALL(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                            SPGEMM_INDEX_BASE_ZERO, c_rp, &plan));
    int64_t nnz;
    CALL(NULL, spgemm_plan_get_nnz(plan, &nnz));
    int64_t *c_ci = malloc((size_t)nnz * sizeof *c_ci + 1);
    double *c_v = malloc((size_t)nnz * sizeof *c_v + 1);
    if (!c_ci || !c_v) return 1;
    int rc = 0;
    for (int round = 0; round < rounds && rc == 0; ++round) {
        operator_values(a, 0.5 * round, a->v);
        /* MatMatMult(A, B, MAT_REUSE_MATRIX, fill, &C): numeric only. */
        CALL(h, spgemm_numeric(h, plan, A, B, c_ci, c_v));
        rc = check_product("petsc_style", round, a, b, c_rp, c_ci, c_v);
    }
    if (rc == 0)
        printf("petsc_style (int64 everywhere): C is %lld x %lld with %lld entries, %d rounds "
               "of numeric reuse: OK\n",
               (long long)a->rows, (long long)b->cols, (long long)nnz, rounds);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    free(c_rp), free(c_ci), free(c_v);
    return rc;
}

int main(int argc, char **argv) {
    int64_t g = argc > 1 ? atoll(argv[1]) : 100;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (g < 1 || g > 40000 || rounds < 1) {
        fprintf(stderr, "usage: %s [1 <= g <= 40000] [rounds >= 1]\n", argv[0]);
        return 2;
    }
    csr64 a, b;
    if (operator_2d(g, &a) || aggregation_2d(g, &b)) return 1;
    spgemm_handle_t *h = NULL;
    CALL(NULL, spgemm_create(&h));
    int rc = tpetra_style(h, &a, &b, rounds);
    if (rc == 0) rc = petsc_style(h, &a, &b, rounds);
    spgemm_destroy(h);
    free64(&a);
    free64(&b);
    return rc;
}

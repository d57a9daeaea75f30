/*
 * A program written for Intel MKL's inspector-executor sparse BLAS, and nothing else: it builds
 * unchanged against MKL or against libspgemm's MKL compatibility layer (libspgemm_mkl):
 *
 *   cc mkl_drop_in.c $(pkg-config --cflags --libs mkl-dynamic-lp64-seq) -lm     # Intel MKL
 *   cc mkl_drop_in.c $(pkg-config --cflags --libs spgemm-mkl) -lm               # libspgemm
 *
 * What it does is what an algebraic multigrid setup does with MKL (PETSc's aijmkl calls the
 * same functions in the same order): A is the 5-point Laplacian on a g x g grid, P a piecewise
 * constant prolongator (aggregates of 2 x 2 points).
 *   1. A's handle with PETSc's hints (set_mv_hint, set_memory_hint, optimize), y = A x (mv).
 *   2. Coarse operator A_c = P^T A P with mkl_sparse_sypr: symbolic stage once, numeric stage,
 *      then A's values change (scaled by 2), A's handle is made anew as PETSc makes it, and
 *      the numeric stage runs again on the same A_c.
 *   3. A P with mkl_sparse_sp2m in two stages (NNZ_COUNT, FINALIZE_MULT), ordered, exported.
 * Each result is checked against a direct computation; exit status 1 on any difference.
 *
 * Usage: mkl_drop_in [g]   (g even, default 40)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mkl.h>

#define CHECK(call)                                                                 \
    do {                                                                            \
        sparse_status_t st_ = (call);                                               \
        if (st_ != SPARSE_STATUS_SUCCESS) {                                         \
            fprintf(stderr, "%s failed with status %d\n", #call, (int)st_);        \
            return 1;                                                               \
        }                                                                           \
    } while (0)

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * (1.0 + fabs(b)); }

int main(int argc, char **argv) {
    MKL_INT g = argc > 1 ? (MKL_INT)atoi(argv[1]) : 40;
    if (g < 2 || g % 2) {
        fprintf(stderr, "usage: mkl_drop_in [g]   (g even, >= 2)\n");
        return 2;
    }
    MKL_INT n = g * g, nc = n / 4, h = g / 2;
    MKL_INT *ia = malloc(sizeof(MKL_INT) * (size_t)(n + 1)), *ja = malloc(sizeof(MKL_INT) * (size_t)(5 * n));
    double *a = malloc(sizeof(double) * (size_t)(5 * n));
    MKL_INT *pi = malloc(sizeof(MKL_INT) * (size_t)(n + 1)), *pj = malloc(sizeof(MKL_INT) * (size_t)n);
    double *pv = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    double *y = malloc(sizeof(double) * (size_t)n);
    if (!ia || !ja || !a || !pi || !pj || !pv || !x || !y) return 2;
    MKL_INT nz = 0;
    for (MKL_INT r = 0; r < g; r++)
        for (MKL_INT c = 0; c < g; c++) {
            MKL_INT i = r * g + c;
            ia[i] = nz;
            if (r > 0) { ja[nz] = i - g; a[nz++] = -1.0; }
            if (c > 0) { ja[nz] = i - 1; a[nz++] = -1.0; }
            ja[nz] = i; a[nz++] = 4.0;
            if (c < g - 1) { ja[nz] = i + 1; a[nz++] = -1.0; }
            if (r < g - 1) { ja[nz] = i + g; a[nz++] = -1.0; }
            pi[i] = i;
            pj[i] = (r / 2) * h + c / 2; /* the aggregate of point (r, c) */
            pv[i] = 1.0;
            x[i] = (double)(i % 7) - 3.0;
        }
    ia[n] = nz;
    pi[n] = n;

    /* 1. PETSc's handle: create over our arrays, hints, optimize; then y = A x */
    sparse_matrix_t A, P, Ac = NULL, AP = NULL;
    struct matrix_descr gen = {SPARSE_MATRIX_TYPE_GENERAL, SPARSE_FILL_MODE_LOWER, SPARSE_DIAG_NON_UNIT};
    struct matrix_descr sym = {SPARSE_MATRIX_TYPE_SYMMETRIC, SPARSE_FILL_MODE_UPPER, SPARSE_DIAG_NON_UNIT};
    CHECK(mkl_sparse_d_create_csr(&A, SPARSE_INDEX_BASE_ZERO, n, n, ia, ia + 1, ja, a));
    CHECK(mkl_sparse_d_create_csr(&P, SPARSE_INDEX_BASE_ZERO, n, nc, pi, pi + 1, pj, pv));
    CHECK(mkl_sparse_set_mv_hint(A, SPARSE_OPERATION_NON_TRANSPOSE, gen, 100));
    CHECK(mkl_sparse_set_memory_hint(A, SPARSE_MEMORY_AGGRESSIVE));
    CHECK(mkl_sparse_optimize(A));
    CHECK(mkl_sparse_d_mv(SPARSE_OPERATION_NON_TRANSPOSE, 1.0, A, gen, x, 0.0, y));
    int bad = 0;
    for (MKL_INT i = 0; i < n; i++) {
        double s = 0;
        for (MKL_INT k = ia[i]; k < ia[i + 1]; k++) s += a[k] * x[ja[k]];
        bad += !close_to(y[i], s);
    }

    /* 2. A_c = P^T A P: symbolic once, numeric, new values of A in place, numeric again */
    CHECK(mkl_sparse_sypr(SPARSE_OPERATION_TRANSPOSE, P, A, sym, &Ac, SPARSE_STAGE_FULL_MULT_NO_VAL));
    for (int round = 1; round <= 2; round++) {
        if (round == 2) { /* new values: PETSc re-creates the handle (an optimized MKL handle may
                             hold its own copy of the values) */
            for (MKL_INT k = 0; k < nz; k++) a[k] *= 2.0;
            mkl_sparse_destroy(A);
            CHECK(mkl_sparse_d_create_csr(&A, SPARSE_INDEX_BASE_ZERO, n, n, ia, ia + 1, ja, a));
            CHECK(mkl_sparse_set_mv_hint(A, SPARSE_OPERATION_NON_TRANSPOSE, gen, 100));
            CHECK(mkl_sparse_set_memory_hint(A, SPARSE_MEMORY_AGGRESSIVE));
            CHECK(mkl_sparse_optimize(A));
        }
        CHECK(mkl_sparse_sypr(SPARSE_OPERATION_TRANSPOSE, P, A, sym, &Ac, SPARSE_STAGE_FINALIZE_MULT));
        sparse_index_base_t base;
        MKL_INT rows, cols, *rs, *re, *ci;
        double *v;
        CHECK(mkl_sparse_d_export_csr(Ac, &base, &rows, &cols, &rs, &re, &ci, &v));
        const MKL_INT b = (MKL_INT)base; /* the enum is unsigned with some compilers */
        /* row I of P^T A P sums the rows of A at the 4 points of aggregate I, columns mapped to
         * aggregates; MKL stores only the upper triangle (columns J >= I) */
        double *row = calloc((size_t)nc, sizeof(double));
        if (!row) return 2;
        for (MKL_INT I = 0; I < rows; I++) {
            for (int q = 0; q < 4; q++) {
                MKL_INT i = (2 * (I / h) + q / 2) * g + 2 * (I % h) + q % 2;
                for (MKL_INT k = ia[i]; k < ia[i + 1]; k++)
                    if (pj[ja[k]] >= I) row[pj[ja[k]]] += a[k];
            }
            for (MKL_INT k = rs[I] - b; k < re[I] - b; k++) {
                if (ci[k] - b < I || !close_to(v[k], row[ci[k] - b])) bad++;
                row[ci[k] - b] = 0;
            }
            for (MKL_INT c = 0; c < nc; c++)
                if (row[c] != 0) bad++, row[c] = 0;
        }
        free(row);
        if (bad) fprintf(stderr, "P^T A P differs from the direct computation (round %d)\n", round);
    }

    /* 3. A P in two stages, as KokkosKernels' MKL back end does, then ordered and exported */
    CHECK(mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, gen, A, SPARSE_OPERATION_NON_TRANSPOSE, gen, P,
                          SPARSE_STAGE_NNZ_COUNT, &AP));
    CHECK(mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, gen, A, SPARSE_OPERATION_NON_TRANSPOSE, gen, P,
                          SPARSE_STAGE_FINALIZE_MULT, &AP));
    CHECK(mkl_sparse_order(AP));
    {
        sparse_index_base_t base;
        MKL_INT rows, cols, *rs, *re, *ci;
        double *v;
        CHECK(mkl_sparse_d_export_csr(AP, &base, &rows, &cols, &rs, &re, &ci, &v));
        const MKL_INT b = (MKL_INT)base;
        double *row = calloc((size_t)nc, sizeof(double));
        if (!row) return 2;
        for (MKL_INT i = 0; i < rows && !bad; i++) {
            for (MKL_INT k = ia[i]; k < ia[i + 1]; k++) row[pj[ja[k]]] += a[k]; /* (A P)(i, :) directly */
            for (MKL_INT k = rs[i] - b; k < re[i] - b; k++) {
                if (k > rs[i] - b && ci[k] <= ci[k - 1]) bad++; /* sorted after mkl_sparse_order */
                if (!close_to(v[k], row[ci[k] - b])) bad++;
                row[ci[k] - b] = 0;
            }
            for (MKL_INT c = 0; c < nc; c++)
                if (row[c] != 0) bad++, row[c] = 0;
        }
        free(row);
        printf("A: %lld x %lld, %lld entries; P^T A P: %lld x %lld; A P: %lld entries\n", (long long)n,
               (long long)n, (long long)nz, (long long)nc, (long long)nc, (long long)(re[rows - 1] - b));
    }
    mkl_sparse_destroy(AP);
    mkl_sparse_destroy(Ac);
    mkl_sparse_destroy(P);
    mkl_sparse_destroy(A);
    free(ia); free(ja); free(a); free(pi); free(pj); free(pv); free(x); free(y);
    printf("%s\n", bad ? "FAILED" : "all results agree with the direct computation");
    return bad ? 1 : 0;
}

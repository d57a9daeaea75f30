/*
 * layer_test.c: what libspgemm_mkl promises beyond the MKL contract (mkl_api_test.c), written
 * against its mkl_spblas.h: hints and optimize build libspgemm's analysis (seen through the
 * validation it runs), an analysis outdated by the caller is not used, deferred analyses of
 * sp2m results, CSC/COO and 4-array CSR inputs, sypr with a LOWER triangle and op N, stage
 * misuse, the checks MKL leaves out, the service functions, concurrent mv on one handle, and
 * spgemm_mkl_last_error(). Results are compared with dense references computed here.
 * Prints "N passed, M failed"; exit status 1 on failure. Built LP64 and ILP64 by make mkl-check.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mkl.h>

static int g_pass, g_fail;

static void check(int ok, const char *what) {
    if (ok) g_pass++;
    else {
        g_fail++;
        printf("FAIL %s (last error: %s)\n", what, spgemm_mkl_last_error());
    }
}

/* A failing call must leave a reason; a successful one none. */
static void check_status(sparse_status_t got, sparse_status_t want, const char *what) {
    const char *e = spgemm_mkl_last_error();
    check(got == want && (got == SPARSE_STATUS_SUCCESS ? *e == '\0' : *e != '\0'), what);
}

static const struct matrix_descr GEN = {SPARSE_MATRIX_TYPE_GENERAL, SPARSE_FILL_MODE_FULL, SPARSE_DIAG_NON_UNIT};
#define N_ SPARSE_OPERATION_NON_TRANSPOSE
#define T_ SPARSE_OPERATION_TRANSPOSE
#define C_ SPARSE_OPERATION_CONJUGATE_TRANSPOSE

/* 6 x 5 test matrix (0-based CSR) with an empty row and unsorted rows. */
enum { M = 6, K = 5 };
static MKL_INT a_rp[M + 1] = {0, 2, 2, 5, 6, 8, 10};
static MKL_INT a_ci[10] = {3, 0, 4, 1, 2, 0, 1, 4, 2, 3};
static double a_v[10] = {1.5, -2, 0.25, 3, -1, 2, 0.5, -0.75, 4, 1};

static void dense_of(const MKL_INT *rp, const MKL_INT *ci, const double *v, MKL_INT rows, MKL_INT cols, double *d) {
    memset(d, 0, sizeof(double) * (size_t)(rows * cols));
    for (MKL_INT i = 0; i < rows; i++)
        for (MKL_INT k = rp[i]; k < rp[i + 1]; k++) d[i * cols + ci[k]] += v[k];
}

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * (1 + fabs(b)); }

/* y = op(A) x from the dense A (rows x cols). */
static void ref_mv(const double *d, MKL_INT rows, MKL_INT cols, sparse_operation_t op, const double *x, double *y) {
    MKL_INT out = op == N_ ? rows : cols, in = op == N_ ? cols : rows;
    for (MKL_INT i = 0; i < out; i++) {
        y[i] = 0;
        for (MKL_INT j = 0; j < in; j++) y[i] += (op == N_ ? d[i * cols + j] : d[j * cols + i]) * x[j];
    }
}

/* Exported CSR of h equals the dense d (rows x cols), any order within rows. */
static int equals_dense(sparse_matrix_t h, const double *d, MKL_INT rows, MKL_INT cols) {
    sparse_index_base_t b;
    MKL_INT r, c, *rs, *re, *ci;
    double *v, *t;
    int ok;
    if (mkl_sparse_d_export_csr(h, &b, &r, &c, &rs, &re, &ci, &v) != SPARSE_STATUS_SUCCESS) return 0;
    if (r != rows || c != cols || !v) return 0;
    t = calloc((size_t)(rows * cols), sizeof(double));
    for (MKL_INT i = 0; i < rows; i++)
        for (MKL_INT k = rs[i] - (MKL_INT)b; k < re[i] - (MKL_INT)b; k++) t[i * cols + ci[k] - (MKL_INT)b] += v[k];
    ok = 1;
    for (MKL_INT i = 0; i < rows * cols; i++) ok &= near(t[i], d[i]);
    free(t);
    return ok;
}

static void test_hints(void) {
    double d[M * K], x[8] = {1, -2, 0.5, 3, -1, 2, 0.25, 1}, y[8], y2[8], r[8];
    MKL_INT rp[M + 1], ci[10];
    double v[10];
    sparse_matrix_t A, B;
    memcpy(rp, a_rp, sizeof rp);
    memcpy(ci, a_ci, sizeof ci);
    memcpy(v, a_v, sizeof v);
    dense_of(rp, ci, v, M, K, d);

    /* optimize runs libspgemm's analysis, which validates: a column index out of range is
     * caught by a hinted optimize, while an unhinted one has nothing to build */
    ci[4] = 7;
    mkl_sparse_d_create_csr(&B, SPARSE_INDEX_BASE_ZERO, M, K, rp, rp + 1, ci, v);
    check_status(mkl_sparse_optimize(B), SPARSE_STATUS_SUCCESS, "optimize without hints");
    mkl_sparse_set_mv_hint(B, N_, GEN, 10);
    check_status(mkl_sparse_optimize(B), SPARSE_STATUS_INVALID_VALUE, "hinted optimize validates (analysis built)");
    mkl_sparse_destroy(B);
    ci[4] = a_ci[4];

    mkl_sparse_d_create_csr(&A, SPARSE_INDEX_BASE_ZERO, M, K, rp, rp + 1, ci, v);
    for (int o = 0; o < 2; o++) {
        sparse_operation_t op = o ? T_ : N_;
        MKL_INT out = o ? K : M;
        check_status(mkl_sparse_d_mv(op, 1.0, A, GEN, x, 0.0, y), SPARSE_STATUS_SUCCESS, "mv before hints");
        check_status(mkl_sparse_set_mv_hint(A, op, GEN, 100), SPARSE_STATUS_SUCCESS, "set_mv_hint");
        check_status(mkl_sparse_optimize(A), SPARSE_STATUS_SUCCESS, "optimize with hints");
        check_status(mkl_sparse_d_mv(op, 1.0, A, GEN, x, 0.0, y2), SPARSE_STATUS_SUCCESS, "mv after optimize");
        ref_mv(d, M, K, op, x, r);
        int same = 1, ok = 1;
        for (MKL_INT i = 0; i < out; i++) {
            same &= y[i] == y2[i];
            ok &= near(y2[i], r[i]);
        }
        check(same && ok, o ? "hinted mv T: bitwise as unhinted, equals reference" : "hinted mv N: bitwise as unhinted, equals reference");
    }
    /* the caller reorders a row in place (same matrix, other structure): the analysis no
     * longer matches and is not used */
    {
        MKL_INT tc = ci[0];
        double tv = v[0];
        ci[0] = ci[1], v[0] = v[1], ci[1] = tc, v[1] = tv;
        for (int o = 0; o < 2; o++) {
            sparse_operation_t op = o ? T_ : N_;
            int ok = mkl_sparse_d_mv(op, 1.0, A, GEN, x, 0.0, y) == SPARSE_STATUS_SUCCESS;
            ref_mv(d, M, K, op, x, r);
            for (MKL_INT i = 0; i < (o ? K : M); i++) ok &= near(y[i], r[i]);
            check(ok, "mv after the caller changed the analysed structure");
        }
    }
    /* order drops the analyses; optimize builds them again */
    check_status(mkl_sparse_order(A), SPARSE_STATUS_SUCCESS, "order");
    check_status(mkl_sparse_optimize(A), SPARSE_STATUS_SUCCESS, "optimize after order");
    check(mkl_sparse_d_mv(N_, 1.0, A, GEN, x, 0.0, y) == SPARSE_STATUS_SUCCESS && near(y[0], -2 * 1 + 1.5 * 3),
          "mv after order and optimize");
    /* memory hint NONE: no stored transpose, T still right */
    check_status(mkl_sparse_set_memory_hint(A, SPARSE_MEMORY_NONE), SPARSE_STATUS_SUCCESS, "memory hint NONE");
    check_status(mkl_sparse_set_mm_hint(A, T_, GEN, SPARSE_LAYOUT_COLUMN_MAJOR, 2, 10), SPARSE_STATUS_SUCCESS, "mm hint");
    check_status(mkl_sparse_optimize(A), SPARSE_STATUS_SUCCESS, "optimize under NONE");
    {
        int ok = mkl_sparse_d_mv(T_, 2.0, A, GEN, x, 0.0, y) == SPARSE_STATUS_SUCCESS;
        ref_mv(d, M, K, T_, x, r);
        for (MKL_INT i = 0; i < K; i++) ok &= near(y[i], 2 * r[i]);
        check(ok, "mv T under memory hint NONE");
    }
    check_status(mkl_sparse_set_mv_hint(A, N_, (struct matrix_descr){SPARSE_MATRIX_TYPE_TRIANGULAR,
                                                                      SPARSE_FILL_MODE_LOWER, SPARSE_DIAG_NON_UNIT}, 1),
                 SPARSE_STATUS_NOT_SUPPORTED, "mv hint with a triangular descriptor");
    mkl_sparse_destroy(A);
}

/* C = A^T A staged, hinted and optimized before its values exist; mv with it afterwards. */
static void test_deferred_analysis(void) {
    sparse_matrix_t A, C = NULL;
    double d[M * K], c[K * K], x[K] = {1, 2, 3, 4, 5}, y[K], r[K];
    mkl_sparse_d_create_csr(&A, SPARSE_INDEX_BASE_ZERO, M, K, a_rp, a_rp + 1, a_ci, a_v);
    check_status(mkl_sparse_sp2m(T_, GEN, A, N_, GEN, A, SPARSE_STAGE_FULL_MULT_NO_VAL, &C), SPARSE_STATUS_SUCCESS,
                 "sp2m T N symbolic");
    check_status(mkl_sparse_set_mv_hint(C, N_, GEN, 5), SPARSE_STATUS_SUCCESS, "hint on a symbolic result");
    check_status(mkl_sparse_optimize(C), SPARSE_STATUS_SUCCESS, "optimize on a symbolic result (deferred)");
    check_status(mkl_sparse_d_mv(N_, 1.0, C, GEN, x, 0.0, y), SPARSE_STATUS_INVALID_VALUE, "mv without values");
    check_status(mkl_sparse_sp2m(N_, GEN, A, N_, GEN, A, SPARSE_STAGE_FINALIZE_MULT, &C), SPARSE_STATUS_INVALID_VALUE,
                 "FINALIZE with other operations than the symbolic stage");
    check_status(mkl_sparse_sypr(T_, A, A, GEN, &C, SPARSE_STAGE_FINALIZE_MULT), SPARSE_STATUS_NOT_SUPPORTED,
                 "sypr with a general B");
    check_status(mkl_sparse_sp2m(T_, GEN, A, N_, GEN, A, SPARSE_STAGE_FINALIZE_MULT, &C), SPARSE_STATUS_SUCCESS,
                 "FINALIZE_MULT");
    dense_of(a_rp, a_ci, a_v, M, K, d);
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++) {
            c[i * K + j] = 0;
            for (int t = 0; t < M; t++) c[i * K + j] += d[t * K + i] * d[t * K + j];
        }
    check(equals_dense(C, c, K, K), "A^T A staged");
    {
        int ok = mkl_sparse_d_mv(N_, 1.0, C, GEN, x, 0.0, y) == SPARSE_STATUS_SUCCESS;
        ref_mv(c, K, K, N_, x, r);
        for (int i = 0; i < K; i++) ok &= near(y[i], r[i]);
        check(ok, "mv with the deferred analysis");
    }
    mkl_sparse_destroy(C);
    C = NULL;
    check_status(mkl_sparse_sp2m(N_, GEN, A, T_, GEN, A, SPARSE_STAGE_FULL_MULT, &C), SPARSE_STATUS_SUCCESS, "FULL_MULT");
    check_status(mkl_sparse_sp2m(N_, GEN, A, T_, GEN, A, SPARSE_STAGE_FINALIZE_MULT, &C), SPARSE_STATUS_INVALID_VALUE,
                 "FINALIZE_MULT on a FULL_MULT result");
    check_status(mkl_sparse_sypr(T_, A, C, (struct matrix_descr){SPARSE_MATRIX_TYPE_SYMMETRIC, SPARSE_FILL_MODE_UPPER,
                                                                  SPARSE_DIAG_NON_UNIT},
                                 &C, SPARSE_STAGE_FINALIZE_MULT),
                 SPARSE_STATUS_INVALID_VALUE, "sypr FINALIZE on an sp2m result");
    mkl_sparse_destroy(C);
    mkl_sparse_destroy(A);
}

/* The same matrix as CSR, 4-array CSR with gaps, CSC and COO: every consumer agrees. */
static void test_formats(void) {
    MKL_INT gs[M], ge[M], gci[2 * M + 10], cs[K + 1], ri[10], cr[10], cc[10];
    double gv[2 * M + 10], cv[10], ov[10], d[M * K], x[8] = {1, -1, 2, -2, 3, -3, 4, -4}, y[8], r[8];
    sparse_matrix_t H[4], R, C;
    MKL_INT q = 0, t = 0;
    const char *names[4] = {"csr", "csr4 (rows with gaps)", "csc", "coo"};
    dense_of(a_rp, a_ci, a_v, M, K, d);
    for (MKL_INT i = 0; i < M; i++) { /* two unused slots before each row */
        q += 2;
        gs[i] = q;
        for (MKL_INT k = a_rp[i]; k < a_rp[i + 1]; k++, q++) gci[q] = a_ci[k], gv[q] = a_v[k];
        ge[i] = q;
    }
    for (MKL_INT j = 0; j < K; j++) {
        cs[j] = t;
        for (MKL_INT i = 0; i < M; i++)
            if (d[i * K + j] != 0) ri[t] = i, cv[t++] = d[i * K + j];
    }
    cs[K] = t;
    for (MKL_INT i = 0; i < M; i++) /* COO in reverse row order */
        for (MKL_INT k = a_rp[i]; k < a_rp[i + 1]; k++) cr[9 - k] = i, cc[9 - k] = a_ci[k], ov[9 - k] = a_v[k];
    mkl_sparse_d_create_csr(&H[0], SPARSE_INDEX_BASE_ZERO, M, K, a_rp, a_rp + 1, a_ci, a_v);
    mkl_sparse_d_create_csr(&H[1], SPARSE_INDEX_BASE_ZERO, M, K, gs, ge, gci, gv);
    mkl_sparse_d_create_csc(&H[2], SPARSE_INDEX_BASE_ZERO, M, K, cs, cs + 1, ri, cv);
    mkl_sparse_d_create_coo(&H[3], SPARSE_INDEX_BASE_ZERO, M, K, 10, cr, cc, ov);
    for (int f = 0; f < 4; f++) {
        char what[96];
        for (int o = 0; o < 2; o++) {
            sparse_operation_t op = o ? T_ : N_;
            int ok = mkl_sparse_d_mv(op, 1.0, H[f], GEN, x, 0.0, y) == SPARSE_STATUS_SUCCESS;
            ref_mv(d, M, K, op, x, r);
            for (MKL_INT i = 0; i < (o ? K : M); i++) ok &= near(y[i], r[i]);
            snprintf(what, sizeof what, "mv %s of %s", o ? "T" : "N", names[f]);
            check(ok, what);
        }
        snprintf(what, sizeof what, "convert_csr + copy of %s", names[f]);
        check(mkl_sparse_convert_csr(H[f], N_, &R) == SPARSE_STATUS_SUCCESS && equals_dense(R, d, M, K), what);
        mkl_sparse_destroy(R);
        if (f < 2) {
            double c[M * M];
            for (int i = 0; i < M; i++)
                for (int j = 0; j < M; j++) {
                    c[i * M + j] = 0;
                    for (int s = 0; s < K; s++) c[i * M + j] += d[i * K + s] * d[j * K + s];
                }
            C = NULL;
            snprintf(what, sizeof what, "sp2m N T of %s", names[f]);
            check(mkl_sparse_sp2m(N_, GEN, H[f], T_, GEN, H[f], SPARSE_STAGE_FULL_MULT, &C) == SPARSE_STATUS_SUCCESS &&
                      equals_dense(C, c, M, M),
                  what);
            mkl_sparse_destroy(C);
        } else {
            snprintf(what, sizeof what, "sp2m of %s: NOT_SUPPORTED", names[f]);
            C = NULL;
            check_status(mkl_sparse_spmm(N_, H[f], H[0], &C), SPARSE_STATUS_NOT_SUPPORTED, what);
        }
    }
    check_status(mkl_sparse_order(H[3]), SPARSE_STATUS_NOT_SUPPORTED, "order of COO");
    check(mkl_sparse_copy(H[2], GEN, &R) == SPARSE_STATUS_SUCCESS &&
              mkl_sparse_d_export_csr(R, &(sparse_index_base_t){0}, &(MKL_INT){0}, &(MKL_INT){0}, &(MKL_INT *){0},
                                      &(MKL_INT *){0}, &(MKL_INT *){0}, &(double *){0}) == SPARSE_STATUS_INVALID_VALUE,
          "copy of CSC stays CSC");
    mkl_sparse_destroy(R);
    for (int f = 0; f < 4; f++) mkl_sparse_destroy(H[f]);
}

/* sypr with op N and B's LOWER triangle (real), and op T on complex (taken as C). */
static void test_sypr(void) {
    /* B 5 x 5 symmetric, stored in full; only the lower triangle may be read */
    MKL_INT brp[6], bci[25], q = 0;
    double bv[25], bd[25], ad[M * K], c[M * M], junk = 99;
    MKL_Complex16 zb[25];
    sparse_matrix_t A, B, C = NULL;
    for (int i = 0; i < 5; i++) {
        brp[i] = q;
        for (int j = 0; j < 5; j++)
            if ((i + j) % 3 == 0 || i == j) {
                bci[q] = j;
                bv[q] = j > i ? junk : 1.0 + i + 0.5 * j; /* upper triangle: garbage */
                q++;
            }
    }
    brp[5] = q;
    memset(bd, 0, sizeof bd);
    for (int i = 0; i < 5; i++)
        for (MKL_INT k = brp[i]; k < brp[i + 1]; k++)
            if (bci[k] <= i) bd[i * 5 + bci[k]] = bd[bci[k] * 5 + i] = bv[k];
    dense_of(a_rp, a_ci, a_v, M, K, ad);
    for (int i = 0; i < M; i++) /* C = A B A^T, upper triangle */
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int u = 0; u < K; u++)
                for (int w = 0; w < K; w++) s += ad[i * K + u] * bd[u * 5 + w] * ad[j * K + w];
            c[i * M + j] = j >= i ? s : 0;
        }
    mkl_sparse_d_create_csr(&A, SPARSE_INDEX_BASE_ZERO, M, K, a_rp, a_rp + 1, a_ci, a_v);
    mkl_sparse_d_create_csr(&B, SPARSE_INDEX_BASE_ZERO, 5, 5, brp, brp + 1, bci, bv);
    {
        struct matrix_descr lo = {SPARSE_MATRIX_TYPE_SYMMETRIC, SPARSE_FILL_MODE_LOWER, SPARSE_DIAG_NON_UNIT};
        check(mkl_sparse_sypr(N_, A, B, lo, &C, SPARSE_STAGE_NNZ_COUNT) == SPARSE_STATUS_SUCCESS &&
                  mkl_sparse_sypr(N_, A, B, lo, &C, SPARSE_STAGE_FINALIZE_MULT_NO_VAL) == SPARSE_STATUS_SUCCESS &&
                  mkl_sparse_sypr(N_, A, B, lo, &C, SPARSE_STAGE_FINALIZE_MULT) == SPARSE_STATUS_SUCCESS &&
                  equals_dense(C, c, M, M),
              "sypr N with B's lower triangle, staged from NNZ_COUNT");
        mkl_sparse_destroy(C);
        lo.diag = SPARSE_DIAG_UNIT;
        check_status(mkl_sparse_sypr(N_, A, B, lo, &C, SPARSE_STAGE_FULL_MULT), SPARSE_STATUS_NOT_SUPPORTED,
                     "sypr with a unit diagonal");
        check_status(mkl_sparse_sypr(T_, A, B, (struct matrix_descr){SPARSE_MATRIX_TYPE_SYMMETRIC,
                                                                      SPARSE_FILL_MODE_LOWER, SPARSE_DIAG_NON_UNIT},
                                     &C, SPARSE_STAGE_FULL_MULT),
                     SPARSE_STATUS_INVALID_VALUE, "sypr with mismatched shapes (MKL does not check)");
    }
    mkl_sparse_destroy(A);
    mkl_sparse_destroy(B);
    /* complex: T acts as C and B is Hermitian; compare T with C */
    for (int k = 0; k < 25; k++) zb[k].real = bv[k], zb[k].imag = 0.25 * (k % 4) - 0.5;
    for (int i = 0; i < 5; i++)
        for (MKL_INT k = brp[i]; k < brp[i + 1]; k++)
            if (bci[k] == i) zb[k].imag = 0;
    {
        sparse_matrix_t ZA, ZB, Z1 = NULL, Z2 = NULL;
        struct matrix_descr he = {SPARSE_MATRIX_TYPE_HERMITIAN, SPARSE_FILL_MODE_LOWER, SPARSE_DIAG_NON_UNIT};
        sparse_index_base_t b;
        MKL_INT r1, c1, *rs1, *re1, *ci1, r2, c2, *rs2, *re2, *ci2;
        MKL_Complex16 *v1, *v2;
        int ok;
        /* A^H B A needs A with 5 rows: use the 5 x 5 pattern of B for A too */
        mkl_sparse_z_create_csr(&ZA, SPARSE_INDEX_BASE_ZERO, 5, 5, brp, brp + 1, bci, zb);
        mkl_sparse_z_create_csr(&ZB, SPARSE_INDEX_BASE_ZERO, 5, 5, brp, brp + 1, bci, zb);
        ok = mkl_sparse_sypr(T_, ZA, ZB, he, &Z1, SPARSE_STAGE_FULL_MULT) == SPARSE_STATUS_SUCCESS &&
             mkl_sparse_sypr(C_, ZA, ZB, he, &Z2, SPARSE_STAGE_FULL_MULT) == SPARSE_STATUS_SUCCESS &&
             mkl_sparse_z_export_csr(Z1, &b, &r1, &c1, &rs1, &re1, &ci1, &v1) == SPARSE_STATUS_SUCCESS &&
             mkl_sparse_z_export_csr(Z2, &b, &r2, &c2, &rs2, &re2, &ci2, &v2) == SPARSE_STATUS_SUCCESS &&
             re1[r1 - 1] == re2[r2 - 1];
        for (MKL_INT k = 0; ok && k < re1[r1 - 1]; k++)
            ok = ci1[k] == ci2[k] && v1[k].real == v2[k].real && v1[k].imag == v2[k].imag;
        for (MKL_INT i = 0; ok && i < r1; i++) /* diagonal of a Hermitian product is real */
            for (MKL_INT k = rs1[i]; k < re1[i]; k++)
                if (ci1[k] == i) ok = fabs(v1[k].imag) <= 1e-12;
        check(ok, "complex sypr: T gives C's result, Hermitian diagonal");
        mkl_sparse_destroy(Z1);
        mkl_sparse_destroy(Z2);
        mkl_sparse_destroy(ZA);
        mkl_sparse_destroy(ZB);
    }
}

/* What MKL leaves unchecked, the layer refuses (nothing written). */
static void test_unchecked(void) {
    sparse_matrix_t A, F, W, C = NULL;
    float fv[10];
    double x[8] = {1, 1, 1, 1, 1, 1, 1, 1}, y[16], dc[64];
    MKL_INT64 rp64[M + 1], ci64[10];
    for (int k = 0; k < 10; k++) fv[k] = (float)a_v[k], ci64[k] = a_ci[k];
    for (int i = 0; i <= M; i++) rp64[i] = a_rp[i];
    for (int i = 0; i < 16; i++) y[i] = -7;
    mkl_sparse_d_create_csr(&A, SPARSE_INDEX_BASE_ZERO, M, K, a_rp, a_rp + 1, a_ci, a_v);
    mkl_sparse_s_create_csr(&F, SPARSE_INDEX_BASE_ZERO, M, K, a_rp, a_rp + 1, a_ci, fv);
    mkl_sparse_d_create_csr_64(&W, SPARSE_INDEX_BASE_ZERO, M, K, rp64, rp64 + 1, ci64, (double *)a_v);
    check_status(mkl_sparse_spmm(T_, A, F, &C), SPARSE_STATUS_INVALID_VALUE, "double times float");
#ifndef MKL_ILP64 /* under ILP64 every name is a _64 entry point: one width only */
    check_status(mkl_sparse_spmm(T_, A, W, &C), SPARSE_STATUS_INVALID_VALUE, "LP64 handle times _64 handle");
#endif
    check_status(mkl_sparse_d_mm(N_, 1.0, A, GEN, SPARSE_LAYOUT_ROW_MAJOR, x, 2, 1, 0.0, y, 2),
                 SPARSE_STATUS_INVALID_VALUE, "mm with ldx too small");
    check(y[0] == -7, "mm wrote nothing on failure");
    check_status(mkl_sparse_d_spmmd(T_, A, A, SPARSE_LAYOUT_ROW_MAJOR, dc, 4), SPARSE_STATUS_INVALID_VALUE,
                 "spmmd with ldc too small");
    check_status(mkl_sparse_s_mv(N_, 1.0f, A, GEN, (float *)x, 0.0f, (float *)y), SPARSE_STATUS_INVALID_VALUE,
                 "mv of another precision");
    {
        sparse_index_base_t b;
        MKL_INT64 r, c, *rs, *re, *ci;
        double *v;
#ifndef MKL_ILP64
        check_status(mkl_sparse_d_export_csr_64(A, &b, &r, &c, &rs, &re, &ci, &v), SPARSE_STATUS_INVALID_VALUE,
                     "_64 export of an LP64 handle");
#endif
        check_status(mkl_sparse_d_export_csr_64(W, &b, &r, &c, &rs, &re, &ci, &v), SPARSE_STATUS_SUCCESS,
                     "_64 export of a _64 handle");
        check(rs == rp64 && ci == ci64, "_64 export returns the caller's arrays");
    }
    mkl_sparse_destroy(W);
    mkl_sparse_destroy(F);
    mkl_sparse_destroy(A);
}

typedef struct {
    sparse_matrix_t h;
    const double *d; /* dense reference, M x M */
    int ok;
} mv_job;

static void *mv_many(void *p) {
    mv_job *j = (mv_job *)p;
    double x[M] = {1, 2, 3, 4, 5, 6}, y[M], r[M];
    ref_mv(j->d, M, M, N_, x, r);
    j->ok = 1;
    for (int it = 0; it < 200; it++) {
        if (mkl_sparse_d_mv(N_, 1.0, j->h, GEN, x, 0.0, y) != SPARSE_STATUS_SUCCESS) j->ok = 0;
        for (int i = 0; i < M; i++) j->ok &= near(y[i], r[i]);
    }
    return NULL;
}

static void test_threads_and_service(void) {
    sparse_matrix_t C = NULL, A;
    mv_job jobs[3];
    pthread_t th[3];
    MKLVersion ver;
    double d[M * K], c[M * M];
    void *p;
    dense_of(a_rp, a_ci, a_v, M, K, d);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            c[i * M + j] = 0;
            for (int s = 0; s < K; s++) c[i * M + j] += d[i * K + s] * d[j * K + s];
        }
    mkl_sparse_d_create_csr(&A, SPARSE_INDEX_BASE_ZERO, M, K, a_rp, a_rp + 1, a_ci, a_v);
    /* an sp2m result hinted and optimized before its values: three threads race to its first
     * mv, which builds the deferred analysis once */
    mkl_sparse_sp2m(N_, GEN, A, T_, GEN, A, SPARSE_STAGE_NNZ_COUNT, &C);
    mkl_sparse_set_mv_hint(C, N_, GEN, 600);
    mkl_sparse_optimize(C);
    mkl_sparse_sp2m(N_, GEN, A, T_, GEN, A, SPARSE_STAGE_FINALIZE_MULT, &C);
    for (int t = 0; t < 3; t++) {
        jobs[t].h = C;
        jobs[t].d = c;
        pthread_create(&th[t], NULL, mv_many, &jobs[t]);
    }
    for (int t = 0; t < 3; t++) pthread_join(th[t], NULL);
    check(jobs[0].ok && jobs[1].ok && jobs[2].ok, "mv from three threads on one handle (deferred analysis)");
    mkl_sparse_destroy(C);
    mkl_sparse_destroy(A);

    mkl_get_version(&ver);
    check(ver.MajorVersion >= 0 && ver.ProductStatus && ver.Build && ver.Processor && ver.Platform, "mkl_get_version");
    mkl_set_num_threads(1);
    check(mkl_get_max_threads() == 1, "mkl_set_num_threads(1)");
    mkl_set_num_threads(0);
    check(mkl_get_max_threads() >= 1, "mkl_set_num_threads(0) restores the default");
    p = mkl_malloc(1000, 4096);
    check(p && ((uintptr_t)p % 4096) == 0, "mkl_malloc aligned");
    mkl_free(p);
    p = mkl_malloc(10, 3);
    check(p && ((uintptr_t)p % sizeof(void *)) == 0, "mkl_malloc with an unusable alignment");
    mkl_free(p);
    mkl_free(NULL);
}

int main(void) {
    test_hints();
    test_deferred_analysis();
    test_formats();
    test_sypr();
    test_unchecked();
    test_threads_and_service();
    printf("layer_test (sizeof(MKL_INT)=%u): %d passed, %d failed\n", (unsigned)sizeof(MKL_INT), g_pass, g_fail);
    return g_fail ? 1 : 0;
}

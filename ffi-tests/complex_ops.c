/* Complex values (C99 double _Complex, float _Complex) and transposed operands through the
 * C ABI: spgemm_symbolic_op / spgemm_numeric / spgemm_multiply_op for every op pair
 * (N, T, C) against a dense reference, numeric reuse after new values of A and B (through
 * the transposes and the conjugation), the same with 1-based int64 offsets and column
 * indices on rectangular inputs (structure-only numeric phase, then values, then reuse
 * errors: changed structure, wrong operand, pattern-only B), spgemm_spmm_scaled with
 * complex alpha and beta for every op and layout (beta = 0 with NaN in Y, the analysis object), real matrices with
 * SPGEMM_OPERATION_CONJUGATE_TRANSPOSE, and the error paths: bad op codes, value types
 * that differ, shapes that op makes wrong, NULL scalars, misaligned complex arrays, and
 * SPGEMM_BACKEND_CUDA with complex values or transposed operands (NOT_SUPPORTED, decided
 * before any device is looked for). Values are small integers and halves: every sum is
 * exact, so results are compared with ==. */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef double _Complex zval;
typedef float _Complex cval;

/* Dense m x n complex matrix, row-major. */
typedef struct {
    int m, n;
    zval *d;
} dense_t;

static dense_t dense_new(int m, int n) {
    dense_t a;
    a.m = m;
    a.n = n;
    a.d = calloc((size_t)(m * n > 0 ? m * n : 1), sizeof(zval));
    return a;
}

/* A pattern with about a third of the entries, some rows empty; values from `seed`. */
static dense_t dense_random(int m, int n, int seed) {
    dense_t a = dense_new(m, n);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            int h = (i * 7 + j * 13 + seed * 5) % 11;
            if (h < 4 && i % 4 != 3) {
                double re = (double)((i + 2 * j + seed) % 5) - 2.0;
                double im = (double)((3 * i + j + seed) % 7) * 0.5 - 1.5;
                a.d[i * n + j] = re + im * I;
            }
        }
    }
    return a;
}

/* CSR of a dense matrix, entries where the pattern of `seed` says (values may be 0). */
typedef struct {
    int m, n, nnz;
    int64_t *ptr;
    int32_t *col;
    zval *zv;
    cval *cv;
} csr_t;

static csr_t to_csr(const dense_t *a, int seed) {
    csr_t c;
    c.m = a->m;
    c.n = a->n;
    c.ptr = malloc(sizeof(int64_t) * (size_t)(a->m + 1));
    c.col = malloc(sizeof(int32_t) * (size_t)(a->m * a->n + 1));
    c.zv = malloc(sizeof(zval) * (size_t)(a->m * a->n + 1));
    c.cv = malloc(sizeof(cval) * (size_t)(a->m * a->n + 1));
    c.nnz = 0;
    c.ptr[0] = 0;
    for (int i = 0; i < a->m; i++) {
        for (int j = 0; j < a->n; j++) {
            int h = (i * 7 + j * 13 + seed * 5) % 11;
            if (h < 4 && i % 4 != 3) {
                c.col[c.nnz] = j;
                c.zv[c.nnz] = a->d[i * a->n + j];
                c.cv[c.nnz] = (cval)a->d[i * a->n + j];
                c.nnz++;
            }
        }
        c.ptr[i + 1] = c.nnz;
    }
    return c;
}

static void csr_free(csr_t *c) {
    free(c->ptr);
    free(c->col);
    free(c->zv);
    free(c->cv);
}

static spgemm_matrix_t *describe(const csr_t *c, int single) {
    spgemm_matrix_t *m = NULL;
    spgemm_status_t s = spgemm_matrix_create_csr(
        &m, c->m, c->n, SPGEMM_INDEX_INT64, c->ptr, SPGEMM_INDEX_INT32, c->col,
        single ? SPGEMM_VALUE_COMPLEX_FLOAT : SPGEMM_VALUE_COMPLEX_DOUBLE,
        single ? (const void *)c->cv : (const void *)c->zv, SPGEMM_INDEX_BASE_ZERO);
    CHECK(s == SPGEMM_STATUS_SUCCESS);
    return m;
}

/* op(A)(i, j) and op(A)'s shape. */
static zval op_at(const dense_t *a, int op, int i, int j) {
    if (op == SPGEMM_OPERATION_NON_TRANSPOSE) return a->d[i * a->n + j];
    if (op == SPGEMM_OPERATION_TRANSPOSE) return a->d[j * a->n + i];
    return conj(a->d[j * a->n + i]);
}
static int op_rows(const dense_t *a, int op) {
    return op == SPGEMM_OPERATION_NON_TRANSPOSE ? a->m : a->n;
}
static int op_cols(const dense_t *a, int op) {
    return op == SPGEMM_OPERATION_NON_TRANSPOSE ? a->n : a->m;
}

/* Whether C (sparse, 0-based, rows sorted) equals the dense op(A)*op(B): every entry of
 * C holds the dense value, every nonzero of the dense product is in C. */
static int matches(const dense_t *a, int op_a, const dense_t *b, int op_b, const int64_t *ptr,
                   const int32_t *col, const zval *zv, const cval *cv) {
    int m = op_rows(a, op_a), k = op_cols(b, op_b), n = op_cols(a, op_a);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < k; j++) {
            zval want = 0;
            for (int t = 0; t < n; t++) want += op_at(a, op_a, i, t) * op_at(b, op_b, t, j);
            zval got = 0;
            int found = 0;
            for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
                if (col[p] == j) {
                    got = zv ? zv[p] : (zval)cv[p];
                    found = 1;
                }
            }
            if (got != want || (!found && want != 0)) {
                fprintf(stderr, "  C(%d, %d) = %g%+gi, expected %g%+gi (ops %d %d)\n", i, j,
                        creal(got), cimag(got), creal(want), cimag(want), op_a, op_b);
                return 0;
            }
        }
    }
    return 1;
}

/* Two-phase product op(A)*op(B) with a reuse round: new values of A and B (same
 * structure), the same plan, the same C arrays. */
static void two_phase(spgemm_handle_t *h, int op_a, int op_b, int single) {
    dense_t a = dense_random(5, 4, 1);
    int inner = op_cols(&a, op_a);
    int bm = op_b == SPGEMM_OPERATION_NON_TRANSPOSE ? inner : 3;
    int bn = op_b == SPGEMM_OPERATION_NON_TRANSPOSE ? 3 : inner;
    dense_t b = dense_random(bm, bn, 2);
    csr_t ac = to_csr(&a, 1), bc = to_csr(&b, 2);
    /* The dense copies hold exactly the CSR values (pattern entries only). */
    spgemm_matrix_t *am = describe(&ac, single), *bm_ = describe(&bc, single);
    int m = op_rows(&a, op_a);
    int64_t *cptr = malloc(sizeof(int64_t) * (size_t)(m + 1));
    spgemm_plan_t *plan = NULL;
    if (CHECK_OK(h, spgemm_symbolic_op(h, op_a, am, op_b, bm_, SPGEMM_INDEX_INT64,
                                       SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ZERO, cptr,
                                       &plan))) {
        int64_t nnz = -1, rows = -1, cols = -1;
        CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
        CHECK_OK(h, spgemm_plan_get_info(plan, &rows, &cols, NULL));
        CHECK(rows == m && cols == op_cols(&b, op_b));
        int32_t *ccol = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
        zval *czv = malloc(sizeof(zval) * (size_t)(nnz + 1));
        cval *ccv = malloc(sizeof(cval) * (size_t)(nnz + 1));
        for (int round = 0; round < 3; round++) {
            if (round > 0) {
                /* New values in place (same structure), in the dense copies too. */
                for (int p = 0; p < ac.nnz; p++) {
                    ac.zv[p] = (double)((p + round) % 4) - 1.0 + ((p * round) % 3 - 1) * I;
                    ac.cv[p] = (cval)ac.zv[p];
                }
                for (int p = 0; p < bc.nnz; p++) {
                    bc.zv[p] = (double)((p * 3 + round) % 5) * 0.5 - ((p + round) % 2) * I;
                    bc.cv[p] = (cval)bc.zv[p];
                }
                memset(a.d, 0, sizeof(zval) * (size_t)(a.m * a.n));
                memset(b.d, 0, sizeof(zval) * (size_t)(b.m * b.n));
                for (int i = 0; i < ac.m; i++)
                    for (int64_t p = ac.ptr[i]; p < ac.ptr[i + 1]; p++)
                        a.d[i * a.n + ac.col[p]] = ac.zv[p];
                for (int i = 0; i < bc.m; i++)
                    for (int64_t p = bc.ptr[i]; p < bc.ptr[i + 1]; p++)
                        b.d[i * b.n + bc.col[p]] = bc.zv[p];
            }
            CHECK_OK(h, spgemm_numeric(h, plan, am, bm_, ccol, single ? (void *)ccv : (void *)czv));
            if (!CHECK(matches(&a, op_a, &b, op_b, cptr, ccol, single ? NULL : czv, ccv))) {
                fprintf(stderr, "  two_phase ops %d %d single %d round %d\n", op_a, op_b, single,
                        round);
            }
        }
        free(ccol);
        free(czv);
        free(ccv);
    }
    spgemm_plan_destroy(plan);
    free(cptr);
    spgemm_matrix_destroy(am);
    spgemm_matrix_destroy(bm_);
    csr_free(&ac);
    csr_free(&bc);
    free(a.d);
    free(b.d);
}

/* A CSR of `a` with int64 offsets and int64 column indices, 1-based (Fortran), the
 * pattern of `seed`; complex double and complex float copies of the values. */
typedef struct {
    int m, n;
    int64_t nnz;
    int64_t *ptr, *col;
    zval *zv;
    cval *cv;
} csr64_t;

static csr64_t to_csr64(const dense_t *a, int seed) {
    csr_t c = to_csr(a, seed);
    csr64_t d;
    d.m = c.m;
    d.n = c.n;
    d.nnz = c.nnz;
    d.ptr = malloc(sizeof(int64_t) * (size_t)(c.m + 1));
    d.col = malloc(sizeof(int64_t) * (size_t)(c.nnz + 1));
    d.zv = malloc(sizeof(zval) * (size_t)(c.nnz + 1));
    d.cv = malloc(sizeof(cval) * (size_t)(c.nnz + 1));
    for (int i = 0; i <= c.m; i++) d.ptr[i] = c.ptr[i] + 1;
    for (int p = 0; p < c.nnz; p++) {
        d.col[p] = (int64_t)c.col[p] + 1;
        d.zv[p] = c.zv[p];
        d.cv[p] = c.cv[p];
    }
    csr_free(&c);
    return d;
}

static void csr64_free(csr64_t *c) {
    free(c->ptr);
    free(c->col);
    free(c->zv);
    free(c->cv);
}

static spgemm_matrix_t *describe64(const csr64_t *c, int single) {
    spgemm_matrix_t *m = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr(
                       &m, c->m, c->n, SPGEMM_INDEX_INT64, c->ptr, SPGEMM_INDEX_INT64, c->col,
                       single ? SPGEMM_VALUE_COMPLEX_FLOAT : SPGEMM_VALUE_COMPLEX_DOUBLE,
                       single ? (const void *)c->cv : (const void *)c->zv,
                       SPGEMM_INDEX_BASE_ONE));
    return m;
}

/* The dense matrix of a 1-based csr64_t (its current values). */
static void refill(dense_t *d, const csr64_t *c) {
    memset(d->d, 0, sizeof(zval) * (size_t)(d->m * d->n));
    for (int i = 0; i < c->m; i++)
        for (int64_t p = c->ptr[i] - 1; p < c->ptr[i + 1] - 1; p++)
            d->d[i * d->n + (c->col[p] - 1)] += c->zv[p];
}

/* Whether the 1-based C (int64 offsets and indices, rows sorted) equals op(A)*op(B); with
 * `zv` and `cv` NULL only the structure is compared (every entry of C in the product's
 * pattern, every nonzero of the product in C). */
static int matches64(const dense_t *a, int op_a, const dense_t *b, int op_b, const int64_t *ptr,
                     const int64_t *col, const zval *zv, const cval *cv) {
    int m = op_rows(a, op_a), k = op_cols(b, op_b), n = op_cols(a, op_a);
    if (ptr[0] != 1) return 0;
    for (int i = 0; i < m; i++) {
        for (int64_t p = ptr[i] - 1; p + 1 < ptr[i + 1] - 1; p++) {
            if (col[p] >= col[p + 1]) return 0; /* sorted, no repeats */
        }
        for (int j = 0; j < k; j++) {
            zval want = 0;
            for (int t = 0; t < n; t++) want += op_at(a, op_a, i, t) * op_at(b, op_b, t, j);
            zval got = 0;
            int found = 0;
            for (int64_t p = ptr[i] - 1; p < ptr[i + 1] - 1; p++) {
                if (col[p] == j + 1) {
                    found = 1;
                    if (zv) got = zv[p];
                    if (cv) got = (zval)cv[p];
                }
            }
            if (!found && want != 0) return 0;
            if ((zv || cv) && got != want) {
                fprintf(stderr, "  C(%d, %d) = %g%+gi, expected %g%+gi (ops %d %d, 1-based)\n",
                        i, j, creal(got), cimag(got), creal(want), cimag(want), op_a, op_b);
                return 0;
            }
        }
    }
    return 1;
}

/* 1-based inputs and output with 64-bit offsets and column indices, rectangular A (7 x 5)
 * and B, every op pair: the structure-only numeric phase, then values, then two rounds of
 * new values through the same plan, then reuse errors: inputs whose structure changed
 * (PLAN_MISMATCH, validation on), A given where the plan expects B (PLAN_MISMATCH), a
 * pattern-only B for a numeric call with values (INVALID_VALUE). */
static void one_based_int64(spgemm_handle_t *h, int op_a, int op_b, int single) {
    dense_t a = dense_random(7, 5, 6);
    int inner = op_cols(&a, op_a);
    dense_t b = op_b == SPGEMM_OPERATION_NON_TRANSPOSE ? dense_random(inner, 6, 7)
                                                       : dense_random(6, inner, 7);
    csr64_t ac = to_csr64(&a, 6), bc = to_csr64(&b, 7);
    spgemm_matrix_t *am = describe64(&ac, single), *bm = describe64(&bc, single);
    int m = op_rows(&a, op_a);
    int64_t *cptr = malloc(sizeof(int64_t) * (size_t)(m + 1));
    spgemm_plan_t *plan = NULL;
    if (!CHECK_OK(h, spgemm_symbolic_op(h, op_a, am, op_b, bm, SPGEMM_INDEX_INT64,
                                        SPGEMM_INDEX_INT64, SPGEMM_INDEX_BASE_ONE, cptr,
                                        &plan))) {
        fprintf(stderr, "  one_based_int64 ops %d %d single %d\n", op_a, op_b, single);
    } else {
        int64_t nnz = -1;
        CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
        CHECK(nnz == cptr[m] - 1);
        int64_t *ccol = malloc(sizeof(int64_t) * (size_t)(nnz + 1));
        zval *czv = malloc(sizeof(zval) * (size_t)(nnz + 1));
        cval *ccv = malloc(sizeof(cval) * (size_t)(nnz + 1));
        CHECK_OK(h, spgemm_numeric_structure(h, plan, am, bm, ccol));
        CHECK(matches64(&a, op_a, &b, op_b, cptr, ccol, NULL, NULL));
        for (int round = 0; round < 3; round++) {
            if (round > 0) {
                for (int64_t p = 0; p < ac.nnz; p++) {
                    ac.zv[p] = (double)((p * 5 + round) % 7) - 3.0 + ((p + round) % 3) * 0.5 * I;
                    ac.cv[p] = (cval)ac.zv[p];
                }
                for (int64_t p = 0; p < bc.nnz; p++) {
                    bc.zv[p] = (double)((p + 2 * round) % 3) - ((p * round) % 4 - 1.5) * I;
                    bc.cv[p] = (cval)bc.zv[p];
                }
                refill(&a, &ac);
                refill(&b, &bc);
            }
            CHECK_OK(h, spgemm_numeric(h, plan, am, bm, ccol,
                                       single ? (void *)ccv : (void *)czv));
            if (!CHECK(matches64(&a, op_a, &b, op_b, cptr, ccol, single ? NULL : czv,
                                 single ? ccv : NULL))) {
                fprintf(stderr, "  one_based_int64 ops %d %d single %d round %d\n", op_a, op_b,
                        single, round);
            }
        }
        /* A's structure changed (one column index moved, same shape and nnz). */
        if (ac.nnz > 0) {
            int64_t keep = ac.col[0];
            ac.col[0] = keep == 1 ? 2 : 1;
            CHECK_ERR(h, spgemm_numeric(h, plan, am, bm, ccol, single ? (void *)ccv : (void *)czv),
                      SPGEMM_STATUS_PLAN_MISMATCH, WORDS("A", "structure"));
            ac.col[0] = keep;
        }
        /* A given where the plan expects B (A is 7 x 5, B has 6 rows or columns), and a
         * pattern-only B for a numeric call with values. */
        spgemm_matrix_t *bp = NULL;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&bp, bc.m, bc.n, SPGEMM_INDEX_INT64, bc.ptr,
                                                SPGEMM_INDEX_INT64, bc.col,
                                                single ? SPGEMM_VALUE_COMPLEX_FLOAT
                                                       : SPGEMM_VALUE_COMPLEX_DOUBLE,
                                                NULL, SPGEMM_INDEX_BASE_ONE));
        CHECK_ERR(h, spgemm_numeric(h, plan, am, am, ccol, single ? (void *)ccv : (void *)czv),
                  SPGEMM_STATUS_PLAN_MISMATCH, WORDS("plan"));
        CHECK_ERR(h, spgemm_numeric(h, plan, am, bp, ccol, single ? (void *)ccv : (void *)czv),
                  SPGEMM_STATUS_INVALID_VALUE, WORDS("B", "values"));
        /* The plan still works after the failures. */
        CHECK_OK(h, spgemm_numeric(h, plan, am, bm, ccol, single ? (void *)ccv : (void *)czv));
        CHECK(matches64(&a, op_a, &b, op_b, cptr, ccol, single ? NULL : czv, single ? ccv : NULL));
        spgemm_matrix_destroy(bp);
        free(ccol);
        free(czv);
        free(ccv);
    }
    spgemm_plan_destroy(plan);
    free(cptr);
    spgemm_matrix_destroy(am);
    spgemm_matrix_destroy(bm);
    csr64_free(&ac);
    csr64_free(&bc);
    free(a.d);
    free(b.d);
}

/* One-call product op(A)*op(B) into library-owned arrays. */
static void one_call(spgemm_handle_t *h, int op_a, int op_b) {
    dense_t a = dense_random(4, 6, 3);
    int inner = op_cols(&a, op_a);
    dense_t b = op_b == SPGEMM_OPERATION_NON_TRANSPOSE ? dense_random(inner, 5, 4)
                                                       : dense_random(5, inner, 4);
    csr_t ac = to_csr(&a, 3), bc = to_csr(&b, 4);
    spgemm_matrix_t *am = describe(&ac, 0), *bm = describe(&bc, 0), *c = NULL;
    if (CHECK_OK(h, spgemm_multiply_op(h, op_a, am, op_b, bm, SPGEMM_INDEX_INT64,
                                       SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ZERO, &c))) {
        int64_t rows = 0, cols = 0, nnz = 0;
        spgemm_value_type_t vt = -1;
        CHECK_OK(h, spgemm_matrix_get_info(c, &rows, &cols, &nnz, NULL, NULL, &vt, NULL));
        CHECK(rows == op_rows(&a, op_a) && cols == op_cols(&b, op_b));
        CHECK(vt == SPGEMM_VALUE_COMPLEX_DOUBLE);
        const void *p = NULL, *ci = NULL, *v = NULL;
        CHECK_OK(h, spgemm_matrix_export_csr(c, &p, &ci, &v));
        CHECK(matches(&a, op_a, &b, op_b, p, ci, v, NULL));
    }
    spgemm_matrix_destroy(c);
    spgemm_matrix_destroy(am);
    spgemm_matrix_destroy(bm);
    csr_free(&ac);
    csr_free(&bc);
    free(a.d);
    free(b.d);
}

/* Y = alpha op(A) X + beta Y against a dense reference (exact: small values). */
static void spmm_case(spgemm_handle_t *h, int op, int layout, int k, int single, zval alpha,
                      zval beta, int nan_y, const spgemm_spmm_analysis_t *an) {
    dense_t a = dense_random(6, 4, 5);
    csr_t ac = to_csr(&a, 5);
    spgemm_matrix_t *am = describe(&ac, single);
    int xr = op_cols(&a, op), yr = op_rows(&a, op);
    int64_t ldx = layout == SPGEMM_LAYOUT_ROW_MAJOR ? k + 1 : xr + 2;
    int64_t ldy = layout == SPGEMM_LAYOUT_ROW_MAJOR ? k + 2 : yr + 1;
    size_t nx = (size_t)(ldx * (layout == SPGEMM_LAYOUT_ROW_MAJOR ? xr : k));
    size_t ny = (size_t)(ldy * (layout == SPGEMM_LAYOUT_ROW_MAJOR ? yr : k));
    zval *xz = malloc(sizeof(zval) * nx), *yz = malloc(sizeof(zval) * ny);
    cval *xc = malloc(sizeof(cval) * nx), *yc = malloc(sizeof(cval) * ny);
    zval *y0 = malloc(sizeof(zval) * ny);
    for (size_t t = 0; t < nx; t++) {
        xz[t] = (double)((t * 3) % 7) - 3.0 + ((double)(t % 4) - 1.5) * I;
        xc[t] = (cval)xz[t];
    }
    for (size_t t = 0; t < ny; t++) {
        y0[t] = nan_y ? NAN + NAN * I : (double)(t % 5) - 2.0 + (double)(t % 3) * I;
        yz[t] = y0[t];
        yc[t] = (cval)y0[t];
    }
    cval alpha_c = (cval)alpha, beta_c = (cval)beta;
    const void *pa = single ? (const void *)&alpha_c : (const void *)&alpha;
    const void *pb = single ? (const void *)&beta_c : (const void *)&beta;
    if (CHECK_OK(h, spgemm_spmm_scaled(h, op, pa, am, an, layout, k,
                                       single ? (const void *)xc : (const void *)xz, ldx, pb,
                                       single ? (void *)yc : (void *)yz, ldy))) {
        int bad = 0;
        for (int i = 0; i < yr; i++) {
            for (int j = 0; j < k; j++) {
                zval s = 0;
                for (int t = 0; t < xr; t++) {
                    size_t xo = layout == SPGEMM_LAYOUT_ROW_MAJOR ? (size_t)(t * ldx + j)
                                                                 : (size_t)(j * ldx + t);
                    s += op_at(&a, op, i, t) * xz[xo];
                }
                size_t yo = layout == SPGEMM_LAYOUT_ROW_MAJOR ? (size_t)(i * ldy + j)
                                                             : (size_t)(j * ldy + i);
                zval want = beta == 0 ? alpha * s : alpha * s + beta * y0[yo];
                zval got = single ? (zval)yc[yo] : yz[yo];
                if (got != want) bad++;
            }
        }
        /* Padding between rows (columns) is not written. */
        for (size_t t = 0; t < ny; t++) {
            size_t minor = t % (size_t)ldy;
            size_t lim = (size_t)(layout == SPGEMM_LAYOUT_ROW_MAJOR ? k : yr);
            zval got = single ? (zval)yc[t] : yz[t];
            if (minor >= lim && !(got == y0[t] || (nan_y && isnan(creal(got))))) bad++;
        }
        if (!CHECK(bad == 0)) {
            fprintf(stderr, "  spmm op %d layout %d k %d single %d nan_y %d: %d bad\n", op,
                    layout, k, single, nan_y, bad);
        }
    }
    free(xz);
    free(yz);
    free(xc);
    free(yc);
    free(y0);
    spgemm_matrix_destroy(am);
    csr_free(&ac);
    free(a.d);
}

/* Real matrices: op C is op T (conjugation is the identity), through spgemm_spmm_scaled
 * with double and float scalars and through spgemm_symbolic_op. */
static void real_conjugate_transpose(spgemm_handle_t *h) {
    const int32_t ptr[4] = {0, 2, 3, 5};
    const int32_t col[5] = {0, 2, 1, 0, 1};
    const double v[5] = {1.0, -2.0, 3.0, 0.5, 4.0};
    const float vf[5] = {1.0f, -2.0f, 3.0f, 0.5f, 4.0f};
    spgemm_matrix_t *a = NULL, *af = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&a, 3, 3, SPGEMM_INDEX_INT32, ptr,
                                            SPGEMM_INDEX_INT32, col, SPGEMM_VALUE_FLOAT64, v,
                                            SPGEMM_INDEX_BASE_ZERO));
    CHECK_OK(NULL, spgemm_matrix_create_csr(&af, 3, 3, SPGEMM_INDEX_INT32, ptr,
                                            SPGEMM_INDEX_INT32, col, SPGEMM_VALUE_FLOAT32, vf,
                                            SPGEMM_INDEX_BASE_ZERO));
    double x[3] = {1.0, 2.0, -1.0}, yt[3] = {0}, yc[3] = {0};
    double alpha = 2.0, beta = 0.0;
    CHECK_OK(h, spgemm_spmm_scaled(h, SPGEMM_OPERATION_TRANSPOSE, &alpha, a, NULL,
                                   SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1, &beta, yt, 1));
    CHECK_OK(h, spgemm_spmm_scaled(h, SPGEMM_OPERATION_CONJUGATE_TRANSPOSE, &alpha, a, NULL,
                                   SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1, &beta, yc, 1));
    CHECK(memcmp(yt, yc, sizeof yt) == 0);
    /* A^T x = (1*1 + 0.5*-1, 3*2 + 4*-1, -2*1) times 2. */
    CHECK(yt[0] == 1.0 && yt[1] == 4.0 && yt[2] == -4.0);
    float xf[3] = {1.0f, 2.0f, -1.0f}, yf[3] = {9.0f, 9.0f, 9.0f}, af_ = 2.0f, bf = 1.0f;
    CHECK_OK(h, spgemm_spmm_scaled(h, SPGEMM_OPERATION_CONJUGATE_TRANSPOSE, &af_, af, NULL,
                                   SPGEMM_LAYOUT_COL_MAJOR, 1, xf, 3, &bf, yf, 3));
    CHECK(yf[0] == 10.0f && yf[1] == 13.0f && yf[2] == 5.0f);
    /* The double-scalar entry point takes op C too. */
    double yd[3] = {0};
    CHECK_OK(h, spgemm_spmm(h, SPGEMM_OPERATION_CONJUGATE_TRANSPOSE, 2.0, a, NULL,
                            SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1, 0.0, yd, 1));
    CHECK(memcmp(yt, yd, sizeof yt) == 0);
    /* C = A^H A = A^T A for real A. */
    spgemm_matrix_t *c1 = NULL, *c2 = NULL;
    CHECK_OK(h, spgemm_multiply_op(h, SPGEMM_OPERATION_CONJUGATE_TRANSPOSE, a,
                                   SPGEMM_OPERATION_NON_TRANSPOSE, a, SPGEMM_INDEX_INT32,
                                   SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ZERO, &c1));
    CHECK_OK(h, spgemm_multiply_op(h, SPGEMM_OPERATION_TRANSPOSE, a,
                                   SPGEMM_OPERATION_NON_TRANSPOSE, a, SPGEMM_INDEX_INT32,
                                   SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ZERO, &c2));
    int64_t n1 = 0, n2 = 0;
    const void *p1, *i1, *v1, *p2, *i2, *v2;
    CHECK_OK(h, spgemm_matrix_get_info(c1, NULL, NULL, &n1, NULL, NULL, NULL, NULL));
    CHECK_OK(h, spgemm_matrix_get_info(c2, NULL, NULL, &n2, NULL, NULL, NULL, NULL));
    CHECK_OK(h, spgemm_matrix_export_csr(c1, &p1, &i1, &v1));
    CHECK_OK(h, spgemm_matrix_export_csr(c2, &p2, &i2, &v2));
    CHECK(n1 == n2 && n1 > 0 && memcmp(p1, p2, 4 * 4) == 0 &&
          memcmp(i1, i2, 4 * (size_t)n1) == 0 && memcmp(v1, v2, 8 * (size_t)n1) == 0);
    spgemm_matrix_destroy(c1);
    spgemm_matrix_destroy(c2);
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(af);
}

static void errors(spgemm_handle_t *h) {
    dense_t a = dense_random(5, 4, 1);
    csr_t ac = to_csr(&a, 1);
    spgemm_matrix_t *am = describe(&ac, 0), *af = describe(&ac, 1), *ar = NULL, *c = NULL;
    double rv[64] = {0};
    CHECK_OK(NULL, spgemm_matrix_create_csr(&ar, ac.m, ac.n, SPGEMM_INDEX_INT64, ac.ptr,
                                            SPGEMM_INDEX_INT32, ac.col, SPGEMM_VALUE_FLOAT64, rv,
                                            SPGEMM_INDEX_BASE_ZERO));
    spgemm_plan_t *plan = (spgemm_plan_t *)1;
    const int N_ = SPGEMM_OPERATION_NON_TRANSPOSE, T_ = SPGEMM_OPERATION_TRANSPOSE;
    const int C_ = SPGEMM_OPERATION_CONJUGATE_TRANSPOSE;
    /* Bad op codes, for either operand and SpMM. */
    CHECK_ERR(h, spgemm_symbolic_op(h, 3, am, N_, am, 0, 0, 0, NULL, &plan),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("op_a", "3"));
    CHECK(plan == NULL);
    CHECK_ERR(h, spgemm_symbolic_op(h, T_, am, -1, am, 0, 0, 0, NULL, &plan),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("op_b"));
    CHECK_ERR(h, spgemm_multiply_op(h, 7, am, N_, am, 0, 0, 0, &c),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("op_a"));
    CHECK(c == NULL);
    zval one = 1.0, zero = 0.0, x[20] = {0}, y[20] = {0};
    CHECK_ERR(h, spgemm_spmm_scaled(h, 5, &one, am, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1,
                                    &zero, y, 1),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("op"));
    /* Shapes: A is 5 x 4; A*A and A^T*A^T are undefined, A^T*A and A*A^H are defined. */
    CHECK_ERR(h, spgemm_symbolic_op(h, N_, am, N_, am, 0, 0, 0, NULL, &plan),
              SPGEMM_STATUS_DIMENSION_MISMATCH, WORDS("A", "B", "columns", "rows"));
    CHECK_ERR(h, spgemm_symbolic_op(h, T_, am, C_, am, 0, 0, 0, NULL, &plan),
              SPGEMM_STATUS_DIMENSION_MISMATCH, WORDS("op(A)", "op(B)"));
    CHECK_OK(h, spgemm_symbolic_op(h, C_, am, N_, am, 0, 0, 0, NULL, &plan));
    spgemm_plan_destroy(plan);
    CHECK_OK(h, spgemm_symbolic_op(h, N_, am, C_, am, 0, 0, 0, NULL, &plan));
    spgemm_plan_destroy(plan);
    /* Value types differ between A and B. */
    CHECK_ERR(h, spgemm_symbolic_op(h, T_, am, N_, ar, 0, 0, 0, NULL, &plan),
              SPGEMM_STATUS_TYPE_MISMATCH, WORDS("A", "B"));
    CHECK_ERR(h, spgemm_multiply_op(h, T_, af, N_, am, 0, 0, 0, &c),
              SPGEMM_STATUS_TYPE_MISMATCH, WORDS("A", "B"));
    /* NULL scalars. */
    CHECK_ERR(h, spgemm_spmm_scaled(h, N_, NULL, am, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1,
                                    &zero, y, 1),
              SPGEMM_STATUS_NULL_POINTER, WORDS("alpha"));
    CHECK_ERR(h, spgemm_spmm_scaled(h, N_, &one, am, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1,
                                    NULL, y, 1),
              SPGEMM_STATUS_NULL_POINTER, WORDS("beta"));
    /* Unknown value type code; misaligned complex double values (8-byte alignment). */
    spgemm_matrix_t *bad = NULL;
    CHECK_ERR(NULL, spgemm_matrix_create_csr(&bad, ac.m, ac.n, SPGEMM_INDEX_INT64, ac.ptr,
                                             SPGEMM_INDEX_INT32, ac.col, 4, ac.zv,
                                             SPGEMM_INDEX_BASE_ZERO),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("value_type"));
    CHECK_ERR(NULL, spgemm_matrix_create_csr(&bad, ac.m, ac.n, SPGEMM_INDEX_INT64, ac.ptr,
                                             SPGEMM_INDEX_INT32, ac.col,
                                             SPGEMM_VALUE_COMPLEX_DOUBLE,
                                             (const char *)ac.zv + 4, SPGEMM_INDEX_BASE_ZERO),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("values"));
    CHECK(bad == NULL);
    /* The GPU backend takes neither complex values nor transposed operands: NOT_SUPPORTED
     * whether or not the product would fit the GPU (decided before any device work). The
     * backend can only be selected where a GPU is usable (else NO_DEVICE, option unchanged). */
    spgemm_handle_t *g = NULL;
    CHECK_OK(NULL, spgemm_create(&g));
    spgemm_status_t st = spgemm_set_backend(g, SPGEMM_BACKEND_CUDA);
    CHECK(st == SPGEMM_STATUS_SUCCESS || st == SPGEMM_STATUS_NO_DEVICE);
    double xr[8] = {0}, yr[8] = {0};
    if (st == SPGEMM_STATUS_SUCCESS) {
        CHECK_ERR(g, spgemm_symbolic_op(g, T_, am, N_, am, 0, 0, 0, NULL, &plan),
                  SPGEMM_STATUS_NOT_SUPPORTED, WORDS("GPU"));
        CHECK(plan == NULL);
        CHECK_ERR(g, spgemm_multiply_op(g, N_, am, T_, am, 0, 0, 0, &c),
                  SPGEMM_STATUS_NOT_SUPPORTED, WORDS("GPU"));
        CHECK(c == NULL);
        CHECK_ERR(g, spgemm_symbolic_op(g, T_, ar, N_, ar, 0, 0, 0, NULL, &plan),
                  SPGEMM_STATUS_NOT_SUPPORTED, WORDS("GPU"));
        CHECK_ERR(g, spgemm_symbolic(g, am, af, 0, 0, 0, NULL, &plan),
                  SPGEMM_STATUS_TYPE_MISMATCH, WORDS("A", "B"));
        CHECK_ERR(g, spgemm_spmm_scaled(g, N_, &one, am, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1,
                                        &zero, y, 1),
                  SPGEMM_STATUS_NOT_SUPPORTED, WORDS("complex", "GPU"));
        CHECK_ERR(g, spgemm_spmm(g, C_, 1.0, ar, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 1, xr, 1, 0.0,
                                 yr, 1),
                  SPGEMM_STATUS_NOT_SUPPORTED, WORDS("GPU"));
    } else {
        printf("SKIPPED complex_ops.c SPGEMM_BACKEND_CUDA refusals: no usable GPU (%s)\n",
               spgemm_last_error(g));
    }
    /* Under AUTO (and CPU) the same products run on the CPU. */
    CHECK_OK(g, spgemm_set_backend(g, SPGEMM_BACKEND_AUTO));
    CHECK_OK(g, spgemm_multiply_op(g, N_, am, T_, am, 0, 0, 0, &c));
    spgemm_matrix_destroy(c);
    c = NULL;
    CHECK_OK(g, spgemm_spmm_scaled(g, C_, &one, am, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 1, x, 1,
                                   &zero, y, 1));
    spgemm_destroy(g);
    spgemm_matrix_destroy(am);
    spgemm_matrix_destroy(af);
    spgemm_matrix_destroy(ar);
    csr_free(&ac);
    free(a.d);
}

/* Complex device descriptors: created, but products with them are NOT_SUPPORTED (the GPU
 * has no complex kernels), before any device is looked for; made-up addresses that would
 * fault if read on the host. */
static void device(spgemm_handle_t *h) {
    spgemm_matrix_t *da = NULL;
    const void *fake = (const void *)(uintptr_t)0x7f0000001000u;
    CHECK_OK(NULL, spgemm_matrix_create_csr_device(&da, 4, 4, 6, SPGEMM_INDEX_INT32, fake,
                                                   SPGEMM_INDEX_INT32, fake,
                                                   SPGEMM_VALUE_COMPLEX_DOUBLE, fake,
                                                   SPGEMM_INDEX_BASE_ZERO));
    spgemm_plan_t *plan = NULL;
    CHECK_ERR(h, spgemm_symbolic(h, da, da, 0, 0, 0, NULL, &plan), SPGEMM_STATUS_NOT_SUPPORTED,
              WORDS("complex"));
    CHECK_ERR(h, spgemm_symbolic_op(h, SPGEMM_OPERATION_TRANSPOSE, da,
                                    SPGEMM_OPERATION_NON_TRANSPOSE, da, 0, 0, 0, NULL, &plan),
              SPGEMM_STATUS_NOT_SUPPORTED, WORDS("device"));
    CHECK(plan == NULL);
    spgemm_matrix_destroy(da);
}

int main(void) {
    spgemm_handle_t *h = NULL;
    if (!CHECK_OK(NULL, spgemm_create(&h))) return check_report();
    CHECK_OK(h, spgemm_set_num_threads(h, 2));
    const int ops[3] = {SPGEMM_OPERATION_NON_TRANSPOSE, SPGEMM_OPERATION_TRANSPOSE,
                        SPGEMM_OPERATION_CONJUGATE_TRANSPOSE};
    for (int single = 0; single < 2; single++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) two_phase(h, ops[i], ops[j], single);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) one_call(h, ops[i], ops[j]);
    for (int single = 0; single < 2; single++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) one_based_int64(h, ops[i], ops[j], single);
    zval alphas[3] = {1.0, 0.5 - 1.0 * I, 0.0};
    zval betas[3] = {0.0, 2.0 + 0.5 * I, 1.0};
    for (int single = 0; single < 2; single++)
        for (int i = 0; i < 3; i++)
            for (int layout = 0; layout < 2; layout++)
                for (int t = 0; t < 3; t++) {
                    int k = t == 0 ? 1 : 3 * t;
                    spmm_case(h, ops[i], layout, k, single, alphas[t], betas[t], 0, NULL);
                    spmm_case(h, ops[i], layout, k, single, alphas[(t + 1) % 3], 0.0, 1, NULL);
                }
    /* The analysis of A for op C serves op T and op C (same transposed structure). */
    {
        dense_t a = dense_random(6, 4, 5);
        csr_t ac = to_csr(&a, 5);
        spgemm_matrix_t *am = describe(&ac, 0);
        spgemm_spmm_analysis_t *an = NULL;
        CHECK_OK(h, spgemm_spmm_analysis_create(h, SPGEMM_OPERATION_CONJUGATE_TRANSPOSE, am,
                                                SPGEMM_LAYOUT_COL_MAJOR, 4, &an));
        for (int i = 0; i < 3; i++)
            spmm_case(h, ops[i], SPGEMM_LAYOUT_COL_MAJOR, 4, 0, 0.5 + 0.5 * I, 1.0 - I, 0, an);
        spgemm_spmm_analysis_destroy(an);
        spgemm_matrix_destroy(am);
        csr_free(&ac);
        free(a.d);
    }
    real_conjugate_transpose(h);
    errors(h);
    device(h);
    spgemm_destroy(h);
    return check_report();
}

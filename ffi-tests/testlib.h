/*
 * Helpers for the C ABI tests, written from include/spgemm.h alone:
 *  - ref_csr: a reference CSR (0-based, int64 indices, double values) with a random
 *    generator (empty rows, unsorted rows, repeated columns) and a naive product;
 *  - typed_csr: the same matrix in any of the library's storage formats (offset type,
 *    index type, value type, base), the arrays a C, C++, Fortran or Tpetra caller owns;
 *  - compare_c: checks a product in any storage format against the reference.
 *
 * The reference product follows the summation order the header documents ("each entry of
 * C is the sum of its products in the order A's row and B's rows are stored"), so results
 * can be compared bit for bit as well as within a tolerance.
 */
#ifndef FFI_TESTS_TESTLIB_H
#define FFI_TESTS_TESTLIB_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "spgemm.h"

/* ---- allocation that fails the test program loudly (test inputs only) ---- */

static inline void *xmalloc(size_t bytes) {
    void *p = malloc(bytes == 0 ? 1 : bytes);
    if (p == NULL) {
        fprintf(stderr, "test harness: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

static inline void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);
    if (p == NULL) {
        fprintf(stderr, "test harness: out of memory\n");
        exit(2);
    }
    return p;
}

/* ---- deterministic random numbers (xorshift64*) ---- */

typedef struct {
    uint64_t s;
} rng_t;

static inline uint64_t rng_next(rng_t *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ULL;
}

static inline rng_t rng_seed(uint64_t seed) {
    rng_t r;
    r.s = seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL;
    if (r.s == 0) r.s = 1;
    return r;
}

/* Uniform integer in [0, n) (n > 0). */
static inline int64_t rng_below(rng_t *r, int64_t n) {
    return (int64_t)(rng_next(r) % (uint64_t)n);
}

/* Uniform double in [-1, 1) with 53 random bits: sums of such values depend on order. */
static inline double rng_value(rng_t *r) {
    return (double)(rng_next(r) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* ---- reference CSR ---- */

typedef struct {
    int64_t m, n, nnz;
    int64_t *rp;   /* m + 1 row offsets, 0-based */
    int64_t *ci;   /* nnz column indices, 0-based */
    double *v;     /* nnz values */
    double *absum; /* products only: sum of |a*b| per entry (error bound), else NULL */
} ref_csr;

static inline ref_csr ref_alloc(int64_t m, int64_t n, int64_t nnz) {
    ref_csr a;
    a.m = m;
    a.n = n;
    a.nnz = nnz;
    a.rp = (int64_t *)xcalloc((size_t)m + 1, sizeof(int64_t));
    a.ci = (int64_t *)xcalloc((size_t)nnz, sizeof(int64_t));
    a.v = (double *)xcalloc((size_t)nnz, sizeof(double));
    a.absum = NULL;
    return a;
}

static inline void ref_free(ref_csr *a) {
    free(a->rp);
    free(a->ci);
    free(a->v);
    free(a->absum);
    memset(a, 0, sizeof *a);
}

/* Builds a matrix from a dense row-major array; zeros of `dense` are not stored. */
static inline ref_csr ref_from_dense(int64_t m, int64_t n, const double *dense) {
    int64_t nnz = 0, i, j;
    ref_csr a;
    for (i = 0; i < m * n; i++) nnz += dense[i] != 0.0;
    a = ref_alloc(m, n, nnz);
    nnz = 0;
    for (i = 0; i < m; i++) {
        for (j = 0; j < n; j++) {
            if (dense[i * n + j] != 0.0) {
                a.ci[nnz] = j;
                a.v[nnz] = dense[i * n + j];
                nnz++;
            }
        }
        a.rp[i + 1] = nnz;
    }
    return a;
}

enum {
    GEN_SORTED = 1,  /* rows sorted by column; otherwise shuffled */
    GEN_DUPS = 2,    /* columns may repeat within a row */
    GEN_INTVALS = 4, /* small integer values in [-4, 4] \ {0} instead of random doubles */
};

/*
 * Random m x n matrix: each row has 0 to max_row entries (about one row in five is
 * empty), columns drawn uniformly (distinct unless GEN_DUPS).
 */
static inline ref_csr ref_random(int64_t m, int64_t n, int64_t max_row, uint64_t seed,
                                 int flags) {
    rng_t r = rng_seed(seed);
    int64_t *len = (int64_t *)xcalloc((size_t)m + 1, sizeof(int64_t));
    int64_t i, total = 0;
    ref_csr a;
    unsigned char *used = (unsigned char *)xcalloc((size_t)n + 1, 1);
    for (i = 0; i < m; i++) {
        int64_t l = (n == 0 || rng_below(&r, 5) == 0) ? 0 : rng_below(&r, max_row + 1);
        if (!(flags & GEN_DUPS) && l > n) l = n;
        len[i] = l;
        total += l;
    }
    a = ref_alloc(m, n, total);
    total = 0;
    for (i = 0; i < m; i++) {
        int64_t k, start = total;
        for (k = 0; k < len[i]; k++) {
            int64_t c = rng_below(&r, n);
            if (!(flags & GEN_DUPS)) {
                while (used[c]) c = (c + 1) % n;
                used[c] = 1;
            } else if (k > 0 && rng_below(&r, 3) == 0) {
                c = a.ci[start + rng_below(&r, k)]; /* force a repeat */
            }
            a.ci[total] = c;
            a.v[total] = (flags & GEN_INTVALS) ? (double)(rng_below(&r, 4) + 1) *
                                                     (rng_below(&r, 2) ? 1.0 : -1.0)
                                               : rng_value(&r);
            total++;
        }
        for (k = start; k < total; k++) used[a.ci[k]] = 0;
        if (flags & GEN_SORTED) { /* insertion sort: rows are short */
            int64_t p, q;
            for (p = start + 1; p < total; p++) {
                int64_t c = a.ci[p];
                double v = a.v[p];
                for (q = p; q > start && a.ci[q - 1] > c; q--) {
                    a.ci[q] = a.ci[q - 1];
                    a.v[q] = a.v[q - 1];
                }
                a.ci[q] = c;
                a.v[q] = v;
            }
        }
        a.rp[i + 1] = total;
    }
    free(len);
    free(used);
    return a;
}

/* Rounds every value to float (for float32 tests, so that inputs are exact in float). */
static inline void ref_round_to_float(ref_csr *a) {
    int64_t p;
    for (p = 0; p < a->nnz; p++) a->v[p] = (double)(float)a->v[p];
}

/*
 * Naive product C = A*B with rows sorted by column. Each entry is accumulated in storage
 * order (first product assigned, later ones added), in double or, with in_float, in float
 * arithmetic exactly as a float32 product would be. Entries that cancel are kept.
 */
static inline ref_csr ref_product(const ref_csr *a, const ref_csr *b, int in_float) {
    int64_t m = a->m, k = b->n, i, p, q, nnz = 0;
    int64_t *mark = (int64_t *)xmalloc(((size_t)k + 1) * sizeof(int64_t));
    double *acc = (double *)xcalloc((size_t)k + 1, sizeof(double));
    float *accf = (float *)xcalloc((size_t)k + 1, sizeof(float));
    double *abs_acc = (double *)xcalloc((size_t)k + 1, sizeof(double));
    int64_t *cols = (int64_t *)xcalloc((size_t)k + 1, sizeof(int64_t));
    ref_csr c;
    if (a->n != b->m) {
        fprintf(stderr, "ref_product: bad shapes\n");
        exit(2);
    }
    for (q = 0; q < k; q++) mark[q] = -1;
    /* pass 1: sizes */
    for (i = 0; i < m; i++) {
        for (p = a->rp[i]; p < a->rp[i + 1]; p++) {
            int64_t r = a->ci[p];
            for (q = b->rp[r]; q < b->rp[r + 1]; q++) {
                if (mark[b->ci[q]] != i) {
                    mark[b->ci[q]] = i;
                    nnz++;
                }
            }
        }
    }
    c = ref_alloc(m, k, nnz);
    c.absum = (double *)xcalloc((size_t)nnz, sizeof(double));
    for (q = 0; q < k; q++) mark[q] = -1;
    nnz = 0;
    for (i = 0; i < m; i++) {
        int64_t nc = 0, s, t;
        for (p = a->rp[i]; p < a->rp[i + 1]; p++) {
            int64_t r = a->ci[p];
            for (q = b->rp[r]; q < b->rp[r + 1]; q++) {
                int64_t j = b->ci[q];
                double prod = a->v[p] * b->v[q];
                float prodf = (float)a->v[p] * (float)b->v[q];
                if (mark[j] != i) {
                    mark[j] = i;
                    cols[nc++] = j;
                    acc[j] = prod;
                    accf[j] = prodf;
                    abs_acc[j] = fabs(prod);
                } else {
                    acc[j] += prod;
                    accf[j] += prodf;
                    abs_acc[j] += fabs(prod);
                }
            }
        }
        /* sort the row's columns (insertion sort; rows are short in tests) */
        for (s = 1; s < nc; s++) {
            int64_t x = cols[s];
            for (t = s; t > 0 && cols[t - 1] > x; t--) cols[t] = cols[t - 1];
            cols[t] = x;
        }
        for (s = 0; s < nc; s++) {
            c.ci[nnz] = cols[s];
            c.v[nnz] = in_float ? (double)accf[cols[s]] : acc[cols[s]];
            c.absum[nnz] = abs_acc[cols[s]];
            nnz++;
        }
        c.rp[i + 1] = nnz;
    }
    free(mark);
    free(acc);
    free(accf);
    free(abs_acc);
    free(cols);
    return c;
}

/* Number of scalar multiplications of A*B: sum over entries (i, r) of A of nnz(B row r). */
static inline int64_t ref_multiplications(const ref_csr *a, const ref_csr *b) {
    int64_t p, f = 0;
    for (p = 0; p < a->nnz; p++) f += b->rp[a->ci[p] + 1] - b->rp[a->ci[p]];
    return f;
}

/* ---- typed arrays in the library's storage formats ---- */

static inline size_t index_size(spgemm_index_type_t t) {
    return t == SPGEMM_INDEX_INT32 ? sizeof(int32_t)
                                   : t == SPGEMM_INDEX_INT64 ? sizeof(int64_t) : sizeof(size_t);
}

static inline size_t value_size(spgemm_value_type_t t) {
    return t == SPGEMM_VALUE_FLOAT32 ? sizeof(float) : sizeof(double);
}

static inline void store_index(void *arr, spgemm_index_type_t t, int64_t i, int64_t x) {
    if (t == SPGEMM_INDEX_INT32) {
        ((int32_t *)arr)[i] = (int32_t)x;
    } else if (t == SPGEMM_INDEX_INT64) {
        ((int64_t *)arr)[i] = x;
    } else {
        ((size_t *)arr)[i] = (size_t)x;
    }
}

static inline int64_t load_index(const void *arr, spgemm_index_type_t t, int64_t i) {
    if (t == SPGEMM_INDEX_INT32) return ((const int32_t *)arr)[i];
    if (t == SPGEMM_INDEX_INT64) return ((const int64_t *)arr)[i];
    return (int64_t)((const size_t *)arr)[i];
}

static inline void store_value(void *arr, spgemm_value_type_t t, int64_t i, double x) {
    if (t == SPGEMM_VALUE_FLOAT32) {
        ((float *)arr)[i] = (float)x;
    } else {
        ((double *)arr)[i] = x;
    }
}

static inline double load_value(const void *arr, spgemm_value_type_t t, int64_t i) {
    if (t == SPGEMM_VALUE_FLOAT32) return (double)((const float *)arr)[i];
    return ((const double *)arr)[i];
}

typedef struct {
    int64_t m, n, nnz;
    spgemm_index_type_t ot, it;
    spgemm_value_type_t vt;
    spgemm_index_base_t base;
    void *rp, *ci, *v; /* v is NULL for pattern-only */
} typed_csr;

/* Copies a reference matrix into caller-owned arrays of the given format. */
static inline typed_csr typed_from_ref(const ref_csr *a, spgemm_index_type_t ot,
                                       spgemm_index_type_t it, spgemm_value_type_t vt,
                                       spgemm_index_base_t base, int with_values) {
    typed_csr t;
    int64_t i;
    t.m = a->m;
    t.n = a->n;
    t.nnz = a->nnz;
    t.ot = ot;
    t.it = it;
    t.vt = vt;
    t.base = base;
    t.rp = xmalloc(((size_t)a->m + 1) * index_size(ot));
    t.ci = xmalloc((size_t)a->nnz * index_size(it));
    t.v = with_values ? xmalloc((size_t)a->nnz * value_size(vt)) : NULL;
    for (i = 0; i <= a->m; i++) store_index(t.rp, ot, i, a->rp[i] + base);
    for (i = 0; i < a->nnz; i++) {
        store_index(t.ci, it, i, a->ci[i] + base);
        if (with_values) store_value(t.v, vt, i, a->v[i]);
    }
    return t;
}

static inline void typed_free(typed_csr *t) {
    free(t->rp);
    free(t->ci);
    free(t->v);
    memset(t, 0, sizeof *t);
}

static inline spgemm_status_t typed_create(spgemm_matrix_t **mat, const typed_csr *t) {
    return spgemm_matrix_create_csr(mat, t->m, t->n, t->ot, t->rp, t->it, t->ci, t->vt, t->v,
                                    t->base);
}

/* ---- comparing a product with the reference ---- */

enum {
    CMP_TOL = 0,      /* values within a relative tolerance of the reference */
    CMP_EXACT = 1,    /* values bitwise equal to the reference (NaN matches NaN) */
    CMP_PATTERN = 2,  /* structure only, values not compared */
    CMP_UNSORTED = 8, /* rows compared as sets of columns (any order, no repeats) */
};

typedef struct {
    int64_t col;
    double val;
} colval;

static inline int colval_cmp(const void *x, const void *y) {
    const colval *a = (const colval *)x, *b = (const colval *)y;
    return (a->col > b->col) - (a->col < b->col);
}

static inline int values_match(double got, double want, double absum, int exact,
                               double tol) {
    if (isnan(want)) return isnan(got);
    if (exact) return memcmp(&got, &want, sizeof got) == 0;
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol * (absum > fabs(want) ? absum : fabs(want));
}

/*
 * Checks C (row offsets, column indices, values in the given formats and base) against
 * reference `ref`. `mode` combines CMP_*. Returns 1 on a match; on a mismatch prints the
 * first difference, prefixed by `what`, and returns 0. vals may be NULL with CMP_PATTERN.
 */
static inline int compare_c(const char *what, const ref_csr *ref, spgemm_index_type_t ot,
                            const void *rp, spgemm_index_type_t it, const void *ci,
                            spgemm_value_type_t vt, const void *vals,
                            spgemm_index_base_t base, int mode) {
    int64_t i, p;
    int exact = (mode & 3) == CMP_EXACT, pattern = (mode & 3) == CMP_PATTERN;
    double tol = vt == SPGEMM_VALUE_FLOAT32 ? 1e-5 : 1e-12;
    colval *row = (colval *)xmalloc(((size_t)ref->n + 1) * sizeof(colval));
    int ok = 1;
    for (i = 0; i <= ref->m && ok; i++) {
        if (load_index(rp, ot, i) != ref->rp[i] + base) {
            fprintf(stderr, "%s: row_offsets[%lld] = %lld, expected %lld\n", what, (long long)i,
                    (long long)load_index(rp, ot, i), (long long)(ref->rp[i] + base));
            ok = 0;
        }
    }
    for (i = 0; i < ref->m && ok; i++) {
        int64_t start = ref->rp[i], len = ref->rp[i + 1] - start;
        for (p = 0; p < len; p++) {
            row[p].col = load_index(ci, it, start + p) - base;
            row[p].val = pattern ? 0.0 : load_value(vals, vt, start + p);
        }
        if (mode & CMP_UNSORTED) qsort(row, (size_t)len, sizeof(colval), colval_cmp);
        for (p = 0; p < len && ok; p++) {
            if (row[p].col != ref->ci[start + p]) {
                fprintf(stderr, "%s: row %lld: %s column %lld, expected %lld\n", what,
                        (long long)i, (mode & CMP_UNSORTED) ? "sorted" : "position",
                        (long long)row[p].col, (long long)ref->ci[start + p]);
                ok = 0;
            } else if (!pattern && !values_match(row[p].val, ref->v[start + p],
                                                 ref->absum ? ref->absum[start + p] : 0.0,
                                                 exact, tol)) {
                fprintf(stderr, "%s: C(%lld,%lld) = %.17g, expected %.17g (%s)\n", what,
                        (long long)i, (long long)row[p].col, row[p].val, ref->v[start + p],
                        exact ? "bitwise" : "tolerance");
                ok = 0;
            }
        }
    }
    free(row);
    return ok;
}

/*
 * Two-phase product into caller arrays of format (cot, cit, cbase): symbolic, nnz, numeric
 * (or numeric_structure when `structure_only`). On success fills *out (arrays owned by the
 * caller, v NULL when structure_only) and returns SUCCESS; on failure returns the status
 * of the failing call and leaves *out empty.
 */
static inline spgemm_status_t two_phase(spgemm_handle_t *h, const spgemm_matrix_t *a,
                                        const spgemm_matrix_t *b, int64_t m, int64_t k,
                                        spgemm_value_type_t vt, spgemm_index_type_t cot,
                                        spgemm_index_type_t cit, spgemm_index_base_t cbase,
                                        int structure_only, typed_csr *out) {
    spgemm_plan_t *plan = NULL;
    spgemm_status_t s;
    int64_t nnz = -1;
    memset(out, 0, sizeof *out);
    out->rp = xmalloc(((size_t)m + 1) * index_size(cot));
    s = spgemm_symbolic(h, a, b, cot, cit, cbase, out->rp, &plan);
    if (s == SPGEMM_STATUS_SUCCESS) s = spgemm_plan_get_nnz(plan, &nnz);
    if (s == SPGEMM_STATUS_SUCCESS) {
        out->ci = xmalloc((size_t)nnz * index_size(cit));
        if (structure_only) {
            s = spgemm_numeric_structure(h, plan, a, b, out->ci);
        } else {
            out->v = xmalloc((size_t)nnz * value_size(vt));
            s = spgemm_numeric(h, plan, a, b, out->ci, out->v);
        }
    }
    spgemm_plan_destroy(plan);
    if (s != SPGEMM_STATUS_SUCCESS) {
        typed_free(out);
        return s;
    }
    out->m = m;
    out->n = k;
    out->nnz = nnz;
    out->ot = cot;
    out->it = cit;
    out->vt = vt;
    out->base = cbase;
    return s;
}

static inline int compare_typed(const char *what, const ref_csr *ref, const typed_csr *c,
                                int mode) {
    if (c->nnz != ref->nnz) {
        fprintf(stderr, "%s: nnz %lld, expected %lld\n", what, (long long)c->nnz,
                (long long)ref->nnz);
        return 0;
    }
    return compare_c(what, ref, c->ot, c->rp, c->it, c->ci, c->vt, c->v, c->base, mode);
}

#endif /* FFI_TESTS_TESTLIB_H */

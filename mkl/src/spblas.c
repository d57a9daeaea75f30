/*
 * Sparse inspector-executor functions of libspgemm_mkl (mkl_spblas.h).
 *
 * A client of libspgemm's public ABI: each MKL handle keeps the caller's arrays (or the arrays
 * of a result it owns), and every product is a libspgemm call on descriptors made over those
 * arrays at the time of the call. Which backend runs is libspgemm's business (its dispatcher).
 * The semantics reproduced (ownership, stages, statuses) are those of mkl/tests/README.md.
 *
 * Integer width: every function is written once over int64_t sizes and arrays of width 4 or 8
 * (the handle records which); the LP64 and _64 entry points at the end only convert.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkl_spblas.h"
#include "layer.h"

/* ------------------------------------------------------------------ errors */

static _Thread_local char t_error[1024];

const char *spgemm_mkl_last_error(void) { return t_error; }

static void clear_error(void) { t_error[0] = '\0'; }

static sparse_status_t fail(sparse_status_t st, const char *fn, const char *fmt, ...) {
    va_list ap;
    int n = snprintf(t_error, sizeof t_error, "%s: ", fn);
    if (n < 0 || (size_t)n >= sizeof t_error) return st;
    va_start(ap, fmt);
    vsnprintf(t_error + n, sizeof t_error - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

/* libspgemm's status in MKL's terms; its message (thread's last error) goes to the text. */
static sparse_status_t core_fail(const char *fn, spgemm_status_t s) {
    sparse_status_t st;
    switch (s) {
    case SPGEMM_STATUS_NULL_POINTER: st = SPARSE_STATUS_NOT_INITIALIZED; break;
    case SPGEMM_STATUS_ALLOC_FAILED: st = SPARSE_STATUS_ALLOC_FAILED; break;
    case SPGEMM_STATUS_NOT_SUPPORTED: st = SPARSE_STATUS_NOT_SUPPORTED; break;
    case SPGEMM_STATUS_NO_DEVICE: st = SPARSE_STATUS_EXECUTION_FAILED; break;
    case SPGEMM_STATUS_INTERNAL: st = SPARSE_STATUS_INTERNAL_ERROR; break;
    default: st = SPARSE_STATUS_INVALID_VALUE; break; /* shapes, structure, types, overflow */
    }
    return fail(st, fn, "libspgemm: %s: %s", spgemm_status_string(s), spgemm_last_error(NULL));
}

static sparse_status_t lib(const char *fn, spgemm_handle_t **h) {
    spgemm_status_t s;
    *h = spgemm_mkl__handle(&s);
    if (!*h) return fail(core_fail(fn, s), fn, "%s", spgemm_mkl__init_error());
    return SPARSE_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ handles */

#define HANDLE_MAGIC 0x6d6b6c5f73706d6dull

enum { FMT_CSR, FMT_CSC, FMT_COO };
enum { KIND_USER, KIND_OWNED, KIND_SP2M, KIND_SYPR };
/* What a handle holds: row pointer only (NNZ_COUNT), structure, or structure and values. */
enum { ST_ROWPTR = 1, ST_STRUCT = 2, ST_VALUES = 3 };

/* A CSR matrix whose arrays the layer allocated (m + 1 offsets with the base). */
typedef struct {
    int64_t rows, cols, nnz;
    void *rp, *ci, *v;
} csr_t;

/* sypr's intermediate products, kept between its stages: W = B * opR(P), F = opL(P) * W. */
typedef struct {
    sparse_operation_t opl, opr;
    sparse_fill_mode_t mode;
    spgemm_plan_t *plan_w, *plan_f;
    csr_t w, f;
} sypr_t;

struct sparse_matrix {
    uint64_t magic;
    int fmt, vt, iw, kind, stage;
    sparse_index_base_t base;
    int64_t rows, cols, nnz; /* nnz: COO entries (CSR/CSC read it from the pointers) */
    void *rs, *re, *ci, *v;  /* CSR: rows_start, rows_end, col_indx; CSC: cols_*, row_indx; COO: rows, cols */
    void *own[3];            /* arrays the layer allocated, freed by mkl_sparse_destroy */
    spgemm_matrix_t *core;   /* a libspgemm result owning the arrays */
    spgemm_plan_t *plan;     /* sp2m stages */
    sparse_operation_t opa, opb;
    sypr_t *sy;
    /* hints (index 0: op N, 1: op T and C, which share A^T's structure) */
    int hinted[2], hint_layout[2];
    int64_t hint_k[2];
    sparse_memory_usage_t memory;
    int optimized;
    spgemm_spmm_analysis_t *an[2];
    int an_stale[2]; /* the structure no longer matches the analysis: mv/mm run without it */
};

/* Guards the analyses mv/mm may build or retire on a handle that other threads multiply with
 * (MKL allows concurrent mv on one handle); held only around those rare updates. */
static pthread_mutex_t g_analysis_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t vsize(int vt) {
    return vt == SPGEMM_VALUE_FLOAT32 ? 4 : vt == SPGEMM_VALUE_COMPLEX_DOUBLE ? 16 : 8;
}
static int is_complex(int vt) { return vt == SPGEMM_VALUE_COMPLEX_FLOAT || vt == SPGEMM_VALUE_COMPLEX_DOUBLE; }
static spgemm_index_type_t itype(int iw) { return iw == 4 ? SPGEMM_INDEX_INT32 : SPGEMM_INDEX_INT64; }

static int64_t ig(const void *a, int iw, int64_t k) {
    return iw == 4 ? (int64_t)((const int32_t *)a)[k] : ((const int64_t *)a)[k];
}
static void is(void *a, int iw, int64_t k, int64_t x) {
    if (iw == 4) ((int32_t *)a)[k] = (int32_t)x;
    else ((int64_t *)a)[k] = x;
}
static void *at(const void *a, size_t size, int64_t k) { return (char *)(uintptr_t)a + (size_t)k * size; }

/* Copies one value, conjugated when asked (complex only). */
static void vcopy(void *dst, const void *src, int vt, int conj) {
    memcpy(dst, src, vsize(vt));
    if (conj && vt == SPGEMM_VALUE_COMPLEX_FLOAT) ((float *)dst)[1] = -((float *)dst)[1];
    if (conj && vt == SPGEMM_VALUE_COMPLEX_DOUBLE) ((double *)dst)[1] = -((double *)dst)[1];
}

static void *xalloc(int64_t n, size_t size) { return malloc(n > 0 ? (size_t)n * size : 1); }

static void csr_free(csr_t *c) {
    free(c->rp);
    free(c->ci);
    free(c->v);
    memset(c, 0, sizeof *c);
}

static int valid(const struct sparse_matrix *h) { return h && h->magic == HANDLE_MAGIC; }
static int op_ok(sparse_operation_t op) {
    return op == SPARSE_OPERATION_NON_TRANSPOSE || op == SPARSE_OPERATION_TRANSPOSE ||
           op == SPARSE_OPERATION_CONJUGATE_TRANSPOSE;
}
static spgemm_operation_t core_op(sparse_operation_t op) {
    return op == SPARSE_OPERATION_NON_TRANSPOSE ? SPGEMM_OPERATION_NON_TRANSPOSE
           : op == SPARSE_OPERATION_TRANSPOSE   ? SPGEMM_OPERATION_TRANSPOSE
                                                : SPGEMM_OPERATION_CONJUGATE_TRANSPOSE;
}

static void drop_analyses(struct sparse_matrix *h) {
    for (int i = 0; i < 2; i++) {
        spgemm_spmm_analysis_destroy(h->an[i]);
        h->an[i] = NULL;
        h->an_stale[i] = 0;
    }
}

static void sypr_free(sypr_t *s) {
    if (!s) return;
    spgemm_plan_destroy(s->plan_w);
    spgemm_plan_destroy(s->plan_f);
    csr_free(&s->w);
    csr_free(&s->f);
    free(s);
}

static struct sparse_matrix *handle_new(int fmt, int vt, int iw, sparse_index_base_t base, int64_t rows,
                                        int64_t cols) {
    struct sparse_matrix *h = (struct sparse_matrix *)calloc(1, sizeof *h);
    if (!h) return NULL;
    h->magic = HANDLE_MAGIC;
    h->fmt = fmt;
    h->vt = vt;
    h->iw = iw;
    h->base = base;
    h->rows = rows;
    h->cols = cols;
    h->stage = ST_VALUES;
    h->memory = SPARSE_MEMORY_AGGRESSIVE;
    return h;
}

static void handle_free(struct sparse_matrix *h) {
    if (!h) return;
    drop_analyses(h);
    spgemm_plan_destroy(h->plan);
    sypr_free(h->sy);
    spgemm_matrix_destroy(h->core);
    for (int i = 0; i < 3; i++) free(h->own[i]);
    h->magic = 0;
    free(h);
}

/* A handle over a CSR matrix the layer allocated (takes the arrays). */
static struct sparse_matrix *handle_of_csr(csr_t *c, int vt, int iw, sparse_index_base_t base) {
    struct sparse_matrix *h = handle_new(FMT_CSR, vt, iw, base, c->rows, c->cols);
    if (!h) return NULL;
    h->kind = KIND_OWNED;
    h->own[0] = h->rs = c->rp;
    h->re = at(c->rp, (size_t)iw, 1);
    h->own[1] = h->ci = c->ci;
    h->own[2] = h->v = c->v;
    memset(c, 0, sizeof *c);
    return h;
}

/* ------------------------------------------------------------------ creation */

static sparse_status_t create(const char *fn, sparse_matrix_t *A, int fmt, sparse_index_base_t base, int64_t rows,
                              int64_t cols, int64_t nnz, void *p0, void *p1, void *p2, void *values, int vt,
                              int iw) {
    struct sparse_matrix *h;
    clear_error();
    if (!A) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the output handle pointer is NULL");
    if (base != SPARSE_INDEX_BASE_ZERO && base != SPARSE_INDEX_BASE_ONE)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "index base %d is neither 0 nor 1", (int)base);
    if (rows <= 0 || cols <= 0)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "rows = %lld and cols = %lld must both be positive",
                    (long long)rows, (long long)cols);
    if (fmt == FMT_COO && nnz < 0)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "nnz = %lld is negative", (long long)nnz);
    if (!p0 || !p1 || (fmt != FMT_COO && !p2))
        return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "an index array is NULL");
    h = handle_new(fmt, vt, iw, base, rows, cols);
    if (!h) return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for the handle");
    h->kind = KIND_USER;
    h->nnz = nnz;
    if (fmt == FMT_COO) {
        h->rs = p0; /* row indices */
        h->ci = p1; /* column indices */
    } else {
        h->rs = p0;
        h->re = p1;
        h->ci = p2;
    }
    h->v = values;
    *A = h;
    return SPARSE_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ CSR views and conversions */

/* A handle's CSR, CSC or COO arrays as one kind of view: a 4-array CSR (for CSC: of A^T). */
typedef struct {
    int64_t rows, cols, base;
    int iw, vt;
    const void *rs, *re, *ci, *v;
} view_t;

static view_t view_of(const struct sparse_matrix *h) {
    view_t w;
    w.rows = h->fmt == FMT_CSC ? h->cols : h->rows;
    w.cols = h->fmt == FMT_CSC ? h->rows : h->cols;
    w.base = (int64_t)h->base;
    w.iw = h->iw;
    w.vt = h->vt;
    w.rs = h->rs;
    w.re = h->re;
    w.ci = h->ci;
    w.v = h->stage == ST_VALUES ? h->v : NULL;
    return w;
}

/* Row pointers consistent (rs[i] <= re[i], both >= base): checked before any array is read. */
static sparse_status_t view_check(const char *fn, const view_t *w) {
    for (int64_t i = 0; i < w->rows; i++) {
        int64_t s = ig(w->rs, w->iw, i), e = ig(w->re, w->iw, i);
        if (s < w->base || e < s)
            return fail(SPARSE_STATUS_INVALID_VALUE, fn, "row %lld: rows_start %lld, rows_end %lld are not valid",
                        (long long)i, (long long)s, (long long)e);
    }
    return SPARSE_STATUS_SUCCESS;
}

/* Compact copy (3-array form), values conjugated when asked. */
static sparse_status_t view_copy(const char *fn, const view_t *w, int conj, csr_t *out) {
    sparse_status_t st = view_check(fn, w);
    int64_t nnz = 0;
    size_t vs = vsize(w->vt);
    if (st) return st;
    for (int64_t i = 0; i < w->rows; i++) nnz += ig(w->re, w->iw, i) - ig(w->rs, w->iw, i);
    memset(out, 0, sizeof *out);
    out->rows = w->rows;
    out->cols = w->cols;
    out->nnz = nnz;
    out->rp = xalloc(w->rows + 1, (size_t)w->iw);
    out->ci = xalloc(nnz, (size_t)w->iw);
    out->v = w->v ? xalloc(nnz, vs) : NULL;
    if (!out->rp || !out->ci || (w->v && !out->v)) {
        csr_free(out);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for %lld entries", (long long)nnz);
    }
    int64_t q = 0;
    for (int64_t i = 0; i < w->rows; i++) {
        is(out->rp, w->iw, i, q + w->base);
        for (int64_t k = ig(w->rs, w->iw, i) - w->base; k < ig(w->re, w->iw, i) - w->base; k++, q++) {
            is(out->ci, w->iw, q, ig(w->ci, w->iw, k));
            if (w->v) vcopy(at(out->v, vs, q), at(w->v, vs, k), w->vt, conj);
        }
    }
    is(out->rp, w->iw, w->rows, q + w->base);
    return SPARSE_STATUS_SUCCESS;
}

/* Transpose (conjugate transpose when asked): row j lists its entries in increasing row. */
static sparse_status_t view_transpose(const char *fn, const view_t *w, int conj, csr_t *out) {
    sparse_status_t st = view_check(fn, w);
    int64_t nnz = 0, *cnt;
    size_t vs = vsize(w->vt);
    if (st) return st;
    for (int64_t i = 0; i < w->rows; i++) nnz += ig(w->re, w->iw, i) - ig(w->rs, w->iw, i);
    for (int64_t i = 0; i < w->rows; i++)
        for (int64_t k = ig(w->rs, w->iw, i) - w->base; k < ig(w->re, w->iw, i) - w->base; k++) {
            int64_t j = ig(w->ci, w->iw, k) - w->base;
            if (j < 0 || j >= w->cols)
                return fail(SPARSE_STATUS_INVALID_VALUE, fn, "entry %lld: index %lld outside [%lld, %lld)",
                            (long long)k, (long long)(j + w->base), (long long)w->base,
                            (long long)(w->cols + w->base));
        }
    memset(out, 0, sizeof *out);
    out->rows = w->cols;
    out->cols = w->rows;
    out->nnz = nnz;
    out->rp = xalloc(w->cols + 1, (size_t)w->iw);
    out->ci = xalloc(nnz, (size_t)w->iw);
    out->v = w->v ? xalloc(nnz, vs) : NULL;
    cnt = (int64_t *)calloc((size_t)w->cols + 1, sizeof *cnt);
    if (!out->rp || !out->ci || (w->v && !out->v) || !cnt) {
        free(cnt);
        csr_free(out);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for %lld entries", (long long)nnz);
    }
    for (int64_t k = 0; k < w->rows; k++)
        for (int64_t p = ig(w->rs, w->iw, k) - w->base; p < ig(w->re, w->iw, k) - w->base; p++)
            cnt[ig(w->ci, w->iw, p) - w->base + 1]++;
    for (int64_t j = 0; j < w->cols; j++) cnt[j + 1] += cnt[j];
    for (int64_t j = 0; j <= w->cols; j++) is(out->rp, w->iw, j, cnt[j] + w->base);
    for (int64_t i = 0; i < w->rows; i++)
        for (int64_t p = ig(w->rs, w->iw, i) - w->base; p < ig(w->re, w->iw, i) - w->base; p++) {
            int64_t j = ig(w->ci, w->iw, p) - w->base, q = cnt[j]++;
            is(out->ci, w->iw, q, i + w->base);
            if (w->v) vcopy(at(out->v, vs, q), at(w->v, vs, p), w->vt, conj);
        }
    free(cnt);
    return SPARSE_STATUS_SUCCESS;
}

/* COO triplets to CSR (entries of a row keep their order of appearance). */
static sparse_status_t coo_to_csr(const char *fn, const struct sparse_matrix *h, csr_t *out) {
    int64_t *cnt, b = (int64_t)h->base;
    size_t vs = vsize(h->vt);
    const void *vals = h->stage == ST_VALUES ? h->v : NULL;
    for (int64_t t = 0; t < h->nnz; t++) {
        int64_t i = ig(h->rs, h->iw, t) - b, j = ig(h->ci, h->iw, t) - b;
        if (i < 0 || i >= h->rows || j < 0 || j >= h->cols)
            return fail(SPARSE_STATUS_INVALID_VALUE, fn, "triplet %lld: (%lld, %lld) outside the matrix",
                        (long long)t, (long long)(i + b), (long long)(j + b));
    }
    memset(out, 0, sizeof *out);
    out->rows = h->rows;
    out->cols = h->cols;
    out->nnz = h->nnz;
    out->rp = xalloc(h->rows + 1, (size_t)h->iw);
    out->ci = xalloc(h->nnz, (size_t)h->iw);
    out->v = vals ? xalloc(h->nnz, vs) : NULL;
    cnt = (int64_t *)calloc((size_t)h->rows + 1, sizeof *cnt);
    if (!out->rp || !out->ci || (vals && !out->v) || !cnt) {
        free(cnt);
        csr_free(out);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for %lld entries", (long long)h->nnz);
    }
    for (int64_t t = 0; t < h->nnz; t++) cnt[ig(h->rs, h->iw, t) - b + 1]++;
    for (int64_t i = 0; i < h->rows; i++) cnt[i + 1] += cnt[i];
    for (int64_t i = 0; i <= h->rows; i++) is(out->rp, h->iw, i, cnt[i] + b);
    for (int64_t t = 0; t < h->nnz; t++) {
        int64_t q = cnt[ig(h->rs, h->iw, t) - b]++;
        is(out->ci, h->iw, q, ig(h->ci, h->iw, t));
        if (vals) vcopy(at(out->v, vs, q), at(vals, vs, t), h->vt, 0);
    }
    free(cnt);
    return SPARSE_STATUS_SUCCESS;
}

/* op(h) as a new CSR matrix the layer owns (convert_csr; products on CSC/COO handles). */
static sparse_status_t to_csr(const char *fn, const struct sparse_matrix *h, sparse_operation_t op, csr_t *out) {
    int conj = op == SPARSE_OPERATION_CONJUGATE_TRANSPOSE && is_complex(h->vt);
    view_t w;
    if (h->stage == ST_ROWPTR)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handle holds only a row pointer (NNZ_COUNT stage)");
    if (h->fmt == FMT_COO) {
        csr_t a;
        sparse_status_t st = coo_to_csr(fn, h, &a);
        if (st || op == SPARSE_OPERATION_NON_TRANSPOSE) {
            *out = a;
            return st;
        }
        w.rows = a.rows;
        w.cols = a.cols;
        w.base = (int64_t)h->base;
        w.iw = h->iw;
        w.vt = h->vt;
        w.rs = a.rp;
        w.re = at(a.rp, (size_t)h->iw, 1);
        w.ci = a.ci;
        w.v = a.v;
        st = view_transpose(fn, &w, conj, out);
        csr_free(&a);
        return st;
    }
    w = view_of(h);
    /* a CSC view is A^T: N transposes it, T copies it, C conjugates it */
    if ((h->fmt == FMT_CSR) == (op == SPARSE_OPERATION_NON_TRANSPOSE)) return view_copy(fn, &w, conj, out);
    return view_transpose(fn, &w, conj, out);
}

/* ------------------------------------------------------------------ libspgemm descriptors */

/* A libspgemm descriptor of a CSR handle, over its own arrays when they are in 3-array form,
 * else over a compact copy made for this call. */
typedef struct {
    spgemm_matrix_t *m;
    csr_t tmp;
    void *rp;
} desc_t;

static void desc_free(desc_t *d) {
    spgemm_matrix_destroy(d->m);
    csr_free(&d->tmp);
    free(d->rp);
    memset(d, 0, sizeof *d);
}

static sparse_status_t desc_make(const char *fn, const struct sparse_matrix *h, desc_t *d) {
    const void *rp = h->rs, *ci = h->ci, *v = h->stage == ST_VALUES ? h->v : NULL;
    int contiguous = 1;
    spgemm_status_t s;
    memset(d, 0, sizeof *d);
    if (h->fmt != FMT_CSR) {
        sparse_status_t st = to_csr(fn, h, SPARSE_OPERATION_NON_TRANSPOSE, &d->tmp);
        if (st) return st;
        rp = d->tmp.rp;
        ci = d->tmp.ci;
        v = d->tmp.v;
    } else if (h->stage == ST_ROWPTR) {
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handle holds only a row pointer (NNZ_COUNT stage)");
    } else if (h->re != at(h->rs, (size_t)h->iw, 1)) {
        for (int64_t i = 0; i + 1 < h->rows && contiguous; i++)
            contiguous = ig(h->re, h->iw, i) == ig(h->rs, h->iw, i + 1);
        if (contiguous) { /* rows_start may hold only `rows` entries: the last offset is rows_end's */
            d->rp = xalloc(h->rows + 1, (size_t)h->iw);
            if (!d->rp) return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for row offsets");
            memcpy(d->rp, h->rs, (size_t)h->rows * (size_t)h->iw);
            is(d->rp, h->iw, h->rows, ig(h->re, h->iw, h->rows - 1));
            rp = d->rp;
        } else {
            view_t w = view_of(h);
            sparse_status_t st = view_copy(fn, &w, 0, &d->tmp);
            if (st) return st;
            rp = d->tmp.rp;
            ci = d->tmp.ci;
            v = d->tmp.v;
        }
    }
    s = spgemm_matrix_create_csr(&d->m, h->rows, h->cols, itype(h->iw), rp, itype(h->iw), ci, h->vt, v,
                                 (spgemm_index_base_t)h->base);
    if (s) {
        desc_free(d);
        return core_fail(fn, s);
    }
    return SPARSE_STATUS_SUCCESS;
}

/* Descriptor of a CSR matrix the layer holds (base 0 internals of sypr, or a result). */
static sparse_status_t desc_of_csr(const char *fn, const csr_t *c, int iw, int vt, int with_values, int64_t base,
                                   spgemm_matrix_t **m) {
    spgemm_status_t s = spgemm_matrix_create_csr(m, c->rows, c->cols, itype(iw), c->rp, itype(iw), c->ci, vt,
                                                 with_values ? c->v : NULL, (spgemm_index_base_t)base);
    return s ? core_fail(fn, s) : SPARSE_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ copy, convert, export, order, destroy */

static sparse_status_t do_destroy(sparse_matrix_t A) {
    clear_error();
    if (!valid(A)) return fail(SPARSE_STATUS_NOT_INITIALIZED, "mkl_sparse_destroy", "the handle is NULL");
    handle_free(A);
    return SPARSE_STATUS_SUCCESS;
}

static sparse_status_t do_convert_csr(const sparse_matrix_t src, sparse_operation_t op, sparse_matrix_t *dest) {
    const char *fn = "mkl_sparse_convert_csr";
    csr_t c;
    sparse_status_t st;
    struct sparse_matrix *h;
    clear_error();
    if (!valid(src)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the source handle is NULL");
    if (!dest) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the output handle pointer is NULL");
    if (!op_ok(op)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "operation %d is not an operation", (int)op);
    st = to_csr(fn, src, op, &c);
    if (st) return st;
    h = handle_of_csr(&c, src->vt, src->iw, src->base);
    if (!h) {
        csr_free(&c);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for the handle");
    }
    *dest = h;
    return SPARSE_STATUS_SUCCESS;
}

static sparse_status_t do_copy(const sparse_matrix_t src, struct matrix_descr descr, sparse_matrix_t *dest) {
    const char *fn = "mkl_sparse_copy";
    struct sparse_matrix *h;
    sparse_status_t st;
    csr_t c;
    (void)descr; /* MKL keeps the descriptor for later calls; the layer's calls take theirs */
    clear_error();
    if (!valid(src)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the source handle is NULL");
    if (!dest) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the output handle pointer is NULL");
    if (src->stage == ST_ROWPTR)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handle holds only a row pointer (NNZ_COUNT stage)");
    if (src->fmt == FMT_COO) { /* a copy keeps its format: COO stays triplets */
        size_t vs = vsize(src->vt);
        const void *vals = src->stage == ST_VALUES ? src->v : NULL;
        c.rows = src->rows;
        c.cols = src->cols;
        c.rp = xalloc(src->nnz, (size_t)src->iw);
        c.ci = xalloc(src->nnz, (size_t)src->iw);
        c.v = vals ? xalloc(src->nnz, vs) : NULL;
        if (!c.rp || !c.ci || (vals && !c.v)) {
            csr_free(&c);
            return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for %lld entries", (long long)src->nnz);
        }
        memcpy(c.rp, src->rs, (size_t)src->nnz * (size_t)src->iw);
        memcpy(c.ci, src->ci, (size_t)src->nnz * (size_t)src->iw);
        if (vals) memcpy(c.v, vals, (size_t)src->nnz * vs);
    } else {
        view_t w = view_of(src);
        st = view_copy(fn, &w, 0, &c);
        if (st) return st;
    }
    h = handle_of_csr(&c, src->vt, src->iw, src->base);
    if (!h) {
        csr_free(&c);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for the handle");
    }
    h->fmt = src->fmt;
    h->rows = src->rows;
    h->cols = src->cols;
    h->nnz = src->nnz;
    if (src->fmt == FMT_COO) h->re = NULL;
    if (!h->v) h->stage = ST_STRUCT;
    *dest = h;
    return SPARSE_STATUS_SUCCESS;
}

static sparse_status_t do_export(const sparse_matrix_t src, int vt, int iw, sparse_index_base_t *indexing,
                                 int64_t *rows, int64_t *cols, void **rows_start, void **rows_end, void **col_indx,
                                 void **values) {
    static const char *const names[] = {"mkl_sparse_s_export_csr", "mkl_sparse_d_export_csr",
                                        "mkl_sparse_c_export_csr", "mkl_sparse_z_export_csr"};
    const char *fn = names[vt];
    clear_error();
    if (!valid(src)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the handle is NULL");
    if (!indexing || !rows || !cols || !rows_start || !rows_end || !col_indx || !values)
        return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "an output pointer is NULL");
    if (src->fmt != FMT_CSR)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handle is not in CSR format (convert it first)");
    if (src->vt != vt) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handle holds another precision");
    if (src->iw != iw)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handle has %d-bit indices, this entry point %d-bit",
                    src->iw * 8, iw * 8);
    *indexing = src->base;
    *rows = src->rows;
    *cols = src->cols;
    *rows_start = src->rs;
    *rows_end = src->re;
    *col_indx = src->stage >= ST_STRUCT ? src->ci : NULL;
    *values = src->stage == ST_VALUES ? src->v : NULL;
    return SPARSE_STATUS_SUCCESS;
}

typedef struct {
    int64_t col, pos;
} pair_t;

static int pair_cmp(const void *a, const void *b) {
    const pair_t *x = (const pair_t *)a, *y = (const pair_t *)b;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Sorts each row (CSC: column) by index in place, the caller's arrays included. */
static sparse_status_t do_order(const sparse_matrix_t A) {
    const char *fn = "mkl_sparse_order";
    struct sparse_matrix *h = A;
    int64_t longest = 0, b;
    pair_t *pr;
    void *tv = NULL, *ti;
    size_t vs;
    view_t w;
    clear_error();
    if (!valid(h)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the handle is NULL");
    if (h->fmt == FMT_COO) return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "ordering COO handles is not supported");
    if (h->stage == ST_ROWPTR) return SPARSE_STATUS_SUCCESS; /* no column indices yet */
    w = view_of(h);
    if (view_check(fn, &w)) return SPARSE_STATUS_INVALID_VALUE;
    b = w.base;
    vs = vsize(h->vt);
    for (int64_t i = 0; i < w.rows; i++) {
        int64_t s = ig(w.rs, w.iw, i) - b, e = ig(w.re, w.iw, i) - b, sorted = 1;
        for (int64_t k = s + 1; k < e && sorted; k++) sorted = ig(w.ci, w.iw, k - 1) < ig(w.ci, w.iw, k);
        if (!sorted && e - s > longest) longest = e - s;
    }
    if (longest == 0) return SPARSE_STATUS_SUCCESS;
    pr = (pair_t *)xalloc(longest, sizeof *pr);
    ti = xalloc(longest, (size_t)w.iw);
    if (w.v) tv = xalloc(longest, vs);
    if (!pr || !ti || (w.v && !tv)) {
        free(pr);
        free(ti);
        free(tv);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for a row of %lld entries", (long long)longest);
    }
    for (int64_t i = 0; i < w.rows; i++) {
        int64_t s = ig(w.rs, w.iw, i) - b, e = ig(w.re, w.iw, i) - b, sorted = 1;
        for (int64_t k = s + 1; k < e && sorted; k++) sorted = ig(w.ci, w.iw, k - 1) < ig(w.ci, w.iw, k);
        if (sorted) continue;
        for (int64_t k = s; k < e; k++) {
            pr[k - s].col = ig(w.ci, w.iw, k);
            pr[k - s].pos = k;
        }
        qsort(pr, (size_t)(e - s), sizeof *pr, pair_cmp);
        for (int64_t k = s; k < e; k++) {
            is(ti, w.iw, k - s, pr[k - s].col);
            if (w.v) memcpy(at(tv, vs, k - s), at(w.v, vs, pr[k - s].pos), vs);
        }
        memcpy(at(h->ci, (size_t)w.iw, s), ti, (size_t)(e - s) * (size_t)w.iw);
        if (w.v) memcpy(at(h->v, vs, s), tv, (size_t)(e - s) * vs);
    }
    free(pr);
    free(ti);
    free(tv);
    drop_analyses(h); /* the structure an analysis digested has changed */
    return SPARSE_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ sparse products */

static int is_stage(sparse_request_t r) { return r >= SPARSE_STAGE_FULL_MULT && r <= SPARSE_STAGE_FINALIZE_MULT_NO_VAL; }

/* Checks shared by sp2m, spmm, spmmd: both operands CSR-capable and of one type. */
static sparse_status_t operands_ok(const char *fn, const struct sparse_matrix *A, const struct sparse_matrix *B) {
    if (A->fmt != FMT_CSR || B->fmt != FMT_CSR)
        return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "sparse products take CSR handles (convert CSC/COO first)");
    if (A->vt != B->vt) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "A and B hold different precisions");
    if (A->iw != B->iw) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "A and B have different integer widths");
    return SPARSE_STATUS_SUCCESS;
}

static int64_t op_rows(const struct sparse_matrix *h, sparse_operation_t op) {
    return op == SPARSE_OPERATION_NON_TRANSPOSE ? h->rows : h->cols;
}
static int64_t op_cols(const struct sparse_matrix *h, sparse_operation_t op) {
    return op == SPARSE_OPERATION_NON_TRANSPOSE ? h->cols : h->rows;
}

static sparse_status_t shapes_ok(const char *fn, const struct sparse_matrix *A, sparse_operation_t opA,
                                 const struct sparse_matrix *B, sparse_operation_t opB) {
    if (op_cols(A, opA) != op_rows(B, opB))
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "op(A) is %lld x %lld but op(B) is %lld x %lld",
                    (long long)op_rows(A, opA), (long long)op_cols(A, opA), (long long)op_rows(B, opB),
                    (long long)op_cols(B, opB));
    return SPARSE_STATUS_SUCCESS;
}

/* Base of a product's result: the inputs' base (MKL gives 0 when they differ). */
static sparse_index_base_t out_base(const struct sparse_matrix *A, const struct sparse_matrix *B) {
    return A->base == B->base ? A->base : SPARSE_INDEX_BASE_ZERO;
}

/* C = op(A) op(B) in one libspgemm call; the result's arrays stay in libspgemm's matrix. */
static sparse_status_t full_mult(const char *fn, sparse_operation_t opA, const struct sparse_matrix *A,
                                 sparse_operation_t opB, const struct sparse_matrix *B, struct sparse_matrix **out) {
    spgemm_handle_t *lh;
    desc_t da, db;
    spgemm_matrix_t *c = NULL;
    const void *rp, *ci, *v;
    int64_t rows, cols;
    sparse_index_base_t base = out_base(A, B);
    struct sparse_matrix *h;
    sparse_status_t st = lib(fn, &lh);
    spgemm_status_t s;
    if (st) return st;
    st = desc_make(fn, A, &da);
    if (st) return st;
    st = desc_make(fn, B, &db);
    if (st) {
        desc_free(&da);
        return st;
    }
    s = spgemm_multiply_op(lh, core_op(opA), da.m, core_op(opB), db.m, itype(A->iw), itype(A->iw),
                           (spgemm_index_base_t)base, &c);
    desc_free(&da);
    desc_free(&db);
    if (s) return core_fail(fn, s);
    spgemm_matrix_get_info(c, &rows, &cols, NULL, NULL, NULL, NULL, NULL);
    spgemm_matrix_export_csr(c, &rp, &ci, &v);
    h = handle_new(FMT_CSR, A->vt, A->iw, base, rows, cols);
    if (!h) {
        spgemm_matrix_destroy(c);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for the handle");
    }
    h->kind = KIND_OWNED;
    h->core = c;
    h->rs = (void *)(uintptr_t)rp; /* the handle owns this result: order may permute it in place */
    h->re = at(rp, (size_t)A->iw, 1);
    h->ci = (void *)(uintptr_t)ci;
    h->v = (void *)(uintptr_t)v;
    if (!v) h->stage = ST_STRUCT;
    *out = h;
    return SPARSE_STATUS_SUCCESS;
}

/* Symbolic stage of sp2m: a new handle with C's row pointer (and its structure unless
 * NNZ_COUNT), holding the plan that later stages reuse. */
static sparse_status_t sp2m_symbolic(const char *fn, sparse_operation_t opA, const struct sparse_matrix *A,
                                     sparse_operation_t opB, const struct sparse_matrix *B, int with_structure,
                                     struct sparse_matrix **out) {
    spgemm_handle_t *lh;
    desc_t da, db;
    struct sparse_matrix *h;
    int64_t nnz = 0, rows = op_rows(A, opA), cols = op_cols(B, opB);
    sparse_index_base_t base = out_base(A, B);
    spgemm_status_t s;
    sparse_status_t st = lib(fn, &lh);
    if (st) return st;
    h = handle_new(FMT_CSR, A->vt, A->iw, base, rows, cols);
    if (!h) return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for the handle");
    h->kind = KIND_SP2M;
    h->opa = opA;
    h->opb = opB;
    h->own[0] = h->rs = xalloc(rows + 1, (size_t)A->iw);
    if (!h->rs) {
        handle_free(h);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for C's row pointer");
    }
    h->re = at(h->rs, (size_t)A->iw, 1);
    st = desc_make(fn, A, &da);
    if (st) {
        handle_free(h);
        return st;
    }
    st = desc_make(fn, B, &db);
    if (st) {
        desc_free(&da);
        handle_free(h);
        return st;
    }
    s = spgemm_symbolic_op(lh, core_op(opA), da.m, core_op(opB), db.m, itype(A->iw), itype(A->iw),
                           (spgemm_index_base_t)base, h->rs, &h->plan);
    if (!s) s = spgemm_plan_get_nnz(h->plan, &nnz);
    h->stage = ST_ROWPTR;
    if (!s && with_structure) {
        h->own[1] = h->ci = xalloc(nnz, (size_t)A->iw);
        if (!h->ci) st = fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for %lld column indices", (long long)nnz);
        else s = spgemm_numeric_structure(lh, h->plan, da.m, db.m, h->ci);
        h->stage = ST_STRUCT;
    }
    desc_free(&da);
    desc_free(&db);
    if (s) st = core_fail(fn, s);
    if (st) {
        handle_free(h);
        return st;
    }
    *out = h;
    return SPARSE_STATUS_SUCCESS;
}

/* FINALIZE stages of sp2m on the handle of a symbolic stage (A, B may be new handles). */
static sparse_status_t sp2m_finalize(const char *fn, sparse_operation_t opA, const struct sparse_matrix *A,
                                     sparse_operation_t opB, const struct sparse_matrix *B, int values,
                                     struct sparse_matrix *c) {
    spgemm_handle_t *lh;
    desc_t da, db;
    int64_t nnz = 0;
    spgemm_status_t s;
    sparse_status_t st;
    if (c->kind != KIND_SP2M)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "C was not made by a symbolic stage of mkl_sparse_sp2m");
    if (c->opa != opA || c->opb != opB)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the operations differ from those of the symbolic stage");
    if (!values && c->stage >= ST_STRUCT) return SPARSE_STATUS_SUCCESS; /* structure already there */
    if (c->vt != A->vt || c->iw != A->iw)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "A and B differ in type from those of the symbolic stage");
    st = lib(fn, &lh);
    if (st) return st;
    spgemm_plan_get_nnz(c->plan, &nnz);
    if (!c->ci) c->own[1] = c->ci = xalloc(nnz, (size_t)c->iw);
    if (values && !c->v) c->own[2] = c->v = xalloc(nnz, vsize(c->vt));
    if (!c->ci || (values && !c->v))
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for %lld entries of C", (long long)nnz);
    st = desc_make(fn, A, &da);
    if (st) return st;
    st = desc_make(fn, B, &db);
    if (st) {
        desc_free(&da);
        return st;
    }
    s = values ? spgemm_numeric(lh, c->plan, da.m, db.m, c->ci, c->v)
               : spgemm_numeric_structure(lh, c->plan, da.m, db.m, c->ci);
    desc_free(&da);
    desc_free(&db);
    if (s) return core_fail(fn, s);
    if (c->stage == ST_ROWPTR) drop_analyses(c); /* C's structure is new */
    c->stage = values ? ST_VALUES : ST_STRUCT;
    return SPARSE_STATUS_SUCCESS;
}

static sparse_status_t do_sp2m(sparse_operation_t opA, struct matrix_descr descrA, const sparse_matrix_t A,
                               sparse_operation_t opB, struct matrix_descr descrB, const sparse_matrix_t B,
                               sparse_request_t request, sparse_matrix_t *C) {
    const char *fn = "mkl_sparse_sp2m";
    sparse_status_t st;
    struct sparse_matrix *h = NULL;
    clear_error();
    if (!C) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the output handle pointer C is NULL");
    if (!valid(A) || !valid(B)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "A or B is NULL");
    if (!op_ok(opA) || !op_ok(opB))
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "operation %d or %d is not an operation", (int)opA, (int)opB);
    if (!is_stage(request)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "request %d is not a stage", (int)request);
    if (descrA.type != SPARSE_MATRIX_TYPE_GENERAL || descrB.type != SPARSE_MATRIX_TYPE_GENERAL)
        return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "only SPARSE_MATRIX_TYPE_GENERAL descriptors are supported");
    st = operands_ok(fn, A, B);
    if (st) return st;
    if (request == SPARSE_STAGE_FINALIZE_MULT || request == SPARSE_STAGE_FINALIZE_MULT_NO_VAL) {
        if (!valid(*C))
            return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "a FINALIZE stage needs C from a symbolic stage");
        st = shapes_ok(fn, A, opA, B, opB);
        if (st) return st;
        return sp2m_finalize(fn, opA, A, opB, B, request == SPARSE_STAGE_FINALIZE_MULT, *C);
    }
    st = shapes_ok(fn, A, opA, B, opB);
    if (st) return st;
    if (request == SPARSE_STAGE_FULL_MULT) st = full_mult(fn, opA, A, opB, B, &h);
    else st = sp2m_symbolic(fn, opA, A, opB, B, request == SPARSE_STAGE_FULL_MULT_NO_VAL, &h);
    if (st) return st;
    *C = h;
    return SPARSE_STATUS_SUCCESS;
}

static sparse_status_t do_spmm(sparse_operation_t op, const sparse_matrix_t A, const sparse_matrix_t B,
                               sparse_matrix_t *C) {
    const char *fn = "mkl_sparse_spmm";
    sparse_status_t st;
    struct sparse_matrix *h = NULL;
    clear_error();
    if (!C) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the output handle pointer C is NULL");
    if (!valid(A) || !valid(B)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "A or B is NULL");
    if (!op_ok(op)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "operation %d is not an operation", (int)op);
    st = operands_ok(fn, A, B);
    if (!st) st = shapes_ok(fn, A, op, B, SPARSE_OPERATION_NON_TRANSPOSE);
    if (!st) st = full_mult(fn, op, A, SPARSE_OPERATION_NON_TRANSPOSE, B, &h);
    if (st) return st;
    *C = h;
    return SPARSE_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ sypr: C = op(A) B op(A)^H, upper triangle */

/* B's full matrix from the triangle its descriptor names, 0-based (complex: Hermitian). */
static sparse_status_t sypr_mirror(const char *fn, const struct sparse_matrix *B, sparse_fill_mode_t mode,
                                   csr_t *out) {
    view_t w = view_of(B);
    int64_t n = B->rows, *cnt, nnz = 0;
    size_t vs = vsize(B->vt);
    int upper = mode == SPARSE_FILL_MODE_UPPER, cplx = is_complex(B->vt);
    sparse_status_t st = view_check(fn, &w);
    if (st) return st;
    cnt = (int64_t *)calloc((size_t)n + 1, sizeof *cnt);
    if (!cnt) return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory");
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = ig(w.rs, w.iw, i) - w.base; k < ig(w.re, w.iw, i) - w.base; k++) {
            int64_t j = ig(w.ci, w.iw, k) - w.base;
            if (j < 0 || j >= n) {
                free(cnt);
                return fail(SPARSE_STATUS_INVALID_VALUE, fn, "B: entry %lld has column %lld outside the matrix",
                            (long long)k, (long long)(j + w.base));
            }
            if (upper ? j < i : j > i) continue; /* the other triangle is not read */
            cnt[i + 1]++;
            if (j != i) cnt[j + 1]++;
        }
    for (int64_t i = 0; i < n; i++) cnt[i + 1] += cnt[i];
    nnz = cnt[n];
    memset(out, 0, sizeof *out);
    out->rows = out->cols = n;
    out->nnz = nnz;
    out->rp = xalloc(n + 1, (size_t)w.iw);
    out->ci = xalloc(nnz, (size_t)w.iw);
    out->v = w.v ? xalloc(nnz, vs) : NULL;
    if (!out->rp || !out->ci || (w.v && !out->v)) {
        free(cnt);
        csr_free(out);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for %lld entries", (long long)nnz);
    }
    for (int64_t i = 0; i <= n; i++) is(out->rp, w.iw, i, cnt[i]);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = ig(w.rs, w.iw, i) - w.base; k < ig(w.re, w.iw, i) - w.base; k++) {
            int64_t j = ig(w.ci, w.iw, k) - w.base, q;
            if (upper ? j < i : j > i) continue;
            q = cnt[i]++;
            is(out->ci, w.iw, q, j);
            if (w.v) vcopy(at(out->v, vs, q), at(w.v, vs, k), w.vt, 0);
            if (j == i) continue;
            q = cnt[j]++;
            is(out->ci, w.iw, q, i);
            if (w.v) vcopy(at(out->v, vs, q), at(w.v, vs, k), w.vt, cplx);
        }
    free(cnt);
    return SPARSE_STATUS_SUCCESS;
}

/* The upper triangle (diagonal included) of F (0-based) into c's arrays, with c's base. */
static sparse_status_t sypr_upper(const char *fn, const csr_t *f, int iw, int vt, int values,
                                  struct sparse_matrix *c) {
    int64_t nnz = 0, q = 0, b = (int64_t)c->base;
    size_t vs = vsize(vt);
    for (int64_t i = 0; i < f->rows; i++)
        for (int64_t k = ig(f->rp, iw, i); k < ig(f->rp, iw, i + 1); k++) nnz += ig(f->ci, iw, k) >= i;
    if (!c->rs) c->own[0] = c->rs = xalloc(f->rows + 1, (size_t)iw);
    if (!c->ci) c->own[1] = c->ci = xalloc(nnz, (size_t)iw);
    if (values && !c->v) c->own[2] = c->v = xalloc(nnz, vs);
    if (!c->rs || !c->ci || (values && !c->v))
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for %lld entries of C", (long long)nnz);
    c->re = at(c->rs, (size_t)iw, 1);
    for (int64_t i = 0; i < f->rows; i++) {
        is(c->rs, iw, i, q + b);
        for (int64_t k = ig(f->rp, iw, i); k < ig(f->rp, iw, i + 1); k++) {
            int64_t j = ig(f->ci, iw, k);
            if (j < i) continue;
            is(c->ci, iw, q, j + b);
            if (values) memcpy(at(c->v, vs, q), at(f->v, vs, k), vs);
            q++;
        }
    }
    is(c->rs, iw, f->rows, q + b);
    return SPARSE_STATUS_SUCCESS;
}

/* Runs sypr's products: symbolic (new plans, structure of W and F) or numeric (values). */
static sparse_status_t sypr_run(const char *fn, const struct sparse_matrix *A, const struct sparse_matrix *B,
                                int numeric, struct sparse_matrix *c) {
    sypr_t *s = c->sy;
    spgemm_handle_t *lh;
    desc_t da;
    csr_t bf;
    spgemm_matrix_t *mb = NULL, *mw = NULL;
    spgemm_status_t cs = SPGEMM_STATUS_SUCCESS;
    int iw = A->iw, vt = A->vt;
    int64_t nnz = 0;
    sparse_status_t st = lib(fn, &lh);
    if (st) return st;
    st = sypr_mirror(fn, B, s->mode, &bf);
    if (st) return st;
    st = desc_make(fn, A, &da);
    if (st) {
        csr_free(&bf);
        return st;
    }
    st = desc_of_csr(fn, &bf, iw, vt, numeric, 0, &mb);
    if (st) goto out;
    if (!numeric) {
        s->w.rows = bf.rows;
        s->w.cols = op_cols(A, s->opr);
        s->w.rp = xalloc(s->w.rows + 1, (size_t)iw);
        if (!s->w.rp) goto nomem;
        cs = spgemm_symbolic_op(lh, SPGEMM_OPERATION_NON_TRANSPOSE, mb, core_op(s->opr), da.m, itype(iw), itype(iw),
                                SPGEMM_INDEX_BASE_ZERO, s->w.rp, &s->plan_w);
        if (cs) goto out;
        spgemm_plan_get_nnz(s->plan_w, &nnz);
        s->w.ci = xalloc(nnz, (size_t)iw);
        if (!s->w.ci) goto nomem;
        cs = spgemm_numeric_structure(lh, s->plan_w, mb, da.m, s->w.ci);
        if (cs) goto out;
        st = desc_of_csr(fn, &s->w, iw, vt, 0, 0, &mw);
        if (st) goto out;
        s->f.rows = op_rows(A, s->opl);
        s->f.cols = s->w.cols;
        s->f.rp = xalloc(s->f.rows + 1, (size_t)iw);
        if (!s->f.rp) goto nomem;
        cs = spgemm_symbolic_op(lh, core_op(s->opl), da.m, SPGEMM_OPERATION_NON_TRANSPOSE, mw, itype(iw), itype(iw),
                                SPGEMM_INDEX_BASE_ZERO, s->f.rp, &s->plan_f);
        if (cs) goto out;
        spgemm_plan_get_nnz(s->plan_f, &nnz);
        s->f.ci = xalloc(nnz, (size_t)iw);
        if (!s->f.ci) goto nomem;
        cs = spgemm_numeric_structure(lh, s->plan_f, da.m, mw, s->f.ci);
        if (cs) goto out;
        st = sypr_upper(fn, &s->f, iw, vt, 0, c);
    } else {
        spgemm_plan_get_nnz(s->plan_w, &nnz);
        if (!s->w.v) s->w.v = xalloc(nnz, vsize(vt));
        spgemm_plan_get_nnz(s->plan_f, &nnz);
        if (!s->f.v) s->f.v = xalloc(nnz, vsize(vt));
        if (!s->w.v || !s->f.v) goto nomem;
        cs = spgemm_numeric(lh, s->plan_w, mb, da.m, s->w.ci, s->w.v);
        if (cs) goto out;
        st = desc_of_csr(fn, &s->w, iw, vt, 1, 0, &mw);
        if (st) goto out;
        cs = spgemm_numeric(lh, s->plan_f, da.m, mw, s->f.ci, s->f.v);
        if (cs) goto out;
        st = sypr_upper(fn, &s->f, iw, vt, 1, c);
    }
    goto out;
nomem:
    st = fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for an intermediate product");
out:
    if (cs) st = core_fail(fn, cs);
    spgemm_matrix_destroy(mw);
    spgemm_matrix_destroy(mb);
    desc_free(&da);
    csr_free(&bf);
    return st;
}

static sparse_status_t do_sypr(sparse_operation_t op, const sparse_matrix_t A, const sparse_matrix_t B,
                               struct matrix_descr descrB, sparse_matrix_t *C, sparse_request_t request) {
    const char *fn = "mkl_sparse_sypr";
    struct sparse_matrix *c;
    sparse_status_t st;
    int cplx;
    clear_error();
    if (!C) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the output handle pointer C is NULL");
    if (!valid(A) || !valid(B)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "A or B is NULL");
    if (!op_ok(op)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "operation %d is not an operation", (int)op);
    if (!is_stage(request)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "request %d is not a stage", (int)request);
    if (descrB.type != SPARSE_MATRIX_TYPE_SYMMETRIC && descrB.type != SPARSE_MATRIX_TYPE_HERMITIAN)
        return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "B's descriptor must be SYMMETRIC or HERMITIAN");
    if (descrB.mode != SPARSE_FILL_MODE_UPPER && descrB.mode != SPARSE_FILL_MODE_LOWER)
        return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "B's fill mode must be UPPER or LOWER");
    if (descrB.diag != SPARSE_DIAG_NON_UNIT)
        return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "a unit diagonal in B's descriptor is not supported");
    st = operands_ok(fn, A, B);
    if (st) return st;
    cplx = is_complex(A->vt);
    if (B->rows != B->cols) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "B is not square");
    if (op_cols(A, op) != B->rows)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "op(A) has %lld columns but B has %lld rows",
                    (long long)op_cols(A, op), (long long)B->rows);
    if (request == SPARSE_STAGE_FINALIZE_MULT || request == SPARSE_STAGE_FINALIZE_MULT_NO_VAL) {
        c = *C;
        if (!valid(c)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "a FINALIZE stage needs C from a symbolic stage");
        if (c->kind != KIND_SYPR)
            return fail(SPARSE_STATUS_INVALID_VALUE, fn, "C was not made by a symbolic stage of mkl_sparse_sypr");
        if (c->vt != A->vt || c->iw != A->iw || c->rows != op_rows(A, op))
            return fail(SPARSE_STATUS_INVALID_VALUE, fn, "A and B differ from those of the symbolic stage");
        if (request == SPARSE_STAGE_FINALIZE_MULT_NO_VAL) {
            if (c->stage == ST_ROWPTR) c->stage = ST_STRUCT; /* structure computed at the symbolic stage */
            return SPARSE_STATUS_SUCCESS;
        }
        st = sypr_run(fn, A, B, 1, c);
        if (!st) c->stage = ST_VALUES;
        return st;
    }
    c = handle_new(FMT_CSR, A->vt, A->iw, out_base(A, B), op_rows(A, op), op_rows(A, op));
    if (c) c->sy = (sypr_t *)calloc(1, sizeof(sypr_t));
    if (!c || !c->sy) {
        handle_free(c);
        return fail(SPARSE_STATUS_ALLOC_FAILED, fn, "no memory for the handle");
    }
    c->kind = KIND_SYPR;
    /* real: op(A) B op(A)^T; complex: B is Hermitian and T acts as C (as MKL computes it) */
    if (op == SPARSE_OPERATION_NON_TRANSPOSE) {
        c->sy->opl = SPARSE_OPERATION_NON_TRANSPOSE;
        c->sy->opr = cplx ? SPARSE_OPERATION_CONJUGATE_TRANSPOSE : SPARSE_OPERATION_TRANSPOSE;
    } else {
        c->sy->opl = cplx ? SPARSE_OPERATION_CONJUGATE_TRANSPOSE : SPARSE_OPERATION_TRANSPOSE;
        c->sy->opr = SPARSE_OPERATION_NON_TRANSPOSE;
    }
    c->sy->mode = descrB.mode;
    st = sypr_run(fn, A, B, 0, c);
    if (!st && request == SPARSE_STAGE_FULL_MULT) st = sypr_run(fn, A, B, 1, c);
    if (st) {
        handle_free(c);
        return st;
    }
    c->stage = request == SPARSE_STAGE_FULL_MULT ? ST_VALUES : request == SPARSE_STAGE_NNZ_COUNT ? ST_ROWPTR : ST_STRUCT;
    if (request == SPARSE_STAGE_FULL_MULT) { /* one call: the intermediates are not needed again */
        sypr_free(c->sy);
        c->sy = NULL;
        c->kind = KIND_OWNED;
    }
    *C = c;
    return SPARSE_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ spmmd: dense C = op(A) B */

static sparse_status_t do_spmmd(sparse_operation_t op, const sparse_matrix_t A, const sparse_matrix_t B,
                                sparse_layout_t layout, void *C, int64_t ldc, int vt) {
    static const char *const names[] = {"mkl_sparse_s_spmmd", "mkl_sparse_d_spmmd", "mkl_sparse_c_spmmd",
                                        "mkl_sparse_z_spmmd"};
    const char *fn = names[vt];
    struct sparse_matrix *r = NULL;
    int64_t m, n, b;
    size_t vs = vsize(vt);
    sparse_status_t st;
    int row_major = layout == SPARSE_LAYOUT_ROW_MAJOR;
    clear_error();
    if (!valid(A) || !valid(B)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "A or B is NULL");
    if (!op_ok(op)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "operation %d is not an operation", (int)op);
    if (layout != SPARSE_LAYOUT_ROW_MAJOR && layout != SPARSE_LAYOUT_COLUMN_MAJOR)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "layout %d is not a layout", (int)layout);
    if (!C) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the dense output C is NULL");
    st = operands_ok(fn, A, B);
    if (st) return st;
    if (A->vt != vt) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handles hold another precision");
    st = shapes_ok(fn, A, op, B, SPARSE_OPERATION_NON_TRANSPOSE);
    if (st) return st;
    m = op_rows(A, op);
    n = B->cols;
    if (ldc < (row_major ? n : m))
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "ldc = %lld is smaller than %lld", (long long)ldc,
                    (long long)(row_major ? n : m));
    st = full_mult(fn, op, A, SPARSE_OPERATION_NON_TRANSPOSE, B, &r);
    if (st) return st;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) memset(at(C, vs, row_major ? i * ldc + j : j * ldc + i), 0, vs);
    b = (int64_t)r->base;
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = ig(r->rs, r->iw, i) - b; k < ig(r->re, r->iw, i) - b; k++) {
            int64_t j = ig(r->ci, r->iw, k) - b;
            if (r->v) memcpy(at(C, vs, row_major ? i * ldc + j : j * ldc + i), at(r->v, vs, k), vs);
        }
    handle_free(r);
    return SPARSE_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ hints, optimize, mv, mm */

static sparse_status_t do_set_mv_hint(const sparse_matrix_t A, sparse_operation_t op, struct matrix_descr d,
                                      int64_t calls) {
    const char *fn = "mkl_sparse_set_mv_hint";
    struct sparse_matrix *h = A;
    int c;
    clear_error();
    if (!valid(h)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the handle is NULL");
    if (!op_ok(op)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "operation %d is not an operation", (int)op);
    if (d.type != SPARSE_MATRIX_TYPE_GENERAL)
        return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "only SPARSE_MATRIX_TYPE_GENERAL descriptors are supported");
    if (calls < 0) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "expected_calls %lld is negative", (long long)calls);
    c = op != SPARSE_OPERATION_NON_TRANSPOSE;
    h->hinted[c] = 1;
    h->hint_layout[c] = SPGEMM_LAYOUT_ROW_MAJOR;
    h->hint_k[c] = 1;
    return SPARSE_STATUS_SUCCESS;
}

static sparse_status_t do_set_mm_hint(const sparse_matrix_t A, sparse_operation_t op, struct matrix_descr d,
                                      sparse_layout_t layout, int64_t k, int64_t calls) {
    const char *fn = "mkl_sparse_set_mm_hint";
    struct sparse_matrix *h = A;
    int c;
    clear_error();
    if (!valid(h)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the handle is NULL");
    if (!op_ok(op)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "operation %d is not an operation", (int)op);
    if (layout != SPARSE_LAYOUT_ROW_MAJOR && layout != SPARSE_LAYOUT_COLUMN_MAJOR)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "layout %d is not a layout", (int)layout);
    if (d.type != SPARSE_MATRIX_TYPE_GENERAL)
        return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "only SPARSE_MATRIX_TYPE_GENERAL descriptors are supported");
    if (k < 0 || calls < 0) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "negative size or call count");
    c = op != SPARSE_OPERATION_NON_TRANSPOSE;
    h->hinted[c] = 1;
    h->hint_layout[c] = layout == SPARSE_LAYOUT_ROW_MAJOR ? SPGEMM_LAYOUT_ROW_MAJOR : SPGEMM_LAYOUT_COL_MAJOR;
    h->hint_k[c] = k;
    return SPARSE_STATUS_SUCCESS;
}

static sparse_status_t do_set_memory_hint(const sparse_matrix_t A, sparse_memory_usage_t policy) {
    const char *fn = "mkl_sparse_set_memory_hint";
    clear_error();
    if (!valid(A)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the handle is NULL");
    if (policy != SPARSE_MEMORY_NONE && policy != SPARSE_MEMORY_AGGRESSIVE)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "memory policy %d is not a policy", (int)policy);
    A->memory = policy;
    return SPARSE_STATUS_SUCCESS;
}

/* Builds libspgemm's SpMM analysis for the hinted ops: a row partition and, for T/C (unless
 * the memory hint is NONE, which forbids a copy of the structure), A^T's structure. A handle
 * without values or structure yet (an sp2m stage) gets it at its first mv/mm. */
static sparse_status_t build_analyses(const char *fn, struct sparse_matrix *h) {
    spgemm_handle_t *lh;
    desc_t d;
    sparse_status_t st;
    if (h->fmt != FMT_CSR || h->stage != ST_VALUES || !h->v) return SPARSE_STATUS_SUCCESS;
    int need = 0;
    for (int c = 0; c < 2; c++) need |= h->hinted[c] && !h->an[c] && !(c == 1 && h->memory == SPARSE_MEMORY_NONE);
    if (!need) return SPARSE_STATUS_SUCCESS;
    st = lib(fn, &lh);
    if (st) return st;
    st = desc_make(fn, h, &d);
    if (st) return st;
    for (int c = 0; c < 2 && !st; c++) {
        spgemm_status_t s;
        if (!h->hinted[c] || h->an[c] || (c == 1 && h->memory == SPARSE_MEMORY_NONE)) continue;
        s = spgemm_spmm_analysis_create(lh, c ? SPGEMM_OPERATION_TRANSPOSE : SPGEMM_OPERATION_NON_TRANSPOSE, d.m,
                                        h->hint_layout[c], h->hint_k[c], &h->an[c]);
        if (s) st = core_fail(fn, s);
    }
    desc_free(&d);
    return st;
}

static sparse_status_t do_optimize(sparse_matrix_t A) {
    const char *fn = "mkl_sparse_optimize";
    clear_error();
    if (!valid(A)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the handle is NULL");
    A->optimized = 1;
    return build_analyses(fn, A);
}

/* y = alpha op(A) x + beta y with k columns (mv: k = 1). */
static sparse_status_t do_mm(const char *fn, sparse_operation_t op, const void *alpha, const sparse_matrix_t A,
                             struct matrix_descr d, sparse_layout_t layout, const void *x, int64_t k, int64_t ldx,
                             const void *beta, void *y, int64_t ldy, int vt) {
    struct sparse_matrix *h = A;
    spgemm_handle_t *lh;
    desc_t dm;
    spgemm_status_t s;
    spgemm_spmm_analysis_t *an = NULL;
    sparse_status_t st;
    int c;
    clear_error();
    if (!valid(h)) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "the handle is NULL");
    if (!op_ok(op)) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "operation %d is not an operation", (int)op);
    if (layout != SPARSE_LAYOUT_ROW_MAJOR && layout != SPARSE_LAYOUT_COLUMN_MAJOR)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "layout %d is not a layout", (int)layout);
    if (k < 0 || ldx < 0 || ldy < 0)
        return fail(SPARSE_STATUS_INVALID_VALUE, fn, "columns = %lld, ldx = %lld, ldy = %lld: negative", (long long)k,
                    (long long)ldx, (long long)ldy);
    if (!x || !y) return fail(SPARSE_STATUS_NOT_INITIALIZED, fn, "x or y is NULL");
    if (d.type != SPARSE_MATRIX_TYPE_GENERAL)
        return fail(SPARSE_STATUS_NOT_SUPPORTED, fn, "only SPARSE_MATRIX_TYPE_GENERAL descriptors are supported");
    if (h->vt != vt) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handle holds another precision");
    if (h->stage != ST_VALUES || !h->v) return fail(SPARSE_STATUS_INVALID_VALUE, fn, "the handle has no values");
    st = lib(fn, &lh);
    if (st) return st;
    c = op != SPARSE_OPERATION_NON_TRANSPOSE;
    pthread_mutex_lock(&g_analysis_lock);
    if (h->optimized && h->hinted[c] && !h->an[c]) (void)build_analyses(fn, h); /* deferred by optimize */
    an = h->fmt == FMT_CSR && !h->an_stale[c] ? h->an[c] : NULL;
    pthread_mutex_unlock(&g_analysis_lock);
    clear_error();
    st = desc_make(fn, h, &dm);
    if (st) return st;
    s = spgemm_spmm_scaled(lh, core_op(op), alpha, dm.m, an,
                           layout == SPARSE_LAYOUT_ROW_MAJOR ? SPGEMM_LAYOUT_ROW_MAJOR : SPGEMM_LAYOUT_COL_MAJOR, k, x,
                           ldx, beta, y, ldy);
    if (s == SPGEMM_STATUS_PLAN_MISMATCH && an) { /* the caller changed the structure: run without */
        pthread_mutex_lock(&g_analysis_lock);
        h->an_stale[c] = 1; /* destroyed with the handle or by order, never under another call */
        pthread_mutex_unlock(&g_analysis_lock);
        s = spgemm_spmm_scaled(lh, core_op(op), alpha, dm.m, NULL,
                               layout == SPARSE_LAYOUT_ROW_MAJOR ? SPGEMM_LAYOUT_ROW_MAJOR : SPGEMM_LAYOUT_COL_MAJOR,
                               k, x, ldx, beta, y, ldy);
    }
    desc_free(&dm);
    return s ? core_fail(fn, s) : SPARSE_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ entry points */

/* Both integer widths from one body: LP64 names take int, the _64 names MKL_INT64. */
#define ENTRY_POINTS(SUF, I, IW)                                                                                    \
    sparse_status_t mkl_sparse_destroy##SUF(sparse_matrix_t A) { return do_destroy(A); }                            \
    sparse_status_t mkl_sparse_copy##SUF(const sparse_matrix_t source, struct matrix_descr descr,                   \
                                         sparse_matrix_t *dest) {                                                   \
        return do_copy(source, descr, dest);                                                                        \
    }                                                                                                               \
    sparse_status_t mkl_sparse_convert_csr##SUF(const sparse_matrix_t source, sparse_operation_t operation,         \
                                                sparse_matrix_t *dest) {                                            \
        return do_convert_csr(source, operation, dest);                                                             \
    }                                                                                                               \
    sparse_status_t mkl_sparse_order##SUF(const sparse_matrix_t A) { return do_order(A); }                          \
    sparse_status_t mkl_sparse_optimize##SUF(sparse_matrix_t A) { return do_optimize(A); }                          \
    sparse_status_t mkl_sparse_set_memory_hint##SUF(const sparse_matrix_t A, sparse_memory_usage_t policy) {        \
        return do_set_memory_hint(A, policy);                                                                       \
    }                                                                                                               \
    sparse_status_t mkl_sparse_set_mv_hint##SUF(const sparse_matrix_t A, sparse_operation_t operation,              \
                                                struct matrix_descr descr, I expected_calls) {                      \
        return do_set_mv_hint(A, operation, descr, (int64_t)expected_calls);                                        \
    }                                                                                                               \
    sparse_status_t mkl_sparse_set_mm_hint##SUF(const sparse_matrix_t A, sparse_operation_t operation,              \
                                                struct matrix_descr descr, sparse_layout_t layout,                  \
                                                I dense_matrix_size, I expected_calls) {                            \
        return do_set_mm_hint(A, operation, descr, layout, (int64_t)dense_matrix_size, (int64_t)expected_calls);    \
    }                                                                                                               \
    sparse_status_t mkl_sparse_spmm##SUF(sparse_operation_t operation, const sparse_matrix_t A,                     \
                                         const sparse_matrix_t B, sparse_matrix_t *C) {                             \
        return do_spmm(operation, A, B, C);                                                                         \
    }                                                                                                               \
    sparse_status_t mkl_sparse_sp2m##SUF(sparse_operation_t opA, struct matrix_descr descrA,                        \
                                         const sparse_matrix_t A, sparse_operation_t opB,                           \
                                         struct matrix_descr descrB, const sparse_matrix_t B,                       \
                                         sparse_request_t request, sparse_matrix_t *C) {                            \
        return do_sp2m(opA, descrA, A, opB, descrB, B, request, C);                                                 \
    }                                                                                                               \
    sparse_status_t mkl_sparse_sypr##SUF(sparse_operation_t opA, const sparse_matrix_t A, const sparse_matrix_t B,  \
                                         struct matrix_descr descrB, sparse_matrix_t *C, sparse_request_t request) { \
        return do_sypr(opA, A, B, descrB, C, request);                                                              \
    }                                                                                                               \
    TYPED(s, float, SPGEMM_VALUE_FLOAT32, SUF, I, IW)                                                               \
    TYPED(d, double, SPGEMM_VALUE_FLOAT64, SUF, I, IW)                                                              \
    TYPED(c, MKL_Complex8, SPGEMM_VALUE_COMPLEX_FLOAT, SUF, I, IW)                                                  \
    TYPED(z, MKL_Complex16, SPGEMM_VALUE_COMPLEX_DOUBLE, SUF, I, IW)

#define TYPED(P, T, VT, SUF, I, IW)                                                                                 \
    sparse_status_t mkl_sparse_##P##_create_csr##SUF(sparse_matrix_t *A, sparse_index_base_t indexing, I rows,      \
                                                     I cols, I *rows_start, I *rows_end, I *col_indx, T *values) {  \
        return create("mkl_sparse_" #P "_create_csr", A, FMT_CSR, indexing, rows, cols, 0, rows_start, rows_end,    \
                      col_indx, values, VT, IW);                                                                    \
    }                                                                                                               \
    sparse_status_t mkl_sparse_##P##_create_csc##SUF(sparse_matrix_t *A, sparse_index_base_t indexing, I rows,      \
                                                     I cols, I *cols_start, I *cols_end, I *row_indx, T *values) {  \
        return create("mkl_sparse_" #P "_create_csc", A, FMT_CSC, indexing, rows, cols, 0, cols_start, cols_end,    \
                      row_indx, values, VT, IW);                                                                    \
    }                                                                                                               \
    sparse_status_t mkl_sparse_##P##_create_coo##SUF(sparse_matrix_t *A, sparse_index_base_t indexing, I rows,      \
                                                     I cols, I nnz, I *row_indx, I *col_indx, T *values) {          \
        return create("mkl_sparse_" #P "_create_coo", A, FMT_COO, indexing, rows, cols, nnz, row_indx, col_indx,    \
                      NULL, values, VT, IW);                                                                        \
    }                                                                                                               \
    sparse_status_t mkl_sparse_##P##_export_csr##SUF(const sparse_matrix_t source, sparse_index_base_t *indexing,   \
                                                     I *rows, I *cols, I **rows_start, I **rows_end, I **col_indx,  \
                                                     T **values) {                                                  \
        int64_t r = 0, c = 0;                                                                                       \
        void *rs = NULL, *re = NULL, *ci = NULL, *v = NULL;                                                         \
        sparse_status_t st = do_export(source, VT, IW, indexing, rows ? &r : NULL, cols ? &c : NULL,                \
                                       rows_start ? &rs : NULL, rows_end ? &re : NULL, col_indx ? &ci : NULL,       \
                                       values ? &v : NULL);                                                         \
        if (st) return st;                                                                                          \
        *rows = (I)r;                                                                                               \
        *cols = (I)c;                                                                                               \
        *rows_start = (I *)rs;                                                                                      \
        *rows_end = (I *)re;                                                                                        \
        *col_indx = (I *)ci;                                                                                        \
        *values = (T *)v;                                                                                           \
        return SPARSE_STATUS_SUCCESS;                                                                               \
    }                                                                                                               \
    sparse_status_t mkl_sparse_##P##_mv##SUF(sparse_operation_t operation, T alpha, const sparse_matrix_t A,        \
                                             struct matrix_descr descr, const T *x, T beta, T *y) {                 \
        return do_mm("mkl_sparse_" #P "_mv", operation, &alpha, A, descr, SPARSE_LAYOUT_ROW_MAJOR, x, 1, 1, &beta,  \
                     y, 1, VT);                                                                                     \
    }                                                                                                               \
    sparse_status_t mkl_sparse_##P##_mm##SUF(sparse_operation_t operation, T alpha, const sparse_matrix_t A,        \
                                             struct matrix_descr descr, sparse_layout_t layout, const T *x,         \
                                             I columns, I ldx, T beta, T *y, I ldy) {                               \
        return do_mm("mkl_sparse_" #P "_mm", operation, &alpha, A, descr, layout, x, columns, ldx, &beta, y, ldy,   \
                     VT);                                                                                           \
    }                                                                                                               \
    sparse_status_t mkl_sparse_##P##_spmmd##SUF(sparse_operation_t operation, const sparse_matrix_t A,              \
                                                const sparse_matrix_t B, sparse_layout_t layout, T *C, I ldc) {     \
        return do_spmmd(operation, A, B, layout, C, ldc, VT);                                                       \
    }

ENTRY_POINTS(, int, 4)
ENTRY_POINTS(_64, MKL_INT64, 8)

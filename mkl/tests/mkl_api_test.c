/*
 * mkl_api_test.c: one test program for Intel MKL's inspector-executor sparse BLAS, written
 * only against MKL's API (mkl_spblas.h), so that the same source is built against real MKL
 * and against libspgemm_mkl and the two outputs are diffed (mkl/tests/compare.py).
 *
 * Output: one line per fact, "<precision>.<check> <field> ...", deterministic. Lines whose
 * field is "values" hold floating-point numbers (%.17g, complex as re im pairs) and are
 * compared within 1e-12 relative; every other line (statuses, sizes, structure, flags) must
 * match exactly. Exported structure is printed with each row's entries sorted by column,
 * because the order before mkl_sparse_order legitimately differs between implementations;
 * the order itself is checked only after mkl_sparse_order ("sorted=1").
 * "ref ok" lines compare each result with a dense reference computed here.
 *
 * Integer width (how MKL's ILP64 is selected): MKL_INT is 64-bit when the source is compiled
 * with -DMKL_ILP64. With real MKL the plain names (mkl_sparse_d_create_csr, ...) then have to
 * reach MKL's ILP64 interface: link libmkl_intel_ilp64 instead of libmkl_intel_lp64, or link
 * libmkl_rt and set MKL_INTERFACE_LAYER=ILP64 (or call mkl_set_interface_layer) before the
 * first MKL call; MKL's header does not rename anything. MKL 2023+ also exports *_64 entry
 * points that take MKL_INT64 whatever interface is linked: -DMKL_API_TEST_USE_64_NAMES (with
 * -DMKL_ILP64) makes this program call those instead. libspgemm_mkl's header maps the plain
 * names to the *_64 entry points itself under MKL_ILP64. All ILP64 builds print the same.
 *
 * Values: single precision and the exact-arithmetic checks use multiples of 1/4 (every sum
 * and product is then exact, so any summation order gives the same bits); double precision
 * uses random values, so the tolerance is exercised. MKL_API_TEST_DIAG=1 in the environment
 * adds observations that are not part of the contract (orders before mkl_sparse_order) on
 * stderr.
 *
 * Build: scripts/mkl_real.sh (real MKL); the layer's build does the same with its flags.
 */
#ifndef MKL_API_TEST_BODY

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mkl_spblas.h>

#ifdef MKL_API_TEST_USE_64_NAMES
#ifndef MKL_ILP64
#error "MKL_API_TEST_USE_64_NAMES needs -DMKL_ILP64: the _64 entry points take 64-bit integers"
#endif
/* Same mapping as libspgemm_mkl's header makes under MKL_ILP64 (identical redefinitions). */
#define mkl_sparse_s_create_csr mkl_sparse_s_create_csr_64
#define mkl_sparse_d_create_csr mkl_sparse_d_create_csr_64
#define mkl_sparse_c_create_csr mkl_sparse_c_create_csr_64
#define mkl_sparse_z_create_csr mkl_sparse_z_create_csr_64
#define mkl_sparse_s_create_csc mkl_sparse_s_create_csc_64
#define mkl_sparse_d_create_csc mkl_sparse_d_create_csc_64
#define mkl_sparse_c_create_csc mkl_sparse_c_create_csc_64
#define mkl_sparse_z_create_csc mkl_sparse_z_create_csc_64
#define mkl_sparse_s_create_coo mkl_sparse_s_create_coo_64
#define mkl_sparse_d_create_coo mkl_sparse_d_create_coo_64
#define mkl_sparse_c_create_coo mkl_sparse_c_create_coo_64
#define mkl_sparse_z_create_coo mkl_sparse_z_create_coo_64
#define mkl_sparse_copy mkl_sparse_copy_64
#define mkl_sparse_convert_csr mkl_sparse_convert_csr_64
#define mkl_sparse_s_export_csr mkl_sparse_s_export_csr_64
#define mkl_sparse_d_export_csr mkl_sparse_d_export_csr_64
#define mkl_sparse_c_export_csr mkl_sparse_c_export_csr_64
#define mkl_sparse_z_export_csr mkl_sparse_z_export_csr_64
#define mkl_sparse_destroy mkl_sparse_destroy_64
#define mkl_sparse_set_mv_hint mkl_sparse_set_mv_hint_64
#define mkl_sparse_set_mm_hint mkl_sparse_set_mm_hint_64
#define mkl_sparse_set_memory_hint mkl_sparse_set_memory_hint_64
#define mkl_sparse_optimize mkl_sparse_optimize_64
#define mkl_sparse_order mkl_sparse_order_64
#define mkl_sparse_s_mv mkl_sparse_s_mv_64
#define mkl_sparse_d_mv mkl_sparse_d_mv_64
#define mkl_sparse_c_mv mkl_sparse_c_mv_64
#define mkl_sparse_z_mv mkl_sparse_z_mv_64
#define mkl_sparse_s_mm mkl_sparse_s_mm_64
#define mkl_sparse_d_mm mkl_sparse_d_mm_64
#define mkl_sparse_c_mm mkl_sparse_c_mm_64
#define mkl_sparse_z_mm mkl_sparse_z_mm_64
#define mkl_sparse_spmm mkl_sparse_spmm_64
#define mkl_sparse_sp2m mkl_sparse_sp2m_64
#define mkl_sparse_sypr mkl_sparse_sypr_64
#define mkl_sparse_s_spmmd mkl_sparse_s_spmmd_64
#define mkl_sparse_d_spmmd mkl_sparse_d_spmmd_64
#define mkl_sparse_c_spmmd mkl_sparse_c_spmmd_64
#define mkl_sparse_z_spmmd mkl_sparse_z_spmmd_64
#endif

typedef long long ll;

/* ------------------------------------------------------------------ harness helpers */

static int g_diag;         /* MKL_API_TEST_DIAG set: extra observations on stderr */
static int g_layer_fail;   /* layer build only: a failure without error text (exit status 1) */
static const char *g_prec; /* "s", "d", "c" or "z": first part of every line */

static void die(const char *what) {
    fprintf(stderr, "mkl_api_test: %s\n", what);
    exit(2);
}

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) die("out of memory");
    return p;
}

/* One output line: "<prec>.<check> <field> <text>". */
static void out(const char *check, const char *field, const char *fmt, ...) {
    va_list ap;
    printf("%s.%s %s", g_prec, check, field);
    if (fmt && *fmt) {
        putchar(' ');
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
    }
    putchar('\n');
}

static void diag(const char *fmt, ...) {
    va_list ap;
    if (!g_diag) return;
    fprintf(stderr, "diag %s.", g_prec);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static const char *st(sparse_status_t s) {
    switch (s) {
    case SPARSE_STATUS_SUCCESS: return "SUCCESS";
    case SPARSE_STATUS_NOT_INITIALIZED: return "NOT_INITIALIZED";
    case SPARSE_STATUS_ALLOC_FAILED: return "ALLOC_FAILED";
    case SPARSE_STATUS_INVALID_VALUE: return "INVALID_VALUE";
    case SPARSE_STATUS_EXECUTION_FAILED: return "EXECUTION_FAILED";
    case SPARSE_STATUS_INTERNAL_ERROR: return "INTERNAL_ERROR";
    case SPARSE_STATUS_NOT_SUPPORTED: return "NOT_SUPPORTED";
    }
    return "UNKNOWN";
}

static const char *opname(sparse_operation_t op) {
    return op == SPARSE_OPERATION_NON_TRANSPOSE ? "N" : op == SPARSE_OPERATION_TRANSPOSE ? "T" : "C";
}

/* splitmix64: same sequence on every platform, so inputs (and outputs) are reproducible. */
static uint64_t g_rng;
static void rng_seed(uint64_t s) { g_rng = s * 0x9E3779B97F4A7C15ull + 1; }
static uint64_t rng_next(void) {
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_unit(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0); }
static ll rng_int(ll n) { return (ll)(rng_next() % (uint64_t)n); }

/* ------------------------------------------------------------------ complex doubles (reference) */

typedef struct {
    double re, im;
} cd;

static cd cmk(double re, double im) { cd r; r.re = re; r.im = im; return r; }
static cd cadd(cd a, cd b) { return cmk(a.re + b.re, a.im + b.im); }
static cd cmul(cd a, cd b) { return cmk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static cd cconj(cd a) { return cmk(a.re, -a.im); }

enum { VK_DYADIC, VK_RANDOM };

/* Nonzero multiples of 1/4 in [-2, 2] (exact in float), or uniform in (-1, 1). */
static double gen_one(int kind) {
    if (kind == VK_RANDOM) return 2.0 * rng_unit() - 1.0;
    ll k = rng_int(16) - 8;
    return (double)(k >= 0 ? k + 1 : k) / 4.0;
}

static cd *gen_vals(ll n, int kind, int cplx, uint64_t seed) {
    cd *v = (cd *)xcalloc((size_t)n, sizeof *v);
    rng_seed(seed);
    for (ll i = 0; i < n; i++) {
        v[i].re = gen_one(kind);
        v[i].im = cplx ? gen_one(kind) : 0.0;
    }
    return v;
}

/* ------------------------------------------------------------------ sparsity patterns */

/* Duplicate-free CSR structure, 0-based, 64-bit. */
typedef struct {
    ll rows, cols, nnz;
    ll *rp, *ci;
} pat_t;

enum { PAT_EMPTY_ROWS = 1, PAT_UNSORTED = 2 };

/* Random pattern with about density*cols entries a row; with PAT_EMPTY_ROWS every third
 * row (1, 4, 7, ...) is empty; with PAT_UNSORTED each row's columns come in descending order. */
static pat_t pat_random(ll rows, ll cols, double density, unsigned flags, uint64_t seed) {
    pat_t p;
    p.rows = rows;
    p.cols = cols;
    p.rp = (ll *)xcalloc((size_t)rows + 1, sizeof(ll));
    p.ci = (ll *)xcalloc((size_t)(rows * cols), sizeof(ll));
    p.nnz = 0;
    rng_seed(seed);
    for (ll i = 0; i < rows; i++) {
        ll start = p.nnz;
        for (ll j = 0; j < cols; j++) {
            int take = rng_unit() < density;
            if ((flags & PAT_EMPTY_ROWS) && i % 3 == 1) continue;
            if (take) p.ci[p.nnz++] = j;
        }
        if (flags & PAT_UNSORTED)
            for (ll a = start, b = p.nnz - 1; a < b; a++, b--) {
                ll t = p.ci[a];
                p.ci[a] = p.ci[b];
                p.ci[b] = t;
            }
        p.rp[i + 1] = p.nnz;
    }
    return p;
}

/* Symmetric pattern (both triangles stored, diagonal present), as PETSc stores a symmetric AIJ. */
static pat_t pat_symmetric(ll n, double density, uint64_t seed) {
    unsigned char *d = (unsigned char *)xcalloc((size_t)(n * n), 1);
    pat_t p;
    rng_seed(seed);
    for (ll i = 0; i < n; i++) {
        d[i * n + i] = 1;
        for (ll j = i + 1; j < n; j++)
            if (rng_unit() < density) d[i * n + j] = d[j * n + i] = 1;
    }
    p.rows = p.cols = n;
    p.rp = (ll *)xcalloc((size_t)n + 1, sizeof(ll));
    p.ci = (ll *)xcalloc((size_t)(n * n), sizeof(ll));
    p.nnz = 0;
    for (ll i = 0; i < n; i++) {
        for (ll j = 0; j < n; j++)
            if (d[i * n + j]) p.ci[p.nnz++] = j;
        p.rp[i + 1] = p.nnz;
    }
    free(d);
    return p;
}

/* Values of a symmetric (or Hermitian) matrix stored in both triangles of a symmetric pattern. */
static cd *gen_sym_vals(const pat_t *p, int kind, int cplx, int hermitian, uint64_t seed) {
    cd *v = gen_vals(p->nnz, kind, cplx, seed);
    for (ll i = 0; i < p->rows; i++)
        for (ll k = p->rp[i]; k < p->rp[i + 1]; k++) {
            ll j = p->ci[k];
            if (j > i) continue;
            if (j == i) {
                if (hermitian) v[k].im = 0.0;
                continue;
            }
            for (ll t = p->rp[j]; t < p->rp[j + 1]; t++) /* v(i,j) from v(j,i) */
                if (p->ci[t] == i) v[k] = hermitian ? cconj(v[t]) : v[t];
        }
    return v;
}

static void pat_free(pat_t *p) {
    free(p->rp);
    free(p->ci);
    p->rp = p->ci = NULL;
}

/* ------------------------------------------------------------------ dense reference */

/* Dense matrix with a structural-nonzero mask: products keep structural entries even where
 * values cancel, as a sparse product's structure does. */
typedef struct {
    ll r, c;
    cd *v;
    unsigned char *s;
} dn_t;

static dn_t dn_new(ll r, ll c) {
    dn_t d;
    d.r = r;
    d.c = c;
    d.v = (cd *)xcalloc((size_t)(r * c), sizeof(cd));
    d.s = (unsigned char *)xcalloc((size_t)(r * c), 1);
    return d;
}

static void dn_free(dn_t *d) {
    free(d->v);
    free(d->s);
    d->v = NULL;
    d->s = NULL;
}

static dn_t dn_from(const pat_t *p, const cd *vals) {
    dn_t d = dn_new(p->rows, p->cols);
    for (ll i = 0; i < p->rows; i++)
        for (ll k = p->rp[i]; k < p->rp[i + 1]; k++) {
            d.s[i * p->cols + p->ci[k]] = 1;
            d.v[i * p->cols + p->ci[k]] = vals ? vals[k] : cmk(0, 0);
        }
    return d;
}

static dn_t dn_op(const dn_t *a, sparse_operation_t op) {
    dn_t d = op == SPARSE_OPERATION_NON_TRANSPOSE ? dn_new(a->r, a->c) : dn_new(a->c, a->r);
    for (ll i = 0; i < a->r; i++)
        for (ll j = 0; j < a->c; j++) {
            ll t = op == SPARSE_OPERATION_NON_TRANSPOSE ? i * a->c + j : j * a->r + i;
            cd x = a->v[i * a->c + j];
            d.v[t] = op == SPARSE_OPERATION_CONJUGATE_TRANSPOSE ? cconj(x) : x;
            d.s[t] = a->s[i * a->c + j];
        }
    return d;
}

static dn_t dn_mul(const dn_t *a, const dn_t *b) {
    dn_t d = dn_new(a->r, b->c);
    if (a->c != b->r) die("reference: inner dimensions differ");
    for (ll i = 0; i < a->r; i++)
        for (ll k = 0; k < a->c; k++) {
            if (!a->s[i * a->c + k]) continue;
            for (ll j = 0; j < b->c; j++) {
                if (!b->s[k * b->c + j]) continue;
                d.s[i * d.c + j] = 1;
                d.v[i * d.c + j] = cadd(d.v[i * d.c + j], cmul(a->v[i * a->c + k], b->v[k * b->c + j]));
            }
        }
    return d;
}

/* The matrix a symmetric/Hermitian descriptor makes of a's upper (or lower) triangle. */
static dn_t dn_from_triangle(const dn_t *a, int upper, int hermitian) {
    dn_t d = dn_new(a->r, a->c);
    for (ll i = 0; i < a->r; i++)
        for (ll j = 0; j < a->c; j++) {
            int in = upper ? j >= i : j <= i;
            if (!in || !a->s[i * a->c + j]) continue;
            d.s[i * a->c + j] = d.s[j * a->c + i] = 1;
            d.v[i * a->c + j] = a->v[i * a->c + j];
            d.v[j * a->c + i] = hermitian ? cconj(a->v[i * a->c + j]) : a->v[i * a->c + j];
        }
    return d;
}

static void dn_keep_upper(dn_t *d) {
    for (ll i = 0; i < d->r; i++)
        for (ll j = 0; j < i && j < d->c; j++) {
            d->s[i * d->c + j] = 0;
            d->v[i * d->c + j] = cmk(0, 0);
        }
}

static int close_to(double a, double b, double scale) {
    return a == b || fabs(a - b) <= 1e-12 * (fabs(b) + scale);
}

static double dn_scale(const dn_t *d) {
    double m = 1.0;
    for (ll i = 0; i < d->r * d->c; i++) m = fmax(m, fmax(fabs(d->v[i].re), fabs(d->v[i].im)));
    return m;
}

/* ------------------------------------------------------------------ canonical entry lists */

typedef struct {
    ll row, col, pos; /* pos: index in the exported arrays */
} ent_t;

static int ent_cmp(const void *a, const void *b) {
    const ent_t *x = (const ent_t *)a, *y = (const ent_t *)b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return 0;
}

static void print_ll_list(const char *check, const char *field, const ll *v, ll n) {
    printf("%s.%s %s", g_prec, check, field);
    for (ll i = 0; i < n; i++) printf(" %lld", v[i]);
    putchar('\n');
}

/* Flags of show(). */
enum {
    SH_VALUES = 1,  /* print values and compare them with the reference */
    SH_NULLS = 2,   /* print whether the column and value arrays are NULL */
    SH_SORTED = 4,  /* print whether rows come sorted (only meaningful after mkl_sparse_order) */
    SH_ROWPTR = 8   /* structure is the row pointer only (after SPARSE_STAGE_NNZ_COUNT) */
};

#define MKL_API_TEST_BODY

#define P s
#define PNAME "s"
#define T float
#define IS_CPLX 0
#define SETV(x, c) ((x) = (float)(c).re)
#define GETV(x) cmk((double)(x), 0.0)
#include "mkl_api_test.c"
#undef P
#undef PNAME
#undef T
#undef IS_CPLX
#undef SETV
#undef GETV

#define P d
#define PNAME "d"
#define T double
#define IS_CPLX 0
#define SETV(x, c) ((x) = (c).re)
#define GETV(x) cmk((x), 0.0)
#include "mkl_api_test.c"
#undef P
#undef PNAME
#undef T
#undef IS_CPLX
#undef SETV
#undef GETV

#define P c
#define PNAME "c"
#define T MKL_Complex8
#define IS_CPLX 1
#define SETV(x, v) ((x).real = (float)(v).re, (x).imag = (float)(v).im)
#define GETV(x) cmk((double)(x).real, (double)(x).imag)
#include "mkl_api_test.c"
#undef P
#undef PNAME
#undef T
#undef IS_CPLX
#undef SETV
#undef GETV

#define P z
#define PNAME "z"
#define T MKL_Complex16
#define IS_CPLX 1
#define SETV(x, v) ((x).real = (v).re, (x).imag = (v).im)
#define GETV(x) cmk((x).real, (x).imag)
#include "mkl_api_test.c"
#undef P
#undef PNAME
#undef T
#undef IS_CPLX
#undef SETV
#undef GETV

int main(void) {
    const char *e = getenv("MKL_API_TEST_DIAG");
    g_diag = e && *e && strcmp(e, "0") != 0;
    printf("config sizeof(MKL_INT)=%u\n", (unsigned)sizeof(MKL_INT));
    run_all_s();
    run_all_d();
    run_all_c();
    run_all_z();
    printf("end\n");
    return g_layer_fail;
}

#else /* MKL_API_TEST_BODY: everything below is compiled once per precision P */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
/* F(name): this precision's copy of a test function; X(name): MKL's mkl_sparse_<P>_name. */
#define F(name) CAT(name, CAT(_, P))
#define X(name) CAT(CAT(mkl_sparse_, P), CAT(_, name))

/* single precision (s, c) runs on exact values, double precision (d, z) on random ones */
#define VKIND (sizeof(T) == (IS_CPLX ? 16 : 8) ? VK_RANDOM : VK_DYADIC)

/* A matrix handle over arrays this program owns (freed only after mkl_sparse_destroy). */
typedef struct {
    sparse_matrix_t h;
    MKL_INT *rp, *ci;
    T *v;
    pat_t p;
    cd *val;
    dn_t dense;
} F(mat_t);

static sparse_status_t F(mat_create)(F(mat_t) *m, const pat_t *p, const cd *val, int base) {
    sparse_status_t s;
    memset(m, 0, sizeof *m);
    m->p = *p;
    m->rp = (MKL_INT *)xcalloc((size_t)p->rows + 1, sizeof(MKL_INT));
    m->ci = (MKL_INT *)xcalloc((size_t)p->nnz, sizeof(MKL_INT));
    for (ll i = 0; i <= p->rows; i++) m->rp[i] = (MKL_INT)(p->rp[i] + base);
    for (ll k = 0; k < p->nnz; k++) m->ci[k] = (MKL_INT)(p->ci[k] + base);
    if (val) {
        m->v = (T *)xcalloc((size_t)p->nnz, sizeof(T));
        for (ll k = 0; k < p->nnz; k++) SETV(m->v[k], val[k]);
    }
    m->val = (cd *)xcalloc((size_t)p->nnz, sizeof(cd));
    if (val) memcpy(m->val, val, sizeof(cd) * (size_t)p->nnz);
    m->dense = dn_from(p, val);
    s = X(create_csr)(&m->h, base ? SPARSE_INDEX_BASE_ONE : SPARSE_INDEX_BASE_ZERO, (MKL_INT)p->rows,
                      (MKL_INT)p->cols, m->rp, m->rp + 1, m->ci, m->v);
    if (s != SPARSE_STATUS_SUCCESS) m->h = NULL;
    return s;
}

/* Destroys the handle, then frees the arrays it was created over; the pattern stays. */
static void F(mat_free)(F(mat_t) *m) {
    if (m->h) mkl_sparse_destroy(m->h);
    m->h = NULL;
    free(m->rp);
    free(m->ci);
    free(m->v);
    free(m->val);
    dn_free(&m->dense);
    m->rp = m->ci = NULL;
    m->v = NULL;
    m->val = NULL;
}

/* Exports h and prints it canonically (rows' entries sorted by column), then compares it with
 * ref (structure always, values with SH_VALUES). */
static void F(show)(const char *check, sparse_matrix_t h, const dn_t *ref, unsigned fl) {
    sparse_index_base_t base = SPARSE_INDEX_BASE_ZERO;
    MKL_INT rows = -1, cols = -1, *rs = NULL, *re = NULL, *ci = NULL;
    T *v = NULL;
    sparse_status_t s = X(export_csr)(h, &base, &rows, &cols, &rs, &re, &ci, &v);
    ll nnz = 0, b, n = 0;
    int contiguous = 1, sorted = 1;
    ent_t *e;
    out(check, "export", "%s", st(s));
    if (s != SPARSE_STATUS_SUCCESS) return;
    b = (ll)base;
    for (MKL_INT i = 0; i < rows; i++) {
        nnz += (ll)(re[i] - rs[i]);
        if (i + 1 < rows && re[i] != rs[i + 1]) contiguous = 0;
    }
    out(check, "csr", "base=%lld rows=%lld cols=%lld nnz=%lld rowptr_contiguous=%d", b, (ll)rows, (ll)cols,
        nnz, contiguous);
    if (fl & SH_NULLS) out(check, "nulls", "colind=%d values=%d", ci == NULL, v == NULL);
    {
        ll *rp = (ll *)xcalloc((size_t)rows + 1, sizeof(ll));
        for (MKL_INT i = 0; i < rows; i++) rp[i] = (ll)rs[i];
        if (rows > 0) rp[rows] = (ll)re[rows - 1];
        if (rows == 0) rp[0] = b;
        print_ll_list(check, "rowptr", rp, (ll)rows + 1);
        free(rp);
    }
    if (ref) { /* row counts against the reference, whatever else was exported */
        int ok = ref->r == (ll)rows && ref->c == (ll)cols;
        for (ll i = 0; ok && i < ref->r; i++) {
            ll cnt = 0;
            for (ll j = 0; j < ref->c; j++) cnt += ref->s[i * ref->c + j];
            if (cnt != (ll)(re[i] - rs[i])) ok = 0;
        }
        if (fl & SH_ROWPTR) out(check, "ref", "%s", ok ? "ok" : "FAIL row counts");
        if (!ok && !(fl & SH_ROWPTR)) out(check, "ref", "FAIL row counts");
        if (!ok) return;
    }
    if ((fl & SH_ROWPTR) || (ci == NULL && nnz > 0)) return;
    e = (ent_t *)xcalloc((size_t)nnz, sizeof(ent_t));
    for (MKL_INT i = 0; i < rows; i++)
        for (ll k = (ll)rs[i] - b; k < (ll)re[i] - b; k++) {
            if (k > (ll)rs[i] - b && ci[k] <= ci[k - 1]) sorted = 0;
            e[n].row = (ll)i;
            e[n].col = (ll)ci[k];
            e[n].pos = k;
            n++;
        }
    qsort(e, (size_t)n, sizeof *e, ent_cmp);
    if (fl & SH_SORTED) out(check, "order", "sorted=%d", sorted);
    else diag("%s rows_sorted_before_order=%d", check, sorted);
    printf("%s.%s colind", g_prec, check);
    for (ll k = 0; k < n; k++) printf(" %lld", e[k].col);
    putchar('\n');
    if ((fl & SH_VALUES) && v) {
        printf("%s.%s values", g_prec, check);
        for (ll k = 0; k < n; k++) {
            cd x = GETV(v[e[k].pos]);
            if (IS_CPLX) printf(" %.17g %.17g", x.re, x.im);
            else printf(" %.17g", x.re);
        }
        putchar('\n');
    }
    if (ref) {
        const char *why = NULL;
        double scale = dn_scale(ref);
        for (ll k = 0; k < n && !why; k++) {
            ll i = e[k].row, j = e[k].col - b;
            if (j < 0 || j >= ref->c || !ref->s[i * ref->c + j]) why = "entry outside reference structure";
            else if (k > 0 && e[k].row == e[k - 1].row && e[k].col == e[k - 1].col) why = "duplicate entry";
            else if ((fl & SH_VALUES) && v) {
                cd x = GETV(v[e[k].pos]), y = ref->v[i * ref->c + j];
                if (!close_to(x.re, y.re, scale) || !close_to(x.im, y.im, scale)) why = "value differs";
            }
        }
        if (!why && (fl & SH_VALUES) && !v) why = "values missing";
        out(check, "ref", "%s%s", why ? "FAIL " : "ok", why ? why : "");
    }
    free(e);
}

static struct matrix_descr F(descr)(sparse_matrix_type_t t, sparse_fill_mode_t m, sparse_diag_type_t d) {
    struct matrix_descr r;
    r.type = t;
    r.mode = m;
    r.diag = d;
    return r;
}

static struct matrix_descr F(general)(void) {
    return F(descr)(SPARSE_MATRIX_TYPE_GENERAL, SPARSE_FILL_MODE_FULL, SPARSE_DIAG_NON_UNIT);
}

/* PETSc's MatSeqAIJMKL_create_mkl_handle: create, mv and memory hints, optimize. */
static void F(petsc_handle)(const char *check, F(mat_t) *m, const pat_t *p, const cd *val) {
    struct matrix_descr d = F(descr)(SPARSE_MATRIX_TYPE_GENERAL, SPARSE_FILL_MODE_LOWER, SPARSE_DIAG_NON_UNIT);
    sparse_status_t s1 = F(mat_create)(m, p, val, 0), s2, s3, s4;
    s2 = mkl_sparse_set_mv_hint(m->h, SPARSE_OPERATION_NON_TRANSPOSE, d, 1000);
    s3 = mkl_sparse_set_memory_hint(m->h, SPARSE_MEMORY_AGGRESSIVE);
    s4 = mkl_sparse_optimize(m->h);
    out(check, "status", "create=%s mv_hint=%s memory_hint=%s optimize=%s", st(s1), st(s2), st(s3), st(s4));
}

/* op(A) has rows x inner; A is stored transposed for T and C. */
static pat_t F(op_pattern)(sparse_operation_t op, ll rows, ll inner, double dens, unsigned fl, uint64_t seed) {
    return op == SPARSE_OPERATION_NON_TRANSPOSE ? pat_random(rows, inner, dens, fl, seed)
                                                : pat_random(inner, rows, dens, fl, seed);
}

/* ------------------------------------------------------------------ PETSc's sequences */

/* MatMatMultSymbolic/Numeric_SeqAIJMKL_SeqAIJMKL: SPARSE_STAGE_FULL_MULT_NO_VAL once, then
 * SPARSE_STAGE_FINALIZE_MULT on the same C after A and B were destroyed and re-created over
 * new values (PETSc re-creates a handle whenever the matrix changed). PETSc sets only
 * descr.type; mode and diag are left as they happen to be (here: out-of-range values). */
static void F(test_petsc_mult)(sparse_operation_t opA, sparse_operation_t opB) {
    char ck[64];
    const ll m = 7, k = 9, n = 6;
    pat_t pa = F(op_pattern)(opA, m, k, 0.35, PAT_EMPTY_ROWS, 11);
    pat_t pb = opB == SPARSE_OPERATION_NON_TRANSPOSE ? pat_random(k, n, 0.3, PAT_EMPTY_ROWS, 12)
                                                     : pat_random(n, k, 0.3, PAT_EMPTY_ROWS, 12);
    cd *va = gen_vals(pa.nnz, VKIND, IS_CPLX, 21), *vb = gen_vals(pb.nnz, VKIND, IS_CPLX, 22);
    F(mat_t) A, B;
    sparse_matrix_t C = NULL;
    struct matrix_descr g;
    dn_t oa, ob, ref;
    sparse_status_t s;
    memset(&g, 0, sizeof g);
    g.type = SPARSE_MATRIX_TYPE_GENERAL;
    g.mode = (sparse_fill_mode_t)0;
    g.diag = (sparse_diag_type_t)0;

    snprintf(ck, sizeof ck, "petsc_mult.%s%s.A", opname(opA), opname(opB));
    F(petsc_handle)(ck, &A, &pa, va);
    snprintf(ck, sizeof ck, "petsc_mult.%s%s.B", opname(opA), opname(opB));
    F(petsc_handle)(ck, &B, &pb, vb);
    oa = dn_op(&A.dense, opA);
    ob = dn_op(&B.dense, opB);
    ref = dn_mul(&oa, &ob);
    snprintf(ck, sizeof ck, "petsc_mult.%s%s.symbolic", opname(opA), opname(opB));
    s = mkl_sparse_sp2m(opA, g, A.h, opB, g, B.h, SPARSE_STAGE_FULL_MULT_NO_VAL, &C);
    out(ck, "status", "FULL_MULT_NO_VAL=%s", st(s));
    if (s == SPARSE_STATUS_SUCCESS) {
        struct matrix_descr dl = F(descr)(SPARSE_MATRIX_TYPE_GENERAL, SPARSE_FILL_MODE_LOWER, SPARSE_DIAG_NON_UNIT);
        F(show)(ck, C, &ref, SH_NULLS);
        out(ck, "status", "C.mv_hint=%s C.memory_hint=%s",
            st(mkl_sparse_set_mv_hint(C, SPARSE_OPERATION_NON_TRANSPOSE, dl, 1000)),
            st(mkl_sparse_set_memory_hint(C, SPARSE_MEMORY_AGGRESSIVE)));
    }
    dn_free(&oa);
    dn_free(&ob);
    dn_free(&ref);
    /* new values, same structure, fresh handles */
    F(mat_free)(&A);
    F(mat_free)(&B);
    free(va);
    free(vb);
    va = gen_vals(pa.nnz, VKIND, IS_CPLX, 31);
    vb = gen_vals(pb.nnz, VKIND, IS_CPLX, 32);
    snprintf(ck, sizeof ck, "petsc_mult.%s%s.A2", opname(opA), opname(opB));
    F(petsc_handle)(ck, &A, &pa, va);
    snprintf(ck, sizeof ck, "petsc_mult.%s%s.B2", opname(opA), opname(opB));
    F(petsc_handle)(ck, &B, &pb, vb);
    oa = dn_op(&A.dense, opA);
    ob = dn_op(&B.dense, opB);
    ref = dn_mul(&oa, &ob);
    snprintf(ck, sizeof ck, "petsc_mult.%s%s.numeric", opname(opA), opname(opB));
    if (C) {
        s = mkl_sparse_sp2m(opA, g, A.h, opB, g, B.h, SPARSE_STAGE_FINALIZE_MULT, &C);
        out(ck, "status", "FINALIZE_MULT=%s", st(s));
        if (s == SPARSE_STATUS_SUCCESS) F(show)(ck, C, &ref, SH_VALUES);
        mkl_sparse_destroy(C);
    }
    dn_free(&oa);
    dn_free(&ob);
    dn_free(&ref);
    F(mat_free)(&A);
    F(mat_free)(&B);
    free(va);
    free(vb);
    pat_free(&pa);
    pat_free(&pb);
}

/* MatProductSymbolic/Numeric_PtAP_SeqAIJMKL_SeqAIJMKL_SymmetricReal: C = P^T A P with
 * mkl_sparse_sypr(SPARSE_OPERATION_TRANSPOSE, P, A, {SYMMETRIC, UPPER, NON_UNIT}), stage
 * FULL_MULT_NO_VAL, then FINALIZE_MULT on the same C after new values. A is stored in full
 * (both triangles), as PETSc stores it. For complex types the descriptor is Hermitian and
 * the operation the conjugate transpose (PETSc itself uses sypr for real scalars only). */
static void F(test_petsc_ptap)(void) {
    const ll n = 8, m = 5;
    const int herm = IS_CPLX;
    const sparse_operation_t op = herm ? SPARSE_OPERATION_CONJUGATE_TRANSPOSE : SPARSE_OPERATION_TRANSPOSE;
    pat_t pa = pat_symmetric(n, 0.3, 41), pp = pat_random(n, m, 0.3, PAT_EMPTY_ROWS, 42);
    cd *va = gen_sym_vals(&pa, VKIND, IS_CPLX, herm, 51), *vp = gen_vals(pp.nnz, VKIND, IS_CPLX, 52);
    struct matrix_descr ds = F(descr)(herm ? SPARSE_MATRIX_TYPE_HERMITIAN : SPARSE_MATRIX_TYPE_SYMMETRIC,
                                      SPARSE_FILL_MODE_UPPER, SPARSE_DIAG_NON_UNIT);
    F(mat_t) A, Pm;
    sparse_matrix_t C = NULL;
    sparse_status_t s;
    int round;
    for (round = 0; round < 2; round++) {
        dn_t sa, op_p, op_pt, t1, ref;
        if (round == 1) { /* numeric phase: new values of A and P in fresh handles */
            free(va);
            free(vp);
            va = gen_sym_vals(&pa, VKIND, IS_CPLX, herm, 61);
            vp = gen_vals(pp.nnz, VKIND, IS_CPLX, 62);
        }
        F(petsc_handle)(round ? "petsc_ptap.A2" : "petsc_ptap.A", &A, &pa, va);
        F(petsc_handle)(round ? "petsc_ptap.P2" : "petsc_ptap.P", &Pm, &pp, vp);
        sa = dn_from_triangle(&A.dense, 1, herm);
        op_p = dn_op(&Pm.dense, op);                                        /* op(P): m x n */
        op_pt = dn_op(&op_p, herm ? SPARSE_OPERATION_CONJUGATE_TRANSPOSE : SPARSE_OPERATION_TRANSPOSE);
        t1 = dn_mul(&op_p, &sa);
        ref = dn_mul(&t1, &op_pt);
        dn_keep_upper(&ref);
        if (round == 0) {
            s = mkl_sparse_sypr(op, Pm.h, A.h, ds, &C, SPARSE_STAGE_FULL_MULT_NO_VAL);
            out("petsc_ptap.symbolic", "status", "FULL_MULT_NO_VAL=%s", st(s));
            if (s == SPARSE_STATUS_SUCCESS) F(show)("petsc_ptap.symbolic", C, &ref, SH_NULLS);
            else C = NULL;
        } else if (C) {
            s = mkl_sparse_sypr(op, Pm.h, A.h, ds, &C, SPARSE_STAGE_FINALIZE_MULT);
            out("petsc_ptap.numeric", "status", "FINALIZE_MULT=%s", st(s));
            if (s == SPARSE_STATUS_SUCCESS) F(show)("petsc_ptap.numeric", C, &ref, SH_VALUES);
        }
        dn_free(&sa);
        dn_free(&op_p);
        dn_free(&op_pt);
        dn_free(&t1);
        dn_free(&ref);
        F(mat_free)(&A);
        F(mat_free)(&Pm);
    }
    if (C) mkl_sparse_destroy(C);
    /* one-call sypr on the same kind of input */
    {
        dn_t sa, op_p, op_pt, t1, ref;
        F(mat_create)(&A, &pa, va, 0);
        F(mat_create)(&Pm, &pp, vp, 0);
        sa = dn_from_triangle(&A.dense, 1, herm);
        op_p = dn_op(&Pm.dense, op);
        op_pt = dn_op(&op_p, herm ? SPARSE_OPERATION_CONJUGATE_TRANSPOSE : SPARSE_OPERATION_TRANSPOSE);
        t1 = dn_mul(&op_p, &sa);
        ref = dn_mul(&t1, &op_pt);
        dn_keep_upper(&ref);
        C = NULL;
        s = mkl_sparse_sypr(op, Pm.h, A.h, ds, &C, SPARSE_STAGE_FULL_MULT);
        out("sypr_full", "status", "FULL_MULT=%s", st(s));
        if (s == SPARSE_STATUS_SUCCESS) {
            F(show)("sypr_full", C, &ref, SH_VALUES);
            mkl_sparse_destroy(C);
        }
        dn_free(&sa);
        dn_free(&op_p);
        dn_free(&op_pt);
        dn_free(&t1);
        dn_free(&ref);
        F(mat_free)(&A);
        F(mat_free)(&Pm);
    }
    free(va);
    free(vp);
    pat_free(&pa);
    pat_free(&pp);
}

/* Prints y[0..n) as a values line and compares it with ref. */
static void F(show_vec)(const char *check, const T *y, const cd *ref, ll n) {
    int ok = 1;
    double scale = 1.0;
    printf("%s.%s values", g_prec, check);
    for (ll i = 0; i < n; i++) {
        cd x = GETV(y[i]);
        if (IS_CPLX) printf(" %.17g %.17g", x.re, x.im);
        else printf(" %.17g", x.re);
        scale = fmax(scale, fmax(fabs(ref[i].re), fabs(ref[i].im)));
    }
    putchar('\n');
    for (ll i = 0; i < n; i++) {
        cd x = GETV(y[i]);
        if (!close_to(x.re, ref[i].re, scale) || !close_to(x.im, ref[i].im, scale)) ok = 0;
    }
    out(check, "ref", "%s", ok ? "ok" : "FAIL value differs");
}

/* MatMult/MatMultAdd/MatMultTranspose(Add)_SeqAIJMKL_SpMV2: y = op(A) x (+ y) on a handle made
 * by PETSc's create_mkl_handle, descriptor {GENERAL, LOWER, NON_UNIT} as PETSc passes it. */
static void F(test_petsc_mv)(void) {
    const ll m = 7, k = 9;
    pat_t pa = pat_random(m, k, 0.35, PAT_EMPTY_ROWS, 71);
    cd *va = gen_vals(pa.nnz, VKIND, IS_CPLX, 72), *vx = gen_vals(k > m ? k : m, VK_DYADIC, IS_CPLX, 73);
    cd *vy = gen_vals(k > m ? k : m, VK_DYADIC, IS_CPLX, 74);
    struct matrix_descr d = F(descr)(SPARSE_MATRIX_TYPE_GENERAL, SPARSE_FILL_MODE_LOWER, SPARSE_DIAG_NON_UNIT);
    F(mat_t) A;
    int nops = IS_CPLX ? 3 : 2;
    F(petsc_handle)("petsc_mv.A", &A, &pa, va);
    for (int o = 0; o < nops; o++) {
        sparse_operation_t op = o == 0 ? SPARSE_OPERATION_NON_TRANSPOSE
                                       : o == 1 ? SPARSE_OPERATION_TRANSPOSE : SPARSE_OPERATION_CONJUGATE_TRANSPOSE;
        ll nin = o == 0 ? k : m, nout = o == 0 ? m : k;
        dn_t oa = dn_op(&A.dense, op);
        for (int add = 0; add < 2; add++) {
            T *x = (T *)xcalloc((size_t)nin, sizeof(T)), *y = (T *)xcalloc((size_t)nout, sizeof(T)), one, zero;
            cd *ref = (cd *)xcalloc((size_t)nout, sizeof(cd));
            char ck[64];
            sparse_status_t s;
            SETV(one, cmk(1, 0));
            SETV(zero, cmk(0, 0));
            for (ll i = 0; i < nin; i++) SETV(x[i], vx[i]);
            for (ll i = 0; i < nout; i++) {
                SETV(y[i], vy[i]);
                ref[i] = add ? vy[i] : cmk(0, 0);
                for (ll j = 0; j < nin; j++) ref[i] = cadd(ref[i], cmul(oa.v[i * nin + j], vx[j]));
            }
            s = X(mv)(op, one, A.h, d, x, add ? one : zero, y);
            snprintf(ck, sizeof ck, "petsc_mv.%s%s", opname(op), add ? ".add" : "");
            out(ck, "status", "mv=%s", st(s));
            if (s == SPARSE_STATUS_SUCCESS) F(show_vec)(ck, y, ref, nout);
            free(x);
            free(y);
            free(ref);
        }
        dn_free(&oa);
    }
    F(mat_free)(&A);
    free(va);
    free(vx);
    free(vy);
    pat_free(&pa);
}

/* ------------------------------------------------------------------ KokkosKernels' sequence */

/* spgemm_symbolic_mkl / spgemm_numeric_mkl: symbolic handles with NULL values,
 * SPARSE_STAGE_NNZ_COUNT, export of the row pointer (read as rows+1 entries); numeric with new
 * handles over values: FINALIZE_MULT_NO_VAL, FINALIZE_MULT, mkl_sparse_order, export. */
static void F(test_kk)(const char *tag, ll m, ll k, ll n, int base, uint64_t seed) {
    char ck[64];
    pat_t pa = pat_random(m, k, 0.3, PAT_EMPTY_ROWS, seed), pb = pat_random(k, n, 0.3, PAT_EMPTY_ROWS, seed + 1);
    cd *va = gen_vals(pa.nnz, VKIND, IS_CPLX, seed + 2), *vb = gen_vals(pb.nnz, VKIND, IS_CPLX, seed + 3);
    F(mat_t) A, B;
    sparse_matrix_t C = NULL;
    struct matrix_descr g = F(general)();
    sparse_status_t s1, s2, s;
    dn_t ref;
    snprintf(ck, sizeof ck, "kk.%s.symbolic", tag);
    s1 = F(mat_create)(&A, &pa, NULL, base);
    s2 = F(mat_create)(&B, &pb, NULL, base);
    out(ck, "status", "create_A_no_values=%s create_B_no_values=%s", st(s1), st(s2));
    ref = dn_mul(&A.dense, &B.dense);
    s = mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, g, A.h, SPARSE_OPERATION_NON_TRANSPOSE, g, B.h,
                        SPARSE_STAGE_NNZ_COUNT, &C);
    out(ck, "status", "NNZ_COUNT=%s", st(s));
    if (s == SPARSE_STATUS_SUCCESS) F(show)(ck, C, &ref, SH_ROWPTR | SH_NULLS);
    else C = NULL;
    dn_free(&ref);
    F(mat_free)(&A);
    F(mat_free)(&B);
    snprintf(ck, sizeof ck, "kk.%s.numeric", tag);
    F(mat_create)(&A, &pa, va, base);
    F(mat_create)(&B, &pb, vb, base);
    ref = dn_mul(&A.dense, &B.dense);
    if (C) {
        sparse_status_t s3, s4, s5;
        s3 = mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, g, A.h, SPARSE_OPERATION_NON_TRANSPOSE, g, B.h,
                             SPARSE_STAGE_FINALIZE_MULT_NO_VAL, &C);
        s4 = mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, g, A.h, SPARSE_OPERATION_NON_TRANSPOSE, g, B.h,
                             SPARSE_STAGE_FINALIZE_MULT, &C);
        s5 = mkl_sparse_order(C);
        out(ck, "status", "FINALIZE_MULT_NO_VAL=%s FINALIZE_MULT=%s order=%s", st(s3), st(s4), st(s5));
        if (s3 == SPARSE_STATUS_SUCCESS && s4 == SPARSE_STATUS_SUCCESS) F(show)(ck, C, &ref, SH_VALUES | SH_SORTED);
        /* reuse as the anchors time it: the caller changes A's values in place (the handle
         * keeps the caller's arrays) and calls FINALIZE_MULT again on the same C */
        if (s4 == SPARSE_STATUS_SUCCESS) {
            dn_t a2, r2;
            for (ll q = 0; q < pa.nnz; q++) {
                va[q] = cmk(2 * va[q].re, 2 * va[q].im);
                SETV(A.v[q], va[q]);
            }
            a2 = dn_from(&pa, va);
            r2 = dn_mul(&a2, &B.dense);
            snprintf(ck, sizeof ck, "kk.%s.reuse", tag);
            s = mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, g, A.h, SPARSE_OPERATION_NON_TRANSPOSE, g, B.h,
                                SPARSE_STAGE_FINALIZE_MULT, &C);
            out(ck, "status", "FINALIZE_MULT_after_values_changed_in_place=%s", st(s));
            if (s == SPARSE_STATUS_SUCCESS) F(show)(ck, C, &r2, SH_VALUES);
            dn_free(&a2);
            dn_free(&r2);
        }
        mkl_sparse_destroy(C);
    }
    dn_free(&ref);
    F(mat_free)(&A);
    F(mat_free)(&B);
    free(va);
    free(vb);
    pat_free(&pa);
    pat_free(&pb);
}

/* ------------------------------------------------------------------ plain calls */

/* mkl_sparse_spmm(op, A, B): print the result as returned (canonically), then after
 * mkl_sparse_order, which must leave the same entries, now sorted. */
static void F(test_spmm)(sparse_operation_t op, int base) {
    char ck[64];
    const ll m = 8, k = 6, n = 7;
    pat_t pa = F(op_pattern)(op, m, k, 0.35, PAT_EMPTY_ROWS, 81), pb = pat_random(k, n, 0.35, PAT_EMPTY_ROWS, 82);
    cd *va = gen_vals(pa.nnz, VKIND, IS_CPLX, 83), *vb = gen_vals(pb.nnz, VKIND, IS_CPLX, 84);
    F(mat_t) A, B;
    sparse_matrix_t C = NULL;
    dn_t oa, ref;
    sparse_status_t s;
    F(mat_create)(&A, &pa, va, base);
    F(mat_create)(&B, &pb, vb, base);
    oa = dn_op(&A.dense, op);
    ref = dn_mul(&oa, &B.dense);
    snprintf(ck, sizeof ck, "spmm.%s%s", opname(op), base ? ".base1" : "");
    s = mkl_sparse_spmm(op, A.h, B.h, &C);
    out(ck, "status", "spmm=%s", st(s));
    if (s == SPARSE_STATUS_SUCCESS) {
        F(show)(ck, C, &ref, SH_VALUES);
        snprintf(ck, sizeof ck, "spmm.%s%s.ordered", opname(op), base ? ".base1" : "");
        out(ck, "status", "order=%s", st(mkl_sparse_order(C)));
        F(show)(ck, C, &ref, SH_VALUES | SH_SORTED);
        mkl_sparse_destroy(C);
    }
    dn_free(&oa);
    dn_free(&ref);
    F(mat_free)(&A);
    F(mat_free)(&B);
    free(va);
    free(vb);
    pat_free(&pa);
    pat_free(&pb);
}

/* mkl_sparse_sp2m with SPARSE_STAGE_FULL_MULT for an operation pair; PAT_UNSORTED gives input
 * rows with descending columns. */
static void F(test_sp2m_full)(sparse_operation_t opA, sparse_operation_t opB, int base, unsigned pflags,
                              const char *tag) {
    char ck[64];
    const ll m = 9, k = 7, n = 8;
    pat_t pa = F(op_pattern)(opA, m, k, 0.3, PAT_EMPTY_ROWS | pflags, 91);
    pat_t pb = opB == SPARSE_OPERATION_NON_TRANSPOSE ? pat_random(k, n, 0.3, pflags, 92)
                                                     : pat_random(n, k, 0.3, pflags, 92);
    cd *va = gen_vals(pa.nnz, VKIND, IS_CPLX, 93), *vb = gen_vals(pb.nnz, VKIND, IS_CPLX, 94);
    F(mat_t) A, B;
    sparse_matrix_t C = NULL;
    struct matrix_descr g = F(general)();
    dn_t oa, ob, ref;
    sparse_status_t s;
    F(mat_create)(&A, &pa, va, base);
    F(mat_create)(&B, &pb, vb, base);
    oa = dn_op(&A.dense, opA);
    ob = dn_op(&B.dense, opB);
    ref = dn_mul(&oa, &ob);
    snprintf(ck, sizeof ck, "sp2m_full.%s%s%s", opname(opA), opname(opB), tag);
    s = mkl_sparse_sp2m(opA, g, A.h, opB, g, B.h, SPARSE_STAGE_FULL_MULT, &C);
    out(ck, "status", "FULL_MULT=%s order=%s", st(s), s == SPARSE_STATUS_SUCCESS ? st(mkl_sparse_order(C)) : "-");
    if (s == SPARSE_STATUS_SUCCESS) {
        F(show)(ck, C, &ref, SH_VALUES | SH_SORTED);
        mkl_sparse_destroy(C);
    }
    dn_free(&oa);
    dn_free(&ob);
    dn_free(&ref);
    F(mat_free)(&A);
    F(mat_free)(&B);
    free(va);
    free(vb);
    pat_free(&pa);
    pat_free(&pb);
}

/* Whether padding entries (sentinels) of a dense array with leading dimension ld survived. */
static int F(pad_intact)(const T *a, ll outer, ll used, ll ld, const cd *sent) {
    for (ll i = 0; i < outer; i++)
        for (ll j = used; j < ld; j++) {
            cd x = GETV(a[i * ld + j]);
            if (x.re != sent->re || x.im != sent->im) return 0;
        }
    return 1;
}

/* Dense array of r x c logical entries in a layout with leading dimension ld, from d (row-major). */
static T *F(dense_alloc)(const cd *d, ll r, ll c, sparse_layout_t lay, ll ld, const cd *sent) {
    ll outer = lay == SPARSE_LAYOUT_ROW_MAJOR ? r : c;
    T *a = (T *)xcalloc((size_t)(outer * ld), sizeof(T));
    for (ll i = 0; i < outer * ld; i++) SETV(a[i], *sent);
    for (ll i = 0; i < r; i++)
        for (ll j = 0; j < c; j++) SETV(a[lay == SPARSE_LAYOUT_ROW_MAJOR ? i * ld + j : j * ld + i], d[i * c + j]);
    return a;
}

/* Logical r x c entries of a (row-major order) into a values line, compared with ref. */
static void F(show_dense)(const char *check, const T *a, ll r, ll c, sparse_layout_t lay, ll ld, const cd *ref,
                          const cd *sent) {
    T *flat = (T *)xcalloc((size_t)(r * c), sizeof(T));
    ll outer = lay == SPARSE_LAYOUT_ROW_MAJOR ? r : c, used = lay == SPARSE_LAYOUT_ROW_MAJOR ? c : r;
    for (ll i = 0; i < r; i++)
        for (ll j = 0; j < c; j++) flat[i * c + j] = a[lay == SPARSE_LAYOUT_ROW_MAJOR ? i * ld + j : j * ld + i];
    F(show_vec)(check, flat, ref, r * c);
    out(check, "padding", "untouched=%d", F(pad_intact)(a, outer, used, ld, sent));
    free(flat);
}

/* mkl_sparse_?_mm: Y = alpha op(A) X + beta Y, row- and column-major, leading dimensions
 * larger than needed (the padding must stay untouched); optionally after set_mm_hint+optimize. */
static void F(test_mm)(sparse_operation_t op, sparse_layout_t lay, int hinted) {
    char ck[64];
    const ll m = 7, k = 8, cols = 3;
    pat_t pa = F(op_pattern)(op, m, k, 0.35, PAT_EMPTY_ROWS, 101);
    cd *va = gen_vals(pa.nnz, VKIND, IS_CPLX, 102), *vx = gen_vals(k * cols, VK_DYADIC, IS_CPLX, 103);
    cd *vy = gen_vals(m * cols, VK_DYADIC, IS_CPLX, 104), *ref = (cd *)xcalloc((size_t)(m * cols), sizeof(cd));
    cd alpha = cmk(1.5, IS_CPLX ? 0.5 : 0), beta = cmk(-0.5, IS_CPLX ? 0.25 : 0), sent = cmk(-777.25, IS_CPLX ? 3.5 : 0);
    const ll ldx = (lay == SPARSE_LAYOUT_ROW_MAJOR ? cols : k) + 2, ldy = (lay == SPARSE_LAYOUT_ROW_MAJOR ? cols : m) + 3;
    F(mat_t) A;
    struct matrix_descr g = F(general)();
    T *x, *y, ta, tb;
    dn_t oa;
    sparse_status_t s;
    F(mat_create)(&A, &pa, va, 0);
    oa = dn_op(&A.dense, op);
    for (ll i = 0; i < m; i++)
        for (ll j = 0; j < cols; j++) {
            cd acc = cmk(0, 0);
            for (ll t = 0; t < k; t++) acc = cadd(acc, cmul(oa.v[i * k + t], vx[t * cols + j]));
            ref[i * cols + j] = cadd(cmul(alpha, acc), cmul(beta, vy[i * cols + j]));
        }
    x = F(dense_alloc)(vx, k, cols, lay, ldx, &sent);
    y = F(dense_alloc)(vy, m, cols, lay, ldy, &sent);
    SETV(ta, alpha);
    SETV(tb, beta);
    snprintf(ck, sizeof ck, "mm.%s.%s%s", opname(op), lay == SPARSE_LAYOUT_ROW_MAJOR ? "row" : "col",
             hinted ? ".hinted" : "");
    if (hinted)
        out(ck, "status", "mm_hint=%s optimize=%s", st(mkl_sparse_set_mm_hint(A.h, op, g, lay, (MKL_INT)cols, 10)),
            st(mkl_sparse_optimize(A.h)));
    s = X(mm)(op, ta, A.h, g, lay, x, (MKL_INT)cols, (MKL_INT)ldx, tb, y, (MKL_INT)ldy);
    out(ck, "status", "mm=%s", st(s));
    if (s == SPARSE_STATUS_SUCCESS) F(show_dense)(ck, y, m, cols, lay, ldy, ref, &sent);
    free(x);
    free(y);
    dn_free(&oa);
    F(mat_free)(&A);
    free(va);
    free(vx);
    free(vy);
    free(ref);
    pat_free(&pa);
}

/* mkl_sparse_?_spmmd: dense C = op(A) B, row- and column-major, ldc larger than needed. */
static void F(test_spmmd)(sparse_operation_t op, sparse_layout_t lay) {
    char ck[64];
    const ll m = 6, k = 7, n = 5;
    pat_t pa = F(op_pattern)(op, m, k, 0.35, PAT_EMPTY_ROWS, 111), pb = pat_random(k, n, 0.35, PAT_EMPTY_ROWS, 112);
    cd *va = gen_vals(pa.nnz, VKIND, IS_CPLX, 113), *vb = gen_vals(pb.nnz, VKIND, IS_CPLX, 114);
    cd sent = cmk(-555.5, IS_CPLX ? 1.25 : 0);
    const ll ldc = (lay == SPARSE_LAYOUT_ROW_MAJOR ? n : m) + 2;
    F(mat_t) A, B;
    dn_t oa, ref;
    T *c;
    sparse_status_t s;
    F(mat_create)(&A, &pa, va, 0);
    F(mat_create)(&B, &pb, vb, 0);
    oa = dn_op(&A.dense, op);
    ref = dn_mul(&oa, &B.dense);
    c = F(dense_alloc)(ref.v, m, n, lay, ldc, &sent);
    for (ll i = 0; i < m; i++) /* logical part starts as garbage: spmmd overwrites it */
        for (ll j = 0; j < n; j++) SETV(c[lay == SPARSE_LAYOUT_ROW_MAJOR ? i * ldc + j : j * ldc + i], cmk(99, 0));
    snprintf(ck, sizeof ck, "spmmd.%s.%s", opname(op), lay == SPARSE_LAYOUT_ROW_MAJOR ? "row" : "col");
    s = X(spmmd)(op, A.h, B.h, lay, c, (MKL_INT)ldc);
    out(ck, "status", "spmmd=%s", st(s));
    if (s == SPARSE_STATUS_SUCCESS) F(show_dense)(ck, c, m, n, lay, ldc, ref.v, &sent);
    free(c);
    dn_free(&oa);
    dn_free(&ref);
    F(mat_free)(&A);
    F(mat_free)(&B);
    free(va);
    free(vb);
    pat_free(&pa);
    pat_free(&pb);
}

/* create_csc / create_coo + convert_csr, convert_csr of a CSR handle, mkl_sparse_copy,
 * export of a caller's handle, mkl_sparse_order on a caller's handle. */
static void F(test_formats)(int base) {
    char ck[64];
    const char *bt = base ? ".base1" : "";
    const ll m = 7, n = 6;
    pat_t pa = pat_random(m, n, 0.4, PAT_EMPTY_ROWS, 121);
    cd *va = gen_vals(pa.nnz, VKIND, IS_CPLX, 122);
    F(mat_t) A;
    sparse_matrix_t H = NULL;
    sparse_status_t s;
    int nops = IS_CPLX ? 3 : 2;
    F(mat_create)(&A, &pa, va, base);
    /* CSC arrays of A are the CSR arrays of A^T */
    {
        MKL_INT *cp = (MKL_INT *)xcalloc((size_t)n + 1, sizeof(MKL_INT)), *ri = (MKL_INT *)xcalloc((size_t)pa.nnz, sizeof(MKL_INT));
        T *cv = (T *)xcalloc((size_t)pa.nnz, sizeof(T));
        ll t = 0;
        for (ll j = 0; j < n; j++) {
            cp[j] = (MKL_INT)(t + base);
            for (ll i = 0; i < m; i++)
                if (A.dense.s[i * n + j]) {
                    ri[t] = (MKL_INT)(i + base);
                    SETV(cv[t], A.dense.v[i * n + j]);
                    t++;
                }
        }
        cp[n] = (MKL_INT)(t + base);
        snprintf(ck, sizeof ck, "csc%s", bt);
        s = X(create_csc)(&H, base ? SPARSE_INDEX_BASE_ONE : SPARSE_INDEX_BASE_ZERO, (MKL_INT)m, (MKL_INT)n, cp, cp + 1, ri, cv);
        out(ck, "status", "create_csc=%s", st(s));
        if (s == SPARSE_STATUS_SUCCESS) {
            for (int o = 0; o < nops; o++) {
                sparse_operation_t op = o == 0 ? SPARSE_OPERATION_NON_TRANSPOSE
                                               : o == 1 ? SPARSE_OPERATION_TRANSPOSE : SPARSE_OPERATION_CONJUGATE_TRANSPOSE;
                sparse_matrix_t R = NULL;
                dn_t ref = dn_op(&A.dense, op);
                snprintf(ck, sizeof ck, "csc%s.convert_csr.%s", bt, opname(op));
                s = mkl_sparse_convert_csr(H, op, &R);
                out(ck, "status", "convert_csr=%s order=%s", st(s), s == SPARSE_STATUS_SUCCESS ? st(mkl_sparse_order(R)) : "-");
                if (s == SPARSE_STATUS_SUCCESS) {
                    F(show)(ck, R, &ref, SH_VALUES | SH_SORTED);
                    mkl_sparse_destroy(R);
                }
                dn_free(&ref);
            }
            mkl_sparse_destroy(H);
        }
        free(cp);
        free(ri);
        free(cv);
    }
    /* COO with the triplets in a shuffled order */
    {
        MKL_INT *ri = (MKL_INT *)xcalloc((size_t)pa.nnz, sizeof(MKL_INT)), *cj = (MKL_INT *)xcalloc((size_t)pa.nnz, sizeof(MKL_INT));
        T *cv = (T *)xcalloc((size_t)pa.nnz, sizeof(T));
        ll *perm = (ll *)xcalloc((size_t)pa.nnz, sizeof(ll));
        sparse_matrix_t R = NULL;
        for (ll t = 0; t < pa.nnz; t++) perm[t] = t;
        rng_seed(123);
        for (ll t = pa.nnz - 1; t > 0; t--) {
            ll r = rng_int(t + 1), x = perm[t];
            perm[t] = perm[r];
            perm[r] = x;
        }
        for (ll i = 0; i < m; i++)
            for (ll q = pa.rp[i]; q < pa.rp[i + 1]; q++) {
                ll t = perm[q];
                ri[t] = (MKL_INT)(i + base);
                cj[t] = (MKL_INT)(pa.ci[q] + base);
                SETV(cv[t], va[q]);
            }
        snprintf(ck, sizeof ck, "coo%s", bt);
        s = X(create_coo)(&H, base ? SPARSE_INDEX_BASE_ONE : SPARSE_INDEX_BASE_ZERO, (MKL_INT)m, (MKL_INT)n,
                          (MKL_INT)pa.nnz, ri, cj, cv);
        out(ck, "status", "create_coo=%s", st(s));
        if (s == SPARSE_STATUS_SUCCESS) {
            snprintf(ck, sizeof ck, "coo%s.convert_csr.N", bt);
            s = mkl_sparse_convert_csr(H, SPARSE_OPERATION_NON_TRANSPOSE, &R);
            out(ck, "status", "convert_csr=%s order=%s", st(s), s == SPARSE_STATUS_SUCCESS ? st(mkl_sparse_order(R)) : "-");
            if (s == SPARSE_STATUS_SUCCESS) {
                F(show)(ck, R, &A.dense, SH_VALUES | SH_SORTED);
                mkl_sparse_destroy(R);
            }
            mkl_sparse_destroy(H);
        }
        free(ri);
        free(cj);
        free(cv);
        free(perm);
    }
    /* convert_csr of a CSR handle: N is a copy, T/C the (conjugate) transpose */
    for (int o = 0; o < nops; o++) {
        sparse_operation_t op = o == 0 ? SPARSE_OPERATION_NON_TRANSPOSE
                                       : o == 1 ? SPARSE_OPERATION_TRANSPOSE : SPARSE_OPERATION_CONJUGATE_TRANSPOSE;
        sparse_matrix_t R = NULL;
        dn_t ref = dn_op(&A.dense, op);
        snprintf(ck, sizeof ck, "csr%s.convert_csr.%s", bt, opname(op));
        s = mkl_sparse_convert_csr(A.h, op, &R);
        out(ck, "status", "convert_csr=%s order=%s", st(s), s == SPARSE_STATUS_SUCCESS ? st(mkl_sparse_order(R)) : "-");
        if (s == SPARSE_STATUS_SUCCESS) {
            F(show)(ck, R, &ref, SH_VALUES | SH_SORTED);
            mkl_sparse_destroy(R);
        }
        dn_free(&ref);
    }
    /* export of a caller's handle gives the caller's own arrays; a copy owns new ones */
    {
        sparse_index_base_t b;
        MKL_INT r, c, *rs = NULL, *re = NULL, *ci = NULL;
        T *v = NULL;
        sparse_matrix_t R = NULL;
        snprintf(ck, sizeof ck, "export_caller%s", bt);
        s = X(export_csr)(A.h, &b, &r, &c, &rs, &re, &ci, &v);
        out(ck, "status", "export=%s", st(s));
        if (s == SPARSE_STATUS_SUCCESS)
            out(ck, "pointers", "rows_start=%d rows_end=%d col_indx=%d values=%d", rs == A.rp, re == A.rp + 1,
                ci == A.ci, v == A.v);
        snprintf(ck, sizeof ck, "copy%s", bt);
        s = mkl_sparse_copy(A.h, F(general)(), &R);
        out(ck, "status", "copy=%s", st(s));
        if (s == SPARSE_STATUS_SUCCESS) {
            rs = NULL;
            ci = NULL;
            v = NULL;
            s = X(export_csr)(R, &b, &r, &c, &rs, &re, &ci, &v);
            if (s == SPARSE_STATUS_SUCCESS)
                out(ck, "pointers", "shares_rows_start=%d shares_col_indx=%d shares_values=%d", rs == A.rp, ci == A.ci,
                    v == A.v);
            /* the copy keeps its values when the caller's array changes */
            for (ll q = 0; q < pa.nnz; q++) SETV(A.v[q], cmk(1000, 0));
            F(show)(ck, R, NULL, SH_VALUES);
            for (ll q = 0; q < pa.nnz; q++) SETV(A.v[q], va[q]);
            mkl_sparse_destroy(R);
        }
    }
    F(mat_free)(&A);
    free(va);
    pat_free(&pa);
    /* mkl_sparse_order on a caller's handle sorts the caller's arrays in place */
    {
        pat_t pu = pat_random(6, 8, 0.5, PAT_UNSORTED, 131);
        cd *vu = gen_vals(pu.nnz, VKIND, IS_CPLX, 132);
        F(mat_t) U;
        snprintf(ck, sizeof ck, "order_caller%s", bt);
        F(mat_create)(&U, &pu, vu, base);
        out(ck, "status", "order=%s", st(mkl_sparse_order(U.h)));
        {
            ll *ci = (ll *)xcalloc((size_t)pu.nnz, sizeof(ll));
            for (ll q = 0; q < pu.nnz; q++) ci[q] = (ll)U.ci[q];
            print_ll_list(ck, "caller_col_indx", ci, pu.nnz);
            free(ci);
        }
        F(show)(ck, U.h, &U.dense, SH_VALUES | SH_SORTED);
        F(mat_free)(&U);
        free(vu);
        pat_free(&pu);
    }
}

/* Entries that cancel exactly: the structural entry stays, with value 0. */
static void F(test_cancel)(void) {
    /* A = [1 1; 1 0], B = [1 1; -1 0]: C(0,0) = 1 - 1 = 0 (structural), C(0,1) = 1 */
    pat_t pa, pb;
    ll arp[] = {0, 2, 3}, aci[] = {0, 1, 0}, brp[] = {0, 2, 3}, bci[] = {0, 1, 0};
    cd va[3], vb[3];
    F(mat_t) A, B;
    sparse_matrix_t C = NULL;
    sparse_status_t s;
    dn_t ref;
    va[0] = va[1] = va[2] = cmk(1, 0);
    vb[0] = cmk(1, 0);
    vb[1] = cmk(1, 0);
    vb[2] = cmk(-1, 0);
    pa.rows = pa.cols = pb.rows = pb.cols = 2;
    pa.nnz = pb.nnz = 3;
    pa.rp = arp;
    pa.ci = aci;
    pb.rp = brp;
    pb.ci = bci;
    F(mat_create)(&A, &pa, va, 0);
    F(mat_create)(&B, &pb, vb, 0);
    ref = dn_mul(&A.dense, &B.dense);
    s = mkl_sparse_spmm(SPARSE_OPERATION_NON_TRANSPOSE, A.h, B.h, &C);
    out("cancel.spmm", "status", "spmm=%s order=%s", st(s), s == SPARSE_STATUS_SUCCESS ? st(mkl_sparse_order(C)) : "-");
    if (s == SPARSE_STATUS_SUCCESS) {
        F(show)("cancel.spmm", C, &ref, SH_VALUES | SH_SORTED);
        mkl_sparse_destroy(C);
    }
    C = NULL;
    s = mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, F(general)(), A.h, SPARSE_OPERATION_NON_TRANSPOSE,
                        F(general)(), B.h, SPARSE_STAGE_FULL_MULT, &C);
    out("cancel.sp2m", "status", "FULL_MULT=%s order=%s", st(s), s == SPARSE_STATUS_SUCCESS ? st(mkl_sparse_order(C)) : "-");
    if (s == SPARSE_STATUS_SUCCESS) {
        F(show)("cancel.sp2m", C, &ref, SH_VALUES | SH_SORTED);
        mkl_sparse_destroy(C);
    }
    dn_free(&ref);
    /* frees the handles and this program's MKL_INT/value copies; the pattern arrays are local */
    F(mat_free)(&A);
    F(mat_free)(&B);
}

/* A with no entries at all (every row empty) times B, one call and staged. */
static void F(test_empty)(void) {
    pat_t pa = pat_random(5, 6, 0.0, 0, 141), pb = pat_random(6, 4, 0.5, 0, 142);
    cd *vb = gen_vals(pb.nnz, VKIND, IS_CPLX, 143), va0 = cmk(0, 0);
    F(mat_t) A, B;
    sparse_matrix_t C = NULL;
    sparse_status_t s, s2;
    dn_t ref;
    out("empty", "status", "create_A_nnz0=%s", st(F(mat_create)(&A, &pa, &va0, 0)));
    F(mat_create)(&B, &pb, vb, 0);
    ref = dn_mul(&A.dense, &B.dense);
    s = mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, F(general)(), A.h, SPARSE_OPERATION_NON_TRANSPOSE,
                        F(general)(), B.h, SPARSE_STAGE_FULL_MULT, &C);
    out("empty.sp2m_full", "status", "FULL_MULT=%s", st(s));
    if (s == SPARSE_STATUS_SUCCESS) {
        F(show)("empty.sp2m_full", C, &ref, SH_ROWPTR);
        mkl_sparse_destroy(C);
    }
    C = NULL;
    s = mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, F(general)(), A.h, SPARSE_OPERATION_NON_TRANSPOSE,
                        F(general)(), B.h, SPARSE_STAGE_NNZ_COUNT, &C);
    s2 = s == SPARSE_STATUS_SUCCESS
             ? mkl_sparse_sp2m(SPARSE_OPERATION_NON_TRANSPOSE, F(general)(), A.h, SPARSE_OPERATION_NON_TRANSPOSE,
                               F(general)(), B.h, SPARSE_STAGE_FINALIZE_MULT, &C)
             : s;
    out("empty.sp2m_staged", "status", "NNZ_COUNT=%s FINALIZE_MULT=%s", st(s), st(s2));
    if (s == SPARSE_STATUS_SUCCESS) {
        if (s2 == SPARSE_STATUS_SUCCESS) F(show)("empty.sp2m_staged", C, &ref, SH_ROWPTR);
        mkl_sparse_destroy(C);
    }
    dn_free(&ref);
    F(mat_free)(&A);
    F(mat_free)(&B);
    free(vb);
    pat_free(&pa);
    pat_free(&pb);
}

/* ------------------------------------------------------------------ error cases */

/* Only cases for which real MKL returns a definite status are here; cases where MKL returns
 * SUCCESS without checking (leading dimensions too small for mm/spmmd, sypr shapes, export of
 * another precision, products of mixed precision or mixed index bases, FINALIZE_MULT on a
 * handle that no symbolic stage made) are described in mkl/tests/README.md instead. */

static char F(sentinel_obj);

/* Against libspgemm_mkl (which defines SPGEMM_MKL_COMPAT) every failure must also leave a text
 * in spgemm_mkl_last_error(); checked on stderr and in the exit status, not in the output. */
#ifdef SPGEMM_MKL_COMPAT
#define ERRTEXT(name, s)                                                                       \
    do {                                                                                       \
        const char *t_ = spgemm_mkl_last_error();                                              \
        if ((s) != SPARSE_STATUS_SUCCESS && (!t_ || !*t_)) {                                   \
            fprintf(stderr, "layer: no spgemm_mkl_last_error() text after err.%s\n", name);   \
            g_layer_fail = 1;                                                                  \
        }                                                                                      \
        diag("err.%s last_error: %s", name, t_ ? t_ : "(null)");                               \
    } while (0)
#else
#define ERRTEXT(name, s) ((void)0)
#endif

/* ERRC: a call with an output handle, which starts as a sentinel and must still hold it after
 * the failure (MKL leaves it alone in these cases). ERRS: the same call shape where MKL, after
 * a shape or request error, still stores a new empty (0 x 0) handle in the output, which the
 * caller must destroy; only the status is printed, so an implementation that leaves the output
 * alone passes too, and any handle stored is destroyed here. ERRP: a call without an output
 * handle. The status is always taken before the handle is looked at. */
#define ERRC(name, call)                                                                       \
    do {                                                                                       \
        sparse_status_t s_;                                                                    \
        C = sent;                                                                              \
        s_ = (call);                                                                           \
        out("err." name, "status", "%s output_untouched=%d", st(s_), C == sent);               \
        ERRTEXT(name, s_);                                                                     \
        if (C != sent && C) mkl_sparse_destroy(C);                                             \
    } while (0)
#define ERRS(name, call)                                                                       \
    do {                                                                                       \
        sparse_status_t s_;                                                                    \
        C = sent;                                                                              \
        s_ = (call);                                                                           \
        out("err." name, "status", "%s", st(s_));                                              \
        ERRTEXT(name, s_);                                                                     \
        diag("err.%s output %s", name, C == sent ? "untouched" : C == NULL ? "NULL" : "a handle"); \
        if (C != sent && C) mkl_sparse_destroy(C);                                             \
    } while (0)
#define ERRP(name, call)                                                                       \
    do {                                                                                       \
        sparse_status_t s_ = (call);                                                           \
        out("err." name, "status", "%s", st(s_));                                              \
        ERRTEXT(name, s_);                                                                     \
    } while (0)

static void F(test_errors)(void) {
    sparse_matrix_t const sent = (sparse_matrix_t)(void *)&F(sentinel_obj);
    pat_t pa = pat_random(4, 5, 0.5, 0, 151), pb = pat_random(5, 3, 0.5, 0, 152), pq = pat_random(4, 4, 0.5, 0, 153);
    cd *va = gen_vals(pa.nnz, VK_DYADIC, IS_CPLX, 154), *vb = gen_vals(pb.nnz, VK_DYADIC, IS_CPLX, 155);
    cd *vq = gen_vals(pq.nnz, VK_DYADIC, IS_CPLX, 156);
    F(mat_t) A, B, Q; /* A 4x5, B 5x3, Q 4x4 */
    struct matrix_descr g = F(general)();
    struct matrix_descr dsym = F(descr)(SPARSE_MATRIX_TYPE_SYMMETRIC, SPARSE_FILL_MODE_UPPER, SPARSE_DIAG_NON_UNIT);
    struct matrix_descr dtri = F(descr)(SPARSE_MATRIX_TYPE_TRIANGULAR, SPARSE_FILL_MODE_UPPER, SPARSE_DIAG_NON_UNIT);
    struct matrix_descr ddia = F(descr)(SPARSE_MATRIX_TYPE_DIAGONAL, SPARSE_FILL_MODE_FULL, SPARSE_DIAG_NON_UNIT);
    const sparse_operation_t N = SPARSE_OPERATION_NON_TRANSPOSE, Tr = SPARSE_OPERATION_TRANSPOSE;
    const sparse_layout_t RM = SPARSE_LAYOUT_ROW_MAJOR;
    sparse_matrix_t C;
    MKL_INT rp0[2] = {0, 1}, ci0[1] = {0};
    T v0[1], one, zero, x[16], y[16];
    sparse_index_base_t eb;
    MKL_INT er, ec, *ers = NULL, *ere = NULL, *eci = NULL;
    T *ev = NULL;
    SETV(v0[0], cmk(1, 0));
    SETV(one, cmk(1, 0));
    SETV(zero, cmk(0, 0));
    for (int i = 0; i < 16; i++) {
        SETV(x[i], cmk(1, 0));
        SETV(y[i], cmk(-3, 0));
    }
    F(mat_create)(&A, &pa, va, 0);
    F(mat_create)(&B, &pb, vb, 0);
    F(mat_create)(&Q, &pq, vq, 0);

    /* NULL handles and NULL arrays: NOT_INITIALIZED */
    ERRC("sp2m_null_A", mkl_sparse_sp2m(N, g, NULL, N, g, B.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRC("sp2m_null_B", mkl_sparse_sp2m(N, g, A.h, N, g, NULL, SPARSE_STAGE_FULL_MULT, &C));
    ERRP("sp2m_null_output", mkl_sparse_sp2m(N, g, A.h, N, g, B.h, SPARSE_STAGE_FULL_MULT, NULL));
    C = NULL; /* a finalize stage needs the C of a symbolic stage */
    ERRP("sp2m_finalize_null_C", mkl_sparse_sp2m(N, g, A.h, N, g, B.h, SPARSE_STAGE_FINALIZE_MULT, &C));
    C = NULL;
    ERRP("sp2m_finalize_no_val_null_C",
         mkl_sparse_sp2m(N, g, A.h, N, g, B.h, SPARSE_STAGE_FINALIZE_MULT_NO_VAL, &C));
    ERRC("spmm_null_A", mkl_sparse_spmm(N, NULL, B.h, &C));
    ERRP("spmm_null_output", mkl_sparse_spmm(N, A.h, B.h, NULL));
    ERRC("sypr_null_A", mkl_sparse_sypr(Tr, NULL, Q.h, dsym, &C, SPARSE_STAGE_FULL_MULT));
    C = NULL;
    ERRP("sypr_finalize_null_C", mkl_sparse_sypr(Tr, Q.h, Q.h, dsym, &C, SPARSE_STAGE_FINALIZE_MULT));
    ERRC("copy_null", mkl_sparse_copy(NULL, g, &C));
    ERRC("convert_csr_null", mkl_sparse_convert_csr(NULL, N, &C));
    ERRP("export_null", X(export_csr)(NULL, &eb, &er, &ec, &ers, &ere, &eci, &ev));
    ERRP("destroy_null", mkl_sparse_destroy(NULL));
    ERRP("order_null", mkl_sparse_order(NULL));
    ERRP("optimize_null", mkl_sparse_optimize(NULL));
    ERRP("set_mv_hint_null", mkl_sparse_set_mv_hint(NULL, N, g, 10));
    ERRP("set_mm_hint_null", mkl_sparse_set_mm_hint(NULL, N, g, RM, 2, 10));
    ERRP("set_memory_hint_null", mkl_sparse_set_memory_hint(NULL, SPARSE_MEMORY_AGGRESSIVE));
    ERRP("mv_null", X(mv)(N, one, NULL, g, x, zero, y));
    ERRP("mv_null_x", X(mv)(N, one, A.h, g, NULL, zero, y));
    ERRP("mm_null", X(mm)(N, one, NULL, g, RM, x, 1, 1, zero, y, 1));
    ERRP("spmmd_null", X(spmmd)(N, NULL, B.h, RM, y, 3));
    ERRP("create_csr_null_output", X(create_csr)(NULL, SPARSE_INDEX_BASE_ZERO, 1, 1, rp0, rp0 + 1, ci0, v0));
    ERRC("create_csr_null_rows_start", X(create_csr)(&C, SPARSE_INDEX_BASE_ZERO, 1, 1, NULL, rp0 + 1, ci0, v0));
    ERRC("create_csr_null_col_indx", X(create_csr)(&C, SPARSE_INDEX_BASE_ZERO, 1, 1, rp0, rp0 + 1, NULL, v0));

    /* shapes and sizes: INVALID_VALUE */
    ERRS("sp2m_shape_NN", mkl_sparse_sp2m(N, g, A.h, N, g, A.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRS("sp2m_shape_TN", mkl_sparse_sp2m(Tr, g, A.h, N, g, B.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRS("sp2m_shape_NT", mkl_sparse_sp2m(N, g, A.h, Tr, g, B.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRS("sp2m_shape_nnz_count", mkl_sparse_sp2m(N, g, A.h, N, g, A.h, SPARSE_STAGE_NNZ_COUNT, &C));
    ERRS("sp2m_shape_full_no_val", mkl_sparse_sp2m(N, g, A.h, N, g, A.h, SPARSE_STAGE_FULL_MULT_NO_VAL, &C));
    ERRS("spmm_shape", mkl_sparse_spmm(N, A.h, A.h, &C));
    ERRS("spmm_shape_T", mkl_sparse_spmm(Tr, A.h, B.h, &C));
    ERRP("spmmd_shape", X(spmmd)(N, A.h, A.h, RM, y, 5));
    ERRP("mm_negative_columns", X(mm)(N, one, A.h, g, RM, x, -1, 1, zero, y, 1));
    ERRC("create_csr_negative_rows", X(create_csr)(&C, SPARSE_INDEX_BASE_ZERO, -1, 1, rp0, rp0 + 1, ci0, v0));
    ERRC("create_csr_zero_rows", X(create_csr)(&C, SPARSE_INDEX_BASE_ZERO, 0, 1, rp0, rp0 + 1, ci0, v0));

    /* enum values out of range: INVALID_VALUE */
    ERRS("sp2m_bad_request", mkl_sparse_sp2m(N, g, A.h, N, g, B.h, (sparse_request_t)99, &C));
    ERRC("sp2m_bad_operation", mkl_sparse_sp2m((sparse_operation_t)99, g, A.h, N, g, B.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRC("spmm_bad_operation", mkl_sparse_spmm((sparse_operation_t)99, A.h, B.h, &C));
    ERRC("convert_csr_bad_operation", mkl_sparse_convert_csr(A.h, (sparse_operation_t)3, &C));
    ERRC("create_csr_bad_base", X(create_csr)(&C, (sparse_index_base_t)7, 1, 1, rp0, rp0 + 1, ci0, v0));
    ERRP("mv_bad_operation", X(mv)((sparse_operation_t)3, one, A.h, g, x, zero, y));
    ERRP("mm_bad_layout", X(mm)(N, one, A.h, g, (sparse_layout_t)7, x, 1, 1, zero, y, 1));
    ERRP("spmmd_bad_layout", X(spmmd)(N, A.h, B.h, (sparse_layout_t)7, y, 3));
    ERRP("set_memory_hint_bad_policy", mkl_sparse_set_memory_hint(A.h, (sparse_memory_usage_t)3));

    /* descriptor types sp2m and sypr do not serve: NOT_SUPPORTED */
    ERRC("sp2m_descr_symmetric", mkl_sparse_sp2m(N, dsym, Q.h, N, g, Q.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRC("sp2m_descr_triangular", mkl_sparse_sp2m(N, dtri, Q.h, N, g, Q.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRC("sp2m_descr_diagonal", mkl_sparse_sp2m(N, ddia, Q.h, N, g, Q.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRC("sp2m_descrB_symmetric", mkl_sparse_sp2m(N, g, Q.h, N, dsym, Q.h, SPARSE_STAGE_FULL_MULT, &C));
    ERRC("sypr_descr_general", mkl_sparse_sypr(Tr, Q.h, Q.h, g, &C, SPARSE_STAGE_FULL_MULT));

    /* a CSC handle cannot be exported as CSR: INVALID_VALUE */
    {
        sparse_matrix_t H = NULL;
        MKL_INT cp[2] = {0, 1}, ri[1] = {0};
        if (X(create_csc)(&H, SPARSE_INDEX_BASE_ZERO, 1, 1, cp, cp + 1, ri, v0) == SPARSE_STATUS_SUCCESS) {
            ERRP("export_csr_of_csc", X(export_csr)(H, &eb, &er, &ec, &ers, &ere, &eci, &ev));
            mkl_sparse_destroy(H);
        }
    }
    F(mat_free)(&A);
    F(mat_free)(&B);
    F(mat_free)(&Q);
    free(va);
    free(vb);
    free(vq);
    pat_free(&pa);
    pat_free(&pb);
    pat_free(&pq);
}

#undef ERRC
#undef ERRS
#undef ERRP
#undef ERRTEXT

/* ------------------------------------------------------------------ driver */

static void F(run_all)(void) {
    const sparse_operation_t N = SPARSE_OPERATION_NON_TRANSPOSE, Tr = SPARSE_OPERATION_TRANSPOSE,
                             Cj = SPARSE_OPERATION_CONJUGATE_TRANSPOSE;
    g_prec = PNAME;
    /* PETSc aijmkl */
    F(test_petsc_mult)(N, N);
    F(test_petsc_mult)(Tr, N);
    F(test_petsc_mult)(N, Tr);
    F(test_petsc_ptap)();
    F(test_petsc_mv)();
    /* KokkosKernels */
    F(test_kk)("rect", 9, 7, 8, 0, 201);
    F(test_kk)("rect.base1", 9, 7, 8, 1, 211);
    F(test_kk)("square", 10, 10, 10, 0, 221);
    /* plain */
    F(test_spmm)(N, 0);
    F(test_spmm)(Tr, 0);
    F(test_spmm)(N, 1);
    if (IS_CPLX) F(test_spmm)(Cj, 0);
    F(test_sp2m_full)(N, N, 0, 0, "");
    F(test_sp2m_full)(Tr, N, 0, 0, "");
    F(test_sp2m_full)(N, Tr, 0, 0, "");
    F(test_sp2m_full)(Tr, Tr, 0, 0, "");
    F(test_sp2m_full)(N, N, 1, 0, ".base1");
    F(test_sp2m_full)(Tr, N, 1, 0, ".base1");
    F(test_sp2m_full)(N, N, 0, PAT_UNSORTED, ".unsorted_input");
    if (IS_CPLX) {
        F(test_sp2m_full)(Cj, N, 0, 0, "");
        F(test_sp2m_full)(N, Cj, 0, 0, "");
        F(test_sp2m_full)(Cj, Cj, 0, 0, "");
    }
    for (int o = 0; o < (IS_CPLX ? 3 : 2); o++) {
        sparse_operation_t op = o == 0 ? N : o == 1 ? Tr : Cj;
        F(test_mm)(op, SPARSE_LAYOUT_ROW_MAJOR, 0);
        F(test_mm)(op, SPARSE_LAYOUT_COLUMN_MAJOR, 0);
        F(test_spmmd)(op, SPARSE_LAYOUT_ROW_MAJOR);
        F(test_spmmd)(op, SPARSE_LAYOUT_COLUMN_MAJOR);
    }
    F(test_mm)(N, SPARSE_LAYOUT_ROW_MAJOR, 1);
    F(test_mm)(N, SPARSE_LAYOUT_COLUMN_MAJOR, 1);
    F(test_formats)(0);
    F(test_formats)(1);
    F(test_cancel)();
    F(test_empty)();
    F(test_errors)();
}

#undef VKIND
#undef F
#undef X
#undef CAT
#undef CAT_

#endif /* MKL_API_TEST_BODY */

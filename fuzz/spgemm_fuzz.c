/*
 * libFuzzer harness over the C ABI of libspgemm (include/spgemm.h), written from the header.
 *
 * One input = one handle and a sequence of calls on it. The bytes choose the handle's options
 * (validation, algorithm, sorted output, 1-3 threads, CPU backend), two matrices A (m x n) and
 * B (n x k) in any offset/index/value type and base (or pattern-only), corruptions of their
 * arrays, and the calls: symbolic, numeric (again: reuse, with new values, into the same or
 * fresh C arrays), numeric_structure, multiply, SpMM with and without an analysis, plan and
 * matrix queries. Every call's expected outcome follows from the header's contracts:
 *  - valid inputs: success, and the result equals a naive reference product (structure as a
 *    set per row, values within a tolerance, NaN-aware);
 *  - invalid inputs with validation on, or errors the header says are always detected (types,
 *    shapes, first/last row offset, NULL): a documented error status, never INTERNAL;
 *  - invalid inputs with validation off: any status, any output, but no crash, no write
 *    outside the output arrays, and the NEXT valid product on the same handle is still right
 *    (a probe product runs after every invalid call to check that).
 * Always: no crash or hang, no leak, nothing written to stderr/stdout by the library (fds 1
 * and 2 are captured around every library call), status codes among the documented ones, a non-empty
 * last-error message after a failure.
 *
 * The library is not instrumented (Rust sanitizers need nightly): its own out-of-bounds
 * accesses to caller arrays are caught by placing every caller array at the end of a page
 * followed by an inaccessible guard page; the replay build (SPGEMM_FUZZ_REPLAY) with
 * SPGEMM_FUZZ_MALLOC=1 uses malloc'd arrays instead, for valgrind.
 *
 * Environment: SPGEMM_FUZZ_STDERR=ignore (do not fail when the library writes to stderr),
 * SPGEMM_FUZZ_AFTER_INTERNAL=stop (end the input at the first INTERNAL status instead of
 * probing the handle: for long runs while a known handle-corruption bug is open),
 * SPGEMM_FUZZ_TRACE=1 (print the call sequence of every input), SPGEMM_FUZZ_MALLOC=1.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "spgemm.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#endif
#ifdef FUZZ_ASAN
/* Sanitizer reports go to the real stderr, not to the capture file used around library calls. */
void __sanitizer_set_report_fd(void *fd);
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* ---- limits: keep one input well under a millisecond of library work ---- */
enum {
    MAX_OPS = 40,
    MAX_DIM = 1024,         /* rows of A and B (their offset arrays are allocated) */
    MAX_NNZ = 4096,         /* entries per input matrix */
    MAX_FLOPS = 1 << 15,    /* multiplications of A*B (bounds nnz(C) and the reference) */
    MAX_C_NNZ = 1 << 17,    /* nnz(C) a garbage plan may claim before numeric is skipped */
    SLOT_BYTES = 1 << 20,
    TRACE_BYTES = 1 << 16,
};

/* ---- failure reporting ---- */

static int g_real_stderr = 2;   /* the process's stderr while fd 2 is captured */
static int g_real_stdout = 1;   /* the process's stdout while fd 1 is captured */
static int g_cap_fd = -1;       /* capture file for fds 1 and 2 during library calls */
static int g_capturing = 0;
static const char *g_call = ""; /* library call in progress (for signal reports) */
static int g_stderr_ignore = 0, g_stop_after_internal = 0, g_trace_all = 0, g_use_malloc = 0;
static char g_trace[TRACE_BYTES];
static size_t g_trace_len = 0;

static void out_str(const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(g_real_stderr, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* Appends a line to the call trace printed with every failure (a recipe for a reproducer). */
static void tr(const char *fmt, ...) {
    va_list ap;
    int n;
    if (g_trace_len >= TRACE_BYTES - 2) return;
    va_start(ap, fmt);
    n = vsnprintf(g_trace + g_trace_len, TRACE_BYTES - 1 - g_trace_len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    g_trace_len += (size_t)n;
    if (g_trace_len > TRACE_BYTES - 2) g_trace_len = TRACE_BYTES - 2;
    g_trace[g_trace_len++] = '\n';
    g_trace[g_trace_len] = '\0';
}

static void cap_restore(void) {
    if (g_capturing) {
        dup2(g_real_stdout, 1);
        dup2(g_real_stderr, 2);
        g_capturing = 0;
    }
}

static void dump_trace(void) {
    out_str("--- call sequence of this input ---\n");
    out_str(g_trace);
    out_str("--- end ---\n");
}

/* The harness's own data loops (reference products, comparisons of C and Y against them,
   generating, storing and decoding arrays) are left out of libFuzzer's coverage
   instrumentation: their comparison tracing (a callback per compare) took 40% of an
   execution and guides nothing in the library (noinline: inlined code is instrumented as
   its caller is). */
#if defined(__clang__) && __clang_major__ >= 13
#define NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#else
#define NO_COVERAGE
#endif

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
static void fail(const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    cap_restore();
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    out_str("spgemm_fuzz: FAILURE: ");
    out_str(msg);
    out_str("\n");
    dump_trace();
    abort();
}

/* Fds 1 and 2 go to the capture file for the duration of each library call. */
static void cap_begin(const char *call) {
    fflush(stdout);
    fflush(stderr);
    g_call = call;
    dup2(g_cap_fd, 1);
    dup2(g_cap_fd, 2);
    g_capturing = 1;
}

static void cap_end(void) {
    off_t n;
    fflush(stdout);
    dup2(g_real_stdout, 1);
    dup2(g_real_stderr, 2);
    g_capturing = 0;
    n = lseek(g_cap_fd, 0, SEEK_CUR);
    if (n > 0) {
        char buf[1024];
        ssize_t got = pread(g_cap_fd, buf, sizeof buf - 1, 0);
        buf[got > 0 ? got : 0] = '\0';
        if (ftruncate(g_cap_fd, 0) != 0) { /* best effort: the offset reset below matters */ }
        lseek(g_cap_fd, 0, SEEK_SET);
        if (!g_stderr_ignore) {
            fail("the library wrote %lld bytes to stdout/stderr during %s (set SPGEMM_FUZZ_STDERR=ignore "
                 "to go on); they begin:\n%s", (long long)n, g_call, buf);
        }
    }
    g_call = "";
}

/* LIB(var, expr): a library call with fds 1 and 2 captured. */
#define LIB(var, expr)        \
    do {                      \
        cap_begin(#expr);     \
        var = (expr);         \
        cap_end();            \
    } while (0)
#define LIBV(expr)            \
    do {                      \
        cap_begin(#expr);     \
        (void)(expr);         \
        cap_end();            \
    } while (0)

#ifndef FUZZ_ASAN
/* Without ASan (replay build): a fault inside the library still names the call and trace. */
static void on_signal(int sig) {
    char line[256];
    cap_restore();
    snprintf(line, sizeof line, "spgemm_fuzz: signal %d during %s\n", sig, g_call);
    out_str(line);
    dump_trace();
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

/* ---- input bytes ---- */

typedef struct {
    const uint8_t *p;
    size_t n, i;
} rd_t;

static unsigned rd8(rd_t *r) { return r->i < r->n ? r->p[r->i++] : 0u; }
static int rd_more(const rd_t *r) { return r->i < r->n; }
static uint32_t rd16(rd_t *r) {
    uint32_t a = rd8(r);
    return a | ((uint32_t)rd8(r) << 8);
}
static uint32_t rd32(rd_t *r) {
    uint32_t a = rd16(r);
    return a | (rd16(r) << 16);
}
/* Uniform-ish value in [0, n): as few bytes as n needs (at least one, so that the input
   format does not depend on sizes), so small choices stay one byte. */
static uint64_t rd_below(rd_t *r, uint64_t n) {
    if (n <= 1) return (uint64_t)rd8(r) * 0;
    if (n <= 256) return rd8(r) % n;
    if (n <= 65536) return rd16(r) % n;
    return (((uint64_t)rd32(r) << 32) | rd32(r)) % n;
}

/* splitmix64: bulk contents from a seed in the input (large matrices cost 4 bytes, not nnz). */
NO_COVERAGE
static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ---- caller arrays: end-aligned in a slot followed by a guard page ---- */

enum {
    S_ARP, S_ACI, S_AV, S_BRP, S_BCI, S_BV,     /* A and B */
    S_CRP, S_CCI, S_CV, S_CCI2, S_CV2,          /* C of two-phase products (two sets) */
    S_PARP, S_PACI, S_PAV, S_PBRP, S_PBCI, S_PBV, S_PCRP, S_PCCI, S_PCV, /* probe */
    S_X, S_Y, S_MISC,
    NSLOTS
};
static unsigned char *g_slots[NSLOTS];

typedef struct {
    void *p;
    size_t bytes;
    int slot, heap;
} buf_t;

static void buf_put(buf_t *b) {
    if (b->heap) free(b->p);
    b->p = NULL;
    b->bytes = 0;
    b->heap = 0;
}

/* Arrays of more than SLOT_BYTES (or all, with SPGEMM_FUZZ_MALLOC=1) come from malloc. */
static void *buf_get(buf_t *b, int slot, size_t bytes) {
    buf_put(b);
    b->slot = slot;
    b->bytes = bytes;
    if (!g_use_malloc && bytes <= SLOT_BYTES) {
        b->p = g_slots[slot] + SLOT_BYTES - bytes;
    } else {
        b->p = malloc(bytes ? bytes : 1);
        if (b->p == NULL) abort();
        b->heap = 1;
    }
    return b->p;
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) abort();
    return p;
}

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (p == NULL) abort();
    return p;
}

/* ---- typed access ---- */

static size_t isz(int t) { return t == SPGEMM_INDEX_INT32 ? 4 : 8; }
static size_t vsz(int t) { return t == SPGEMM_VALUE_FLOAT32 ? 4 : 8; }

/* Raw index as the library sees it; size_t entries above INT64_MAX come back negative. */
NO_COVERAGE
static int64_t ld_idx(const void *a, int t, int64_t i) {
    if (t == SPGEMM_INDEX_INT32) return ((const int32_t *)a)[i];
    if (t == SPGEMM_INDEX_INT64) return ((const int64_t *)a)[i];
    return (int64_t)((const size_t *)a)[i];
}
NO_COVERAGE
static void st_idx(void *a, int t, int64_t i, int64_t x) {
    if (t == SPGEMM_INDEX_INT32) ((int32_t *)a)[i] = (int32_t)x;
    else if (t == SPGEMM_INDEX_INT64) ((int64_t *)a)[i] = x;
    else ((size_t *)a)[i] = (size_t)x;
}
NO_COVERAGE
static double ld_val(const void *a, int t, int64_t i) {
    return t == SPGEMM_VALUE_FLOAT32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}
NO_COVERAGE
static void st_val(void *a, int t, int64_t i, double x) {
    if (t == SPGEMM_VALUE_FLOAT32) ((float *)a)[i] = (float)x;
    else ((double *)a)[i] = x;
}

static const char *tname(int t) { return t == 0 ? "int32" : t == 1 ? "int64" : "size_t"; }
static const char *vname(int t) { return t == 0 ? "float" : "double"; }

/* ---- reference CSR (0-based, int64, double) ---- */

typedef struct {
    int64_t m, n, nnz;
    int64_t *rp, *ci;
    double *v;     /* values (NULL: pattern) */
    double *vf;    /* products only: value accumulated in float arithmetic */
    double *absum; /* products only: sum of |terms| (error bound) */
    int64_t flops;
} ref_t;

static void ref_free(ref_t *a) {
    free(a->rp);
    free(a->ci);
    free(a->v);
    free(a->vf);
    free(a->absum);
    memset(a, 0, sizeof *a);
}

static void ref_alloc(ref_t *a, int64_t m, int64_t n, int64_t nnz, int values) {
    memset(a, 0, sizeof *a);
    a->m = m;
    a->n = n;
    a->nnz = nnz;
    a->rp = (int64_t *)xcalloc((size_t)m + 1, sizeof(int64_t));
    a->ci = (int64_t *)xcalloc((size_t)nnz, sizeof(int64_t));
    a->v = values ? (double *)xcalloc((size_t)nnz, sizeof(double)) : NULL;
}

static void ref_copy(ref_t *dst, const ref_t *src) {
    ref_alloc(dst, src->m, src->n, src->nnz, src->v != NULL);
    memcpy(dst->rp, src->rp, ((size_t)src->m + 1) * sizeof(int64_t));
    memcpy(dst->ci, src->ci, (size_t)src->nnz * sizeof(int64_t));
    if (src->v) memcpy(dst->v, src->v, (size_t)src->nnz * sizeof(double));
}

static int same_structure(const ref_t *a, const ref_t *b) {
    return a->m == b->m && a->n == b->n && a->nnz == b->nnz &&
           memcmp(a->rp, b->rp, ((size_t)a->m + 1) * sizeof(int64_t)) == 0 &&
           memcmp(a->ci, b->ci, (size_t)a->nnz * sizeof(int64_t)) == 0;
}

/* Error bound contribution of one product: |p| when finite; an infinite input term sets no
   bound (NaN/Inf propagate alike in any order); a product of finite factors that overflowed
   (FMA and order decide the sum) frees the entry. */
static double term_bound(double p, double x, double y) {
    if (!isfinite(p) && isfinite(x) && isfinite(y)) return INFINITY;
    return isfinite(p) ? fabs(p) : 0.0;
}

/* An entry of C's row being summed: its column and its position in the row's output. */
typedef struct {
    int64_t col, slot;
} cslot_t;

NO_COVERAGE
static int cslot_cmp(const void *x, const void *y) {
    const cslot_t *a = (const cslot_t *)x, *b = (const cslot_t *)y;
    return (a->col > b->col) - (a->col < b->col);
}

/* Row scratch of ref_mul: an open-addressing table from column to slot (entries of other
   rows told apart by a stamp, so nothing is cleared per row) and the slots' sums. */
typedef struct {
    int64_t *hcol, *hstamp, *hslot, hcap;
    cslot_t *cs;
    double *v, *vf, *ab;
    int64_t cap;
} racc_t;

/* Room for a row of nt products; returns the row's table mask (size: a power of 2 >= 2 nt). */
static int64_t racc_grow(racc_t *r, int64_t nt) {
    int64_t need = 16;
    while (need < 2 * nt) need *= 2;
    if (need > r->hcap) {
        free(r->hcol);
        free(r->hstamp);
        free(r->hslot);
        r->hcol = (int64_t *)xmalloc((size_t)need * sizeof(int64_t));
        r->hstamp = (int64_t *)xcalloc((size_t)need, sizeof(int64_t));
        r->hslot = (int64_t *)xmalloc((size_t)need * sizeof(int64_t));
        r->hcap = need;
    }
    if (nt > r->cap) {
        r->cap = nt;
        r->cs = (cslot_t *)realloc(r->cs, (size_t)nt * sizeof(cslot_t));
        r->v = (double *)realloc(r->v, (size_t)nt * sizeof(double));
        r->vf = (double *)realloc(r->vf, (size_t)nt * sizeof(double));
        r->ab = (double *)realloc(r->ab, (size_t)nt * sizeof(double));
        if (!r->cs || !r->v || !r->vf || !r->ab) abort();
    }
    return need - 1;
}

static void racc_free(racc_t *r) {
    free(r->hcol);
    free(r->hstamp);
    free(r->hslot);
    free(r->cs);
    free(r->v);
    free(r->vf);
    free(r->ab);
}

/*
 * C = A*B by the header's definition: entry (i, j) sums its products in the order A's row and
 * B's rows are stored (first assigned, later added), in double and in float arithmetic;
 * entries that cancel are kept. Rows sorted by column. Works for any k (no dense arrays):
 * a row's columns are found by hashing, then only its distinct columns are sorted.
 */
NO_COVERAGE
static void ref_mul(const ref_t *a, const ref_t *b, ref_t *c) {
    int64_t i, p, q, nnz = 0, ccap = 16;
    int values = a->v != NULL && b->v != NULL;
    racc_t r;
    memset(&r, 0, sizeof r);
    memset(c, 0, sizeof *c);
    c->m = a->m;
    c->n = b->n;
    c->rp = (int64_t *)xcalloc((size_t)a->m + 1, sizeof(int64_t));
    c->ci = (int64_t *)xmalloc((size_t)ccap * sizeof(int64_t));
    c->v = (double *)xmalloc((size_t)ccap * sizeof(double));
    c->vf = (double *)xmalloc((size_t)ccap * sizeof(double));
    c->absum = (double *)xmalloc((size_t)ccap * sizeof(double));
    for (i = 0; i < a->m; i++) {
        int64_t nt = 0, nd = 0, mask, s;
        for (p = a->rp[i]; p < a->rp[i + 1]; p++) nt += b->rp[a->ci[p] + 1] - b->rp[a->ci[p]];
        c->flops += nt;
        mask = racc_grow(&r, nt);
        for (p = a->rp[i]; p < a->rp[i + 1]; p++) {
            int64_t row = a->ci[p];
            for (q = b->rp[row]; q < b->rp[row + 1]; q++) {
                int64_t col = b->ci[q], h = (int64_t)(((uint64_t)col * 0x9E3779B97F4A7C15ULL) >> 20) & mask, k;
                double x = values ? a->v[p] : 0.0, y = values ? b->v[q] : 0.0, pv = x * y;
                float pf = values ? (float)x * (float)y : 0.0f;
                while (r.hstamp[h] == i + 1 && r.hcol[h] != col) h = (h + 1) & mask;
                if (r.hstamp[h] != i + 1) { /* first product of this entry: assigned */
                    r.hstamp[h] = i + 1;
                    r.hcol[h] = col;
                    r.hslot[h] = nd;
                    r.cs[nd].col = col;
                    r.cs[nd].slot = nd;
                    r.v[nd] = pv;
                    r.vf[nd] = pf;
                    r.ab[nd] = term_bound(pv, x, y);
                    nd++;
                } else { /* later products: added in storage order */
                    float f;
                    k = r.hslot[h];
                    f = (float)r.vf[k];
                    f += pf;
                    r.v[k] += pv;
                    r.vf[k] = f;
                    r.ab[k] += term_bound(pv, x, y);
                }
            }
        }
        if (nd > 32) qsort(r.cs, (size_t)nd, sizeof(cslot_t), cslot_cmp);
        else
            for (s = 1; s < nd; s++) { /* insertion sort: most rows are short */
                cslot_t x = r.cs[s];
                for (q = s; q > 0 && r.cs[q - 1].col > x.col; q--) r.cs[q] = r.cs[q - 1];
                r.cs[q] = x;
            }
        if (nnz + nd > ccap) {
            while (nnz + nd > ccap) ccap *= 2;
            c->ci = (int64_t *)realloc(c->ci, (size_t)ccap * sizeof(int64_t));
            c->v = (double *)realloc(c->v, (size_t)ccap * sizeof(double));
            c->vf = (double *)realloc(c->vf, (size_t)ccap * sizeof(double));
            c->absum = (double *)realloc(c->absum, (size_t)ccap * sizeof(double));
            if (!c->ci || !c->v || !c->vf || !c->absum) abort();
        }
        for (s = 0; s < nd; s++) {
            int64_t k = r.cs[s].slot;
            c->ci[nnz] = r.cs[s].col;
            c->v[nnz] = r.v[k];
            c->vf[nnz] = r.vf[k];
            c->absum[nnz] = r.ab[k];
            nnz++;
        }
        c->rp[i + 1] = nnz;
    }
    c->nnz = nnz;
    racc_free(&r);
    if (!values) {
        free(c->v);
        free(c->vf);
        c->v = c->vf = NULL;
    }
}

/* The last product computed in this input, with copies of its factors: an input asks for
   the same product many times (each symbolic, numeric and multiply call, each probe after
   an invalid call), and the reference was a third of an execution. Compared in full (all
   arrays, values bitwise), so a hit is the product ref_mul would give; freed at the end of
   every input, so no input depends on the one before. */
static struct {
    int valid;
    ref_t a, b, c;
} g_memo;

static void memo_clear(void) {
    ref_free(&g_memo.a);
    ref_free(&g_memo.b);
    ref_free(&g_memo.c);
    g_memo.valid = 0;
}

NO_COVERAGE
static int ref_equal(const ref_t *x, const ref_t *y) {
    return same_structure(x, y) && (x->v == NULL) == (y->v == NULL) &&
           (x->v == NULL || memcmp(x->v, y->v, (size_t)x->nnz * sizeof(double)) == 0);
}

static double *dup_doubles(const double *src, int64_t n) {
    double *d;
    if (src == NULL) return NULL;
    d = (double *)xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    memcpy(d, src, (size_t)n * sizeof(double));
    return d;
}

/* A product with its float sums and error bounds. */
static void product_copy(ref_t *dst, const ref_t *src) {
    ref_copy(dst, src);
    dst->vf = dup_doubles(src->vf, src->nnz);
    dst->absum = dup_doubles(src->absum, src->nnz);
    dst->flops = src->flops;
}

NO_COVERAGE
static void ref_mul_memo(const ref_t *a, const ref_t *b, ref_t *c) {
    if (g_memo.valid && ref_equal(a, &g_memo.a) && ref_equal(b, &g_memo.b)) {
        product_copy(c, &g_memo.c);
        return;
    }
    memo_clear();
    ref_mul(a, b, c);
    ref_copy(&g_memo.a, a);
    ref_copy(&g_memo.b, b);
    product_copy(&g_memo.c, c);
    g_memo.valid = 1;
}

/*
 * got against ref: NaN must stay NaN, an infinity the same infinity, finite values within
 * tol * (sum of |finite terms|). Where partial sums may overflow (that sum near the type's
 * maximum) the summation order decides the outcome, and any value is accepted.
 */
static int value_ok(double got, double ref, double absum, int is_float) {
    double tol = is_float ? 2e-5 : 1e-12, tiny = is_float ? 1e-30 : 1e-300;
    double big = is_float ? (double)FLT_MAX / 8 : DBL_MAX / 8;
    if (!(absum < big)) return 1;
    if (isnan(ref)) return isnan(got);
    if (isinf(ref)) return got == ref;
    return isfinite(got) && fabs(got - ref) <= tol * absum + tiny;
}

/* ---- a matrix of the input: typed caller arrays plus the legal version it came from ---- */

typedef struct {
    const char *name;
    int64_t m, n;
    int ot, it, vt, base, hasv, null_empty;
    int dv;          /* the descriptor has values (hasv, and not NULL for an empty matrix) */
    int64_t len;     /* entries allocated in ci and v */
    buf_t rp, ci, v;
    spgemm_matrix_t *d;
    spgemm_status_t cs; /* status of spgemm_matrix_create_csr */
    ref_t pr;           /* legal content (0-based), what REPAIR restores */
    int s_rp, s_ci, s_v;
} tmat_t;

static void tmat_release(tmat_t *t) {
    spgemm_status_t s;
    if (t->d) LIB(s, spgemm_matrix_destroy(t->d));
    (void)s;
    t->d = NULL;
    buf_put(&t->rp);
    buf_put(&t->ci);
    buf_put(&t->v);
}

static void trace_mat(const tmat_t *t) {
    char line[4096];
    size_t n = 0;
    int64_t i, nnz;
    int trunc = 0;
    n += (size_t)snprintf(line + n, sizeof line - n, "%s: %lldx%lld offsets %s, indices %s, values %s%s, base %d, rp={",
                          t->name, (long long)t->m, (long long)t->n, tname(t->ot), tname(t->it),
                          vname(t->vt), t->hasv ? "" : " (pattern-only: NULL)", t->base);
    for (i = 0; i <= t->m && n < sizeof line - 64; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%lld", i ? "," : "", (long long)ld_idx(t->rp.p, t->ot, i));
    if (i <= t->m) trunc = 1;
    nnz = t->len;
    n += (size_t)snprintf(line + n, sizeof line - n, "%s} ci={", trunc ? ",..." : "");
    for (i = 0; i < nnz && n < sizeof line - 64; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%lld", i ? "," : "", (long long)ld_idx(t->ci.p, t->it, i));
    n += (size_t)snprintf(line + n, sizeof line - n, "%s}", i < nnz ? ",..." : "");
    if (t->hasv) {
        n += (size_t)snprintf(line + n, sizeof line - n, " v={");
        for (i = 0; i < nnz && n < sizeof line - 64; i++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%.17g", i ? "," : "", ld_val(t->v.p, t->vt, i));
        n += (size_t)snprintf(line + n, sizeof line - n, "%s}", i < nnz ? ",..." : "");
    }
    (void)n;
    tr("  %s", line);
}

/* (Re)creates the descriptor over the current arrays. */
static void tmat_describe(tmat_t *t) {
    spgemm_status_t s;
    const void *ci = (t->null_empty && t->len == 0) ? NULL : t->ci.p;
    const void *v = !t->hasv ? NULL : (t->null_empty && t->len == 0) ? NULL : t->v.p;
    if (t->d) LIB(s, spgemm_matrix_destroy(t->d));
    t->d = NULL;
    t->dv = v != NULL;
    LIB(t->cs, spgemm_matrix_create_csr(&t->d, t->m, t->n, t->ot, t->rp.p, t->it, ci, t->vt, v, t->base));
    if (t->cs != SPGEMM_STATUS_SUCCESS) {
        t->d = NULL;
        /* the shape and types are always legal here: a descriptor over them must be made */
        fail("spgemm_matrix_create_csr(%s) returned %d for a %lldx%lld matrix", t->name, (int)t->cs,
             (long long)t->m, (long long)t->n);
    }
    (void)s;
}

/* Writes the legal content into fresh typed arrays. */
NO_COVERAGE
static void tmat_materialize(tmat_t *t) {
    int64_t i;
    buf_get(&t->rp, t->s_rp, ((size_t)t->m + 1) * isz(t->ot));
    buf_get(&t->ci, t->s_ci, (size_t)t->pr.nnz * isz(t->it));
    buf_get(&t->v, t->s_v, (size_t)t->pr.nnz * vsz(t->vt));
    t->len = t->pr.nnz;
    for (i = 0; i <= t->m; i++) st_idx(t->rp.p, t->ot, i, t->pr.rp[i] + t->base);
    for (i = 0; i < t->len; i++) {
        st_idx(t->ci.p, t->it, i, t->pr.ci[i] + t->base);
        st_val(t->v.p, t->vt, i, t->pr.v[i]);
    }
    tmat_describe(t);
}

/*
 * Reads the arrays as the library would. *o1 is set when an always-made O(1) check fails
 * (first offset != base, last offset below base). Returns 1 and fills *out when the
 * contents are legal (offsets non-decreasing, indices in range).
 */
NO_COVERAGE
static int tmat_decode(const tmat_t *t, ref_t *out, int *o1) {
    int64_t i, nnz, first = ld_idx(t->rp.p, t->ot, 0), last = ld_idx(t->rp.p, t->ot, t->m);
    int size_t_big = t->ot == SPGEMM_INDEX_SIZE_T && (first < 0 || last < 0);
    *o1 = first != t->base || (!size_t_big && last < t->base);
    if (*o1 || size_t_big) return 0;
    nnz = last - t->base;
    if (nnz > t->len) fail("harness: claimed nnz %lld beyond the %lld entries allocated", (long long)nnz, (long long)t->len);
    for (i = 0; i < t->m; i++) {
        int64_t x = ld_idx(t->rp.p, t->ot, i), y = ld_idx(t->rp.p, t->ot, i + 1);
        if (x < 0 || y < x) return 0;
    }
    for (i = 0; i < nnz; i++) {
        int64_t c = ld_idx(t->ci.p, t->it, i);
        if (c < t->base || c - t->base >= t->n) return 0;
    }
    if (out) {
        ref_alloc(out, t->m, t->n, nnz, t->hasv);
        for (i = 0; i <= t->m; i++) out->rp[i] = ld_idx(t->rp.p, t->ot, i) - t->base;
        for (i = 0; i < nnz; i++) {
            out->ci[i] = ld_idx(t->ci.p, t->it, i) - t->base;
            if (t->hasv) out->v[i] = ld_val(t->v.p, t->vt, i);
        }
    }
    return 1;
}

/* ---- generating legal matrices ---- */

static const double VALTAB[16] = {1.0, -1.0, 2.0, 0.5, -3.0, 0.0, 7.0, -0.25,
                                  1e-300, 1e30, 3.0, -2.0, 1.5, 4.0, 0.0, 1.0};

static double special_value(unsigned b) {
    switch (b % 8) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0;
    case 4: return -0.0;
    case 5: return 1e300;
    case 6: return 1e-310;
    default: return -1e38;
    }
}

/* One value from a byte: mostly small exact numbers, sometimes NaN/Inf/zeros/extremes. */
static double value_from(unsigned b) {
    if (b < 224) return VALTAB[b % 16] * (double)(1 + (b / 16) % 4);
    return special_value(b);
}

static int64_t col_from(rd_t *r, int64_t ncols) {
    /* huge column counts: use both ends of the range, where 32-bit conversions break */
    if (ncols > 65536) {
        unsigned b = rd8(r);
        return (b & 128) ? ncols - 1 - (int64_t)(b % 16) : (int64_t)(b % 16);
    }
    return (int64_t)rd_below(r, (uint64_t)ncols);
}

/*
 * A legal m x n matrix: explicit entries from the bytes (small), or from a seeded generator
 * (rows of random length, duplicates, unsorted rows, occasional special values).
 */
NO_COVERAGE
static void gen_ref(rd_t *r, ref_t *a, int64_t m, int64_t n, int64_t max_nnz) {
    unsigned mode = rd8(r);
    int64_t i, nnz = 0, cap = 0;
    int64_t *ci = NULL;
    double *v = NULL;
    memset(a, 0, sizeof *a);
    a->m = m;
    a->n = n;
    a->rp = (int64_t *)xcalloc((size_t)m + 1, sizeof(int64_t));
    if (n == 0) max_nnz = 0;
    if (mode & 1) { /* explicit */
        for (i = 0; i < m; i++) {
            int64_t len = (int64_t)rd_below(r, 5), e;
            for (e = 0; e < len && nnz < max_nnz; e++) {
                if (nnz == cap) {
                    cap = cap ? 2 * cap : 16;
                    ci = (int64_t *)realloc(ci, (size_t)cap * sizeof(int64_t));
                    v = (double *)realloc(v, (size_t)cap * sizeof(double));
                    if (!ci || !v) abort();
                }
                ci[nnz] = col_from(r, n);
                v[nnz] = value_from(rd8(r));
                nnz++;
            }
            a->rp[i + 1] = nnz;
        }
    } else { /* seeded */
        uint64_t seed = rd32(r);
        int64_t maxrow = (int64_t)(mode >> 4) + 1;
        int dups = (mode >> 1) & 1, sorted = (mode >> 2) & 1, specials = (mode >> 3) & 1;
        if (maxrow > 8) maxrow = 4 * maxrow;
        for (i = 0; i < m; i++) {
            int64_t len = (int64_t)(mix(&seed) % (uint64_t)(maxrow + 1)), e, start = nnz;
            if (mix(&seed) % 5 == 0) len = 0;
            for (e = 0; e < len && nnz < max_nnz; e++) {
                int64_t c;
                if (nnz == cap) {
                    cap = cap ? 2 * cap : 64;
                    ci = (int64_t *)realloc(ci, (size_t)cap * sizeof(int64_t));
                    v = (double *)realloc(v, (size_t)cap * sizeof(double));
                    if (!ci || !v) abort();
                }
                c = n > 65536 ? ((mix(&seed) & 1) ? n - 1 - (int64_t)(mix(&seed) % 64) : (int64_t)(mix(&seed) % 64))
                              : (int64_t)(mix(&seed) % (uint64_t)n);
                if (dups && e > 0 && mix(&seed) % 3 == 0) c = ci[start + (int64_t)(mix(&seed) % (uint64_t)e)];
                ci[nnz] = c;
                v[nnz] = specials && mix(&seed) % 16 == 0 ? special_value((unsigned)mix(&seed))
                                                           : (double)((int64_t)(mix(&seed) % 9) - 4) * 0.5 + 0.25;
                nnz++;
            }
            if (sorted) { /* insertion sort: rows are short */
                int64_t p, q;
                for (p = start + 1; p < nnz; p++) {
                    int64_t cc = ci[p];
                    double vv = v[p];
                    for (q = p; q > start && ci[q - 1] > cc; q--) {
                        ci[q] = ci[q - 1];
                        v[q] = v[q - 1];
                    }
                    ci[q] = cc;
                    v[q] = vv;
                }
            }
            a->rp[i + 1] = nnz;
        }
    }
    a->nnz = nnz;
    a->ci = ci ? ci : (int64_t *)xcalloc(1, sizeof(int64_t));
    a->v = v ? v : (double *)xcalloc(1, sizeof(double));
}

/* Drops trailing entries of A's rows until A*B has at most MAX_FLOPS multiplications. */
static void cap_flops(ref_t *a, const ref_t *b) {
    int64_t i, p, f = 0, out = 0;
    int64_t *newrp = (int64_t *)xcalloc((size_t)a->m + 1, sizeof(int64_t));
    for (i = 0; i < a->m; i++) {
        for (p = a->rp[i]; p < a->rp[i + 1]; p++) {
            int64_t r = a->ci[p], w = (r < b->m) ? b->rp[r + 1] - b->rp[r] : 0;
            if (f + w > MAX_FLOPS) continue;
            f += w;
            a->ci[out] = a->ci[p];
            a->v[out] = a->v[p];
            out++;
        }
        newrp[i + 1] = out;
    }
    free(a->rp);
    a->rp = newrp;
    a->nnz = out;
}

/* ---- state of one input ---- */

typedef struct {
    int validation, alg, sorted, threads;
} opts_t;

typedef struct {
    rd_t rd;
    spgemm_handle_t *h;
    opts_t o;
    tmat_t A, B;
    /* plan of the last successful symbolic call */
    spgemm_plan_t *plan;
    int plan_valid;   /* made from valid inputs */
    int plan_suspect; /* an invalid numeric call has used it since */
    ref_t plan_a, plan_b;
    int plan_ot, plan_it, plan_vt, plan_cot, plan_cit, plan_cbase, plan_sorted, plan_alg;
    int64_t plan_m, plan_k, plan_nnz;
    buf_t crp;        /* C's row offsets from the symbolic call */
    buf_t cci[2], cv[2];
    int cset;         /* which C array set the last numeric call used */
    int c_ready;      /* cci[cset]/cv[cset] sized for the plan */
    /* SpMM analysis */
    spgemm_spmm_analysis_t *an;
    int an_op, an_which, an_ot, an_it, an_vt, an_base;
    ref_t an_s;
} st_t;

static const char *ALGN[4] = {"AUTO", "KKDENSE", "KKLP", "KKMEM"};

enum { EXP_OK, EXP_OK_OR_OVERFLOW, EXP_FAIL, EXP_FAIL_OR_OK, EXP_ANY };
static const char *EXPN[5] = {"success", "success or INDEX_OVERFLOW", "an error", "an error or a correct result",
                              "anything but a crash"};

static void probe(st_t *s, const char *after);

/*
 * Checks a status against the expectation class; returns 1 when the call's result must be
 * checked (success on inputs whose result is defined).
 */
static int check_status(st_t *s, const char *what, spgemm_status_t st, int exp) {
    tr("  -> %d (%s)", (int)st, spgemm_status_string(st));
    if (st < 0 || st > SPGEMM_STATUS_INTERNAL) fail("%s: undocumented status %d", what, (int)st);
    if (st != SPGEMM_STATUS_SUCCESS) {
        const char *msg;
        cap_begin("spgemm_last_error");
        msg = spgemm_last_error(s->h);
        cap_end();
        if (msg == NULL || msg[0] == '\0') fail("%s: status %d with an empty last error", what, (int)st);
        if (strlen(msg) > 4096) fail("%s: last error of %zu bytes", what, strlen(msg));
        tr("     message: %s", msg);
    }
    if (st == SPGEMM_STATUS_INTERNAL && exp != EXP_ANY)
        fail("%s: INTERNAL (12) where %s was expected: %s", what, EXPN[exp], spgemm_last_error(s->h));
    switch (exp) {
    case EXP_OK:
        if (st != SPGEMM_STATUS_SUCCESS)
            fail("%s: status %d (%s) on valid inputs: %s", what, (int)st, spgemm_status_string(st), spgemm_last_error(s->h));
        return 1;
    case EXP_OK_OR_OVERFLOW:
        if (st != SPGEMM_STATUS_SUCCESS && st != SPGEMM_STATUS_INDEX_OVERFLOW)
            fail("%s: status %d (%s) on valid inputs: %s", what, (int)st, spgemm_status_string(st), spgemm_last_error(s->h));
        return st == SPGEMM_STATUS_SUCCESS;
    case EXP_FAIL:
        if (st == SPGEMM_STATUS_SUCCESS) fail("%s: success on inputs that must be rejected", what);
        return 0;
    case EXP_FAIL_OR_OK:
        return st == SPGEMM_STATUS_SUCCESS;
    default:
        return 0;
    }
}

/* After an INTERNAL status with SPGEMM_FUZZ_AFTER_INTERNAL=stop the input ends here. */
static int stop_now(spgemm_status_t st) { return g_stop_after_internal && st == SPGEMM_STATUS_INTERNAL; }

/*
 * A call made once under a memory limit of 1 byte before the real one (spgemm_set_memory_limit):
 * it must fail, with ALLOC_FAILED naming the estimate where the inputs are valid (an input check
 * may come first otherwise), and leave the handle as it was, which the real call after it checks.
 */
static void limit_on(st_t *s) {
    spgemm_status_t st;
    size_t got = 0;
    LIB(st, spgemm_set_memory_limit(s->h, 1));
    if (st) fail("spgemm_set_memory_limit: %d", (int)st);
    LIB(st, spgemm_get_memory_limit(s->h, &got));
    if (st || got != 1) fail("spgemm_get_memory_limit: %d, %zu", (int)st, got);
    tr("spgemm_set_memory_limit(h, 1)");
}

static void limit_off(st_t *s, const char *what, spgemm_status_t st, int exp) {
    spgemm_status_t st2;
    const char *msg;
    tr("  -> %d (%s) under the 1-byte limit", (int)st, spgemm_status_string(st));
    if (st == SPGEMM_STATUS_SUCCESS) fail("%s: success under a 1-byte memory limit", what);
    if (st == SPGEMM_STATUS_INTERNAL && exp != EXP_ANY) fail("%s: INTERNAL under a 1-byte memory limit", what);
    if (exp == EXP_OK && st != SPGEMM_STATUS_ALLOC_FAILED)
        fail("%s: status %d on valid inputs under a 1-byte memory limit", what, (int)st);
    if (st == SPGEMM_STATUS_ALLOC_FAILED) {
        cap_begin("spgemm_last_error");
        msg = spgemm_last_error(s->h);
        cap_end();
        if (!strstr(msg, "estimated") || !strstr(msg, "spgemm_set_memory_limit"))
            fail("%s: ALLOC_FAILED under the limit without the estimate: %s", what, msg);
    }
    LIB(st2, spgemm_set_memory_limit(s->h, 0));
    if (st2) fail("spgemm_set_memory_limit(0): %d", (int)st2);
    tr("spgemm_set_memory_limit(h, 0)");
}

/* A checksum of a buffer, to see that a rejected call wrote nothing (not in malloc mode,
   whose fresh arrays are uninitialised on purpose). */
NO_COVERAGE
static uint64_t buf_sum(const buf_t *b) {
    uint64_t h = 1469598103934665603ull;
    size_t i;
    if (g_use_malloc || b->p == NULL) return 0;
    for (i = 0; i < b->bytes; i++) h = (h ^ ((const unsigned char *)b->p)[i]) * 1099511628211ull;
    return h;
}

/*
 * Compares C (m + 1 row offsets rp, column indices ci, values v or NULL) in the given types
 * and base with the reference: offsets exactly, each row's columns as a set (in order when
 * sorted), no repeated column, values NaN-aware within tolerance.
 */
/* An entry of a row of C as returned. */
typedef struct {
    int64_t col;
    double v;
} centry_t;

NO_COVERAGE
static int centry_cmp(const void *x, const void *y) {
    const centry_t *a = (const centry_t *)x, *b = (const centry_t *)y;
    return (a->col > b->col) - (a->col < b->col);
}

/* By column: insertion sort for the short rows most are, qsort for long ones. */
NO_COVERAGE
static void sort_centries(centry_t *t, int64_t n) {
    int64_t i, j;
    if (n > 32) {
        qsort(t, (size_t)n, sizeof(centry_t), centry_cmp);
        return;
    }
    for (i = 1; i < n; i++) {
        centry_t x = t[i];
        for (j = i; j > 0 && t[j - 1].col > x.col; j--) t[j] = t[j - 1];
        t[j] = x;
    }
}

NO_COVERAGE
static void check_c(const char *what, const ref_t *ref, int cot, const void *rp, int cit, const void *ci, int vt,
                    const void *v, int64_t cbase, int sorted) {
    int64_t i, p;
    centry_t *row = NULL;
    int64_t rowcap = 0;
    for (i = 0; i <= ref->m; i++) {
        int64_t got = ld_idx(rp, cot, i);
        if (got != ref->rp[i] + cbase)
            fail("%s: C row_offsets[%lld] = %lld, expected %lld", what, (long long)i, (long long)got,
                 (long long)(ref->rp[i] + cbase));
    }
    if (ci == NULL) return; /* row offsets only (symbolic phase) */
    for (i = 0; i < ref->m; i++) {
        int64_t start = ref->rp[i], len = ref->rp[i + 1] - start;
        if (len > rowcap) {
            rowcap = len;
            row = (centry_t *)realloc(row, (size_t)rowcap * sizeof(centry_t));
            if (row == NULL) abort();
        }
        for (p = 0; p < len; p++) {
            row[p].col = ld_idx(ci, cit, start + p) - cbase;
            row[p].v = v ? ld_val(v, vt, start + p) : 0.0;
            if (sorted && p > 0 && row[p].col <= row[p - 1].col)
                fail("%s: row %lld of C not strictly increasing at position %lld (%lld after %lld)", what, (long long)i,
                     (long long)p, (long long)row[p].col, (long long)row[p - 1].col);
        }
        if (!sorted && len > 1) sort_centries(row, len);
        for (p = 0; p < len; p++) {
            int64_t q = start + p;
            if (row[p].col != ref->ci[q])
                fail("%s: row %lld of C: column %lld where the reference has %lld (0-based, rows compared as sets)", what,
                     (long long)i, (long long)row[p].col, (long long)ref->ci[q]);
            if (v && ref->v) {
                int isf = vt == SPGEMM_VALUE_FLOAT32;
                double want = isf ? ref->vf[q] : ref->v[q];
                if (!value_ok(row[p].v, want, ref->absum[q], isf))
                    fail("%s: C(%lld,%lld) = %.17g, expected %.17g (sum of |terms| %g)", what, (long long)i,
                         (long long)row[p].col, row[p].v, want, ref->absum[q]);
            }
        }
    }
    free(row);
}

/* ---- expectations for the inputs of a product ---- */

typedef struct {
    int o1;       /* an always-detected problem (types, shapes, first/last offset) */
    int invalid;  /* contents illegal (only validation finds them) */
    ref_t a, b;   /* decoded inputs when legal */
} inputs_t;

static void inputs_free(inputs_t *in) {
    ref_free(&in->a);
    ref_free(&in->b);
}

static void inputs_read(const st_t *s, inputs_t *in) {
    int o1a = 0, o1b = 0, va, vb;
    memset(in, 0, sizeof *in);
    va = tmat_decode(&s->A, &in->a, &o1a);
    vb = tmat_decode(&s->B, &in->b, &o1b);
    in->o1 = o1a || o1b || s->A.ot != s->B.ot || s->A.it != s->B.it || s->A.vt != s->B.vt || s->A.n != s->B.m;
    in->invalid = !va || !vb;
}

/* Symbolic or multiply: EXP_* from the inputs and the handle's validation option. */
static int product_expectation(const st_t *s, const inputs_t *in, int cit, int cbase) {
    if (in->o1) return EXP_FAIL;
    if (in->invalid) return s->o.validation ? EXP_FAIL : EXP_ANY;
    /* k (columns of C) may not fit 32-bit column indices: an overflow error is then allowed */
    if ((cit == SPGEMM_INDEX_INT32 || s->B.it == SPGEMM_INDEX_INT32) && s->B.n + cbase > INT32_MAX) return EXP_OK_OR_OVERFLOW;
    return EXP_OK;
}

/* KKDENSE keeps a dense accumulator of k entries per thread: skip it for huge k. */
static int dense_too_big(const st_t *s, int64_t k) { return s->o.alg == SPGEMM_ALG_KKDENSE && k > (1 << 20); }

/* ---- the operations ---- */

static void plan_drop(st_t *s) {
    spgemm_status_t st;
    if (s->plan) LIB(st, spgemm_plan_destroy(s->plan));
    (void)st;
    s->plan = NULL;
    ref_free(&s->plan_a);
    ref_free(&s->plan_b);
    s->c_ready = 0;
}

/* Plan queries: every one must work on any plan; on a valid plan they must agree with ref. */
static void plan_queries(st_t *s, const ref_t *ref) {
    spgemm_status_t st;
    int64_t nnz = -1, rows = -1, cols = -1, mults = -1, cpu = -1, gpu = -1;
    spgemm_algorithm_t as = -1, an = -1;
    size_t needed = 0;
    LIB(st, spgemm_plan_get_nnz(s->plan, &nnz));
    if (st) fail("spgemm_plan_get_nnz: %d", (int)st);
    LIB(st, spgemm_plan_get_info(s->plan, &rows, &cols, &mults));
    if (st) fail("spgemm_plan_get_info: %d", (int)st);
    LIB(st, spgemm_plan_get_algorithm(s->plan, &as, &an));
    if (st) fail("spgemm_plan_get_algorithm: %d", (int)st);
    LIB(st, spgemm_plan_get_split(s->plan, &cpu, &gpu));
    if (st) fail("spgemm_plan_get_split: %d", (int)st);
    LIB(st, spgemm_plan_info(s->plan, NULL, 0, &needed));
    if (st || needed == 0 || needed > 1 << 20) fail("spgemm_plan_info size: status %d, needed %zu", (int)st, needed);
    {
        char *buf = (char *)xmalloc(needed);
        LIB(st, spgemm_plan_info(s->plan, buf, needed, &needed));
        if (st || strlen(buf) + 1 != needed) fail("spgemm_plan_info: status %d, length %zu of %zu", (int)st, strlen(buf), needed);
        if (!strstr(buf, "backend: cpu")) fail("spgemm_plan_info of a CPU plan lacks 'backend: cpu': %s", buf);
        free(buf);
    }
    if (as < 1 || as > 3 || an < 1 || an > 3) fail("spgemm_plan_get_algorithm: %d/%d (never AUTO)", (int)as, (int)an);
    tr("  plan: nnz %lld, %lldx%lld, %lld multiplications, algorithms %s/%s", (long long)nnz, (long long)rows,
       (long long)cols, (long long)mults, ALGN[as], ALGN[an]);
    s->plan_nnz = nnz;
    if (!ref) return;
    if (nnz != ref->nnz) fail("spgemm_plan_get_nnz: %lld, expected %lld", (long long)nnz, (long long)ref->nnz);
    if (rows != ref->m || cols != ref->n || mults != ref->flops)
        fail("spgemm_plan_get_info: %lldx%lld, %lld multiplications; expected %lldx%lld, %lld", (long long)rows,
             (long long)cols, (long long)mults, (long long)ref->m, (long long)ref->n, (long long)ref->flops);
    if (cpu != ref->m || gpu != 0) fail("spgemm_plan_get_split: %lld/%lld rows on a CPU plan", (long long)cpu, (long long)gpu);
    if (s->plan_alg != SPGEMM_ALG_AUTO && (as != s->plan_alg || an != s->plan_alg))
        fail("plan algorithms %s/%s, but the handle asked for %s", ALGN[as], ALGN[an], ALGN[s->plan_alg]);
}

static void op_symbolic(st_t *s) {
    unsigned b = rd8(&s->rd);
    int cot = (int)((b & 3) % 3), cit = (int)((b >> 2) & 1), cbase = (int)((b >> 3) & 1), pass_rp = !((b >> 4) & 1);
    int limited = (b >> 5) & 1;
    inputs_t in;
    int exp;
    spgemm_status_t st;
    ref_t c;
    memset(&c, 0, sizeof c);
    if (dense_too_big(s, s->B.n)) return;
    plan_drop(s);
    inputs_read(s, &in);
    exp = product_expectation(s, &in, cit, cbase);
    buf_get(&s->crp, S_CRP, ((size_t)s->A.m + 1) * isz(cot));
    memset(s->crp.p, 0xA5, s->crp.bytes);
    if (limited) {
        spgemm_plan_t *p = NULL;
        limit_on(s);
        LIB(st, spgemm_symbolic(s->h, s->A.d, s->B.d, cot, cit, cbase, NULL, &p));
        if (p) LIB(st, spgemm_plan_destroy(p));
        limit_off(s, "spgemm_symbolic", st, exp == EXP_OK_OR_OVERFLOW ? EXP_FAIL_OR_OK : exp);
    }
    tr("spgemm_symbolic(h, A, B, c_offset %s, c_index %s, c_base %d, %s, &plan)  [validation %d, %s, sorted %d, %d threads; expect %s]",
       tname(cot), tname(cit), cbase, pass_rp ? "c_row_offsets" : "NULL", s->o.validation, ALGN[s->o.alg], s->o.sorted,
       s->o.threads, EXPN[exp]);
    LIB(st, spgemm_symbolic(s->h, s->A.d, s->B.d, cot, cit, cbase, pass_rp ? s->crp.p : NULL, &s->plan));
    if (st != SPGEMM_STATUS_SUCCESS) s->plan = NULL;
    if (stop_now(st)) {
        inputs_free(&in);
        s->rd.i = s->rd.n;
        return;
    }
    if (check_status(s, "spgemm_symbolic", st, exp)) {
        ref_mul_memo(&in.a, &in.b, &c);
        s->plan_alg = s->o.alg;
        plan_queries(s, &c);
        if (!pass_rp) {
            LIB(st, spgemm_plan_row_offsets(s->plan, s->crp.p));
            if (st) fail("spgemm_plan_row_offsets: %d", (int)st);
        }
        check_c("symbolic row offsets", &c, cot, s->crp.p, cit, NULL, 0, NULL, cbase, 1);
        s->plan_valid = 1;
        ref_copy(&s->plan_a, &in.a);
        ref_copy(&s->plan_b, &in.b);
    } else if (st == SPGEMM_STATUS_SUCCESS) {
        /* a plan from inputs the library did not check: queries must still be safe */
        s->plan_alg = s->o.alg;
        plan_queries(s, NULL);
        s->plan_valid = 0;
        LIB(st, spgemm_plan_row_offsets(s->plan, s->crp.p));
        (void)st;
    }
    if (s->plan) {
        s->plan_suspect = 0;
        s->plan_ot = s->A.ot;
        s->plan_it = s->A.it;
        s->plan_vt = s->A.vt;
        s->plan_cot = cot;
        s->plan_cit = cit;
        s->plan_cbase = cbase;
        s->plan_sorted = s->o.sorted;
        s->plan_m = s->A.m;
        s->plan_k = s->B.n;
    }
    ref_free(&c);
    inputs_free(&in);
    if (exp != EXP_OK && exp != EXP_OK_OR_OVERFLOW) probe(s, "symbolic on invalid inputs");
}

/* Numeric (values or structure only) with the current plan and matrices. */
static void op_numeric(st_t *s, int structure_only) {
    unsigned b = rd8(&s->rd);
    int same_arrays = b & 1, scribble = (b >> 1) & 1, null_vals = ((b >> 2) & 7) == 7;
    /* bits 5-6: spgemm_numeric_sized with exact capacities (1, 2) or one column too few (3);
       bit 7: the call once under a 1-byte memory limit first */
    int sized = (b >> 5) & 3, limited = (b >> 7) & 1;
    int64_t ncap = s->plan_nnz;
    uint64_t sum_c = 0, sum_v = 0;
    inputs_t in;
    int exp;
    spgemm_status_t st;
    ref_t c;
    const char *what = structure_only ? "spgemm_numeric_structure" : "spgemm_numeric";
    memset(&c, 0, sizeof c);
    if (!s->plan) return;
    if (s->plan_nnz < 0 || s->plan_nnz > MAX_C_NNZ) return; /* a garbage plan's nnz: cannot allocate C */
    inputs_read(s, &in);
    /* always-made checks: types and shape against the plan, values present */
    if (in.o1 || s->A.ot != s->plan_ot || s->A.it != s->plan_it || s->A.vt != s->plan_vt || s->A.m != s->plan_m ||
        s->B.n != s->plan_k || (!structure_only && (!s->A.dv || !s->B.dv)) || (!structure_only && null_vals && s->plan_nnz > 0))
        exp = EXP_FAIL;
    else if (!s->plan_valid)
        exp = EXP_ANY;
    else if (in.invalid)
        exp = s->o.validation ? EXP_FAIL : EXP_ANY;
    else if (!same_structure(&in.a, &s->plan_a) || !same_structure(&in.b, &s->plan_b))
        exp = s->o.validation ? EXP_FAIL_OR_OK : EXP_ANY;
    else
        exp = EXP_OK;
    if (!same_arrays || !s->c_ready) {
        s->cset ^= 1;
        buf_get(&s->cci[s->cset], s->cset ? S_CCI2 : S_CCI, (size_t)s->plan_nnz * isz(s->plan_cit));
        buf_get(&s->cv[s->cset], s->cset ? S_CV2 : S_CV, (size_t)s->plan_nnz * vsz(s->plan_vt));
        /* fresh arrays as a caller has them: under valgrind (malloc mode) uninitialised, so a
           read before the library writes them shows (finding F7); else a garbage pattern */
        if (!g_use_malloc) {
            memset(s->cci[s->cset].p, 0x5A, s->cci[s->cset].bytes);
            memset(s->cv[s->cset].p, 0xFF, s->cv[s->cset].bytes); /* NaN pattern in either type */
        }
        s->c_ready = 1;
    } else if (scribble && s->plan_nnz > 0) {
        /* the caller changes C's indices between calls: reuse must notice */
        int64_t p = (int64_t)rd_below(&s->rd, (uint64_t)s->plan_nnz);
        st_idx(s->cci[s->cset].p, s->plan_cit, p, ld_idx(s->cci[s->cset].p, s->plan_cit, p) + 1);
        tr("caller: C column_indices[%lld] += 1", (long long)p);
    }
    if (null_vals && !structure_only) sized = 0; /* sized with c_values NULL is structure-only */
    if (sized == 3) {
        if (ncap > 0) {
            ncap--;
            exp = EXP_FAIL;
        } else {
            sized = 1;
        }
    }
    if (limited || sized == 3) {
        sum_c = buf_sum(&s->cci[s->cset]);
        sum_v = buf_sum(&s->cv[s->cset]);
    }
    if (limited) {
        limit_on(s);
        if (structure_only)
            LIB(st, spgemm_numeric_structure(s->h, s->plan, s->A.d, s->B.d, s->cci[s->cset].p));
        else
            LIB(st, spgemm_numeric(s->h, s->plan, s->A.d, s->B.d, s->cci[s->cset].p, null_vals ? NULL : s->cv[s->cset].p));
        limit_off(s, what, st, exp);
        if (buf_sum(&s->cci[s->cset]) != sum_c || buf_sum(&s->cv[s->cset]) != sum_v)
            fail("%s under a 1-byte memory limit wrote C's arrays", what);
    }
    tr("%s%s(h, plan, A, B, %s C arrays%s%s)  [validation %d; expect %s]", what, sized ? " as spgemm_numeric_sized" : "",
       same_arrays ? "the same" : "fresh", null_vals && !structure_only ? ", c_values NULL" : "",
       sized == 3 ? ", one column too few" : "", s->o.validation, EXPN[exp]);
    if (sized) {
        LIB(st, spgemm_numeric_sized(s->h, s->plan, s->A.d, s->B.d, s->plan_cot, NULL, 0, s->plan_cit,
                                     s->cci[s->cset].p, ncap, s->plan_vt, structure_only ? NULL : s->cv[s->cset].p,
                                     structure_only ? 0 : ncap));
        if (sized == 3 && (buf_sum(&s->cci[s->cset]) != sum_c || buf_sum(&s->cv[s->cset]) != sum_v))
            fail("spgemm_numeric_sized wrote C's arrays though they are one entry short");
    } else if (structure_only) {
        LIB(st, spgemm_numeric_structure(s->h, s->plan, s->A.d, s->B.d, s->cci[s->cset].p));
    } else {
        LIB(st, spgemm_numeric(s->h, s->plan, s->A.d, s->B.d, s->cci[s->cset].p, null_vals ? NULL : s->cv[s->cset].p));
    }
    if (stop_now(st)) {
        inputs_free(&in);
        s->rd.i = s->rd.n;
        return;
    }
    if (check_status(s, what, st, exp)) {
        ref_mul_memo(&in.a, &in.b, &c);
        if (exp == EXP_OK && s->plan_suspect) tr("  (plan used by an invalid numeric call before)");
        if (c.nnz != s->plan_nnz)
            fail("%s: accepted inputs whose product has %lld entries with a plan of %lld", what, (long long)c.nnz,
                 (long long)s->plan_nnz);
        check_c(what, &c, s->plan_cot, s->crp.p, s->plan_cit, s->cci[s->cset].p, s->plan_vt,
                structure_only ? NULL : s->cv[s->cset].p, s->plan_cbase, s->plan_sorted);
    }
    if (exp == EXP_ANY) s->plan_suspect = 1;
    ref_free(&c);
    inputs_free(&in);
    if (exp != EXP_OK) probe(s, "numeric on invalid inputs");
}

static void op_multiply(st_t *s) {
    unsigned b = rd8(&s->rd);
    int cot = (int)((b & 3) % 3), cit = (int)((b >> 2) & 1), cbase = (int)((b >> 3) & 1);
    inputs_t in;
    int exp;
    spgemm_status_t st;
    spgemm_matrix_t *C = NULL;
    ref_t c;
    memset(&c, 0, sizeof c);
    if (dense_too_big(s, s->B.n)) return;
    inputs_read(s, &in);
    exp = product_expectation(s, &in, cit, cbase);
    if ((b >> 4) & 1) {
        limit_on(s);
        LIB(st, spgemm_multiply(s->h, s->A.d, s->B.d, cot, cit, cbase, &C));
        if (C) LIB(st, spgemm_matrix_destroy(C));
        C = NULL;
        limit_off(s, "spgemm_multiply", st, exp == EXP_OK_OR_OVERFLOW ? EXP_FAIL_OR_OK : exp);
    }
    tr("spgemm_multiply(h, A, B, %s, %s, base %d, &C)  [validation %d, %s, sorted %d, %d threads; expect %s]", tname(cot),
       tname(cit), cbase, s->o.validation, ALGN[s->o.alg], s->o.sorted, s->o.threads, EXPN[exp]);
    LIB(st, spgemm_multiply(s->h, s->A.d, s->B.d, cot, cit, cbase, &C));
    if (st != SPGEMM_STATUS_SUCCESS) C = NULL;
    if (stop_now(st)) {
        inputs_free(&in);
        s->rd.i = s->rd.n;
        return;
    }
    if (check_status(s, "spgemm_multiply", st, exp) || C) {
        int64_t m = -1, k = -1, nnz = -1;
        int ot = -1, it = -1, vt = -1, base = -1;
        spgemm_memory_t mem = -1;
        const void *rp = NULL, *ci = NULL, *v = NULL;
        LIB(st, spgemm_matrix_get_info(C, &m, &k, &nnz, &ot, &it, &vt, &base));
        if (st) fail("spgemm_matrix_get_info of a product: %d", (int)st);
        LIB(st, spgemm_matrix_export_csr(C, &rp, &ci, &v));
        if (st) fail("spgemm_matrix_export_csr of a product: %d", (int)st);
        LIB(st, spgemm_matrix_get_memory(C, &mem));
        if (st || mem != SPGEMM_MEMORY_HOST) fail("spgemm_matrix_get_memory of a product: %d, %d", (int)st, (int)mem);
        if (m < 0 || nnz < 0 || rp == NULL || (nnz > 0 && ci == NULL)) fail("product info: m %lld nnz %lld", (long long)m, (long long)nnz);
        {
            /* the library's own arrays must hold what get_info says (ASan checks these reads) */
            int64_t i;
            volatile double sink = 0;
            for (i = 0; i <= m; i++) sink += (double)ld_idx(rp, ot, i);
            for (i = 0; i < nnz; i++) sink += (double)ld_idx(ci, it, i) + (v ? ld_val(v, vt, i) : 0.0);
            (void)sink;
        }
        if (exp == EXP_OK || exp == EXP_OK_OR_OVERFLOW || (exp == EXP_FAIL_OR_OK && !in.invalid)) {
            int pattern = !s->A.dv || !s->B.dv;
            ref_mul_memo(&in.a, &in.b, &c);
            if (m != c.m || k != c.n || nnz != c.nnz || ot != cot || it != cit || base != cbase || vt != s->A.vt)
                fail("spgemm_matrix_get_info of A*B: %lldx%lld nnz %lld types %d/%d/%d base %d; expected %lldx%lld nnz %lld types %d/%d/%d base %d",
                     (long long)m, (long long)k, (long long)nnz, ot, it, vt, base, (long long)c.m, (long long)c.n,
                     (long long)c.nnz, cot, cit, s->A.vt, cbase);
            /* an empty product may come without a values array (nothing to point to) */
            if (pattern != (v == NULL) && nnz > 0) fail("spgemm_multiply: values %s for a %s product", v ? "present" : "NULL", pattern ? "pattern-only" : "valued");
            check_c("spgemm_multiply", &c, cot, rp, cit, ci, vt, v, cbase, s->o.sorted);
        }
        LIB(st, spgemm_matrix_destroy(C));
    }
    ref_free(&c);
    inputs_free(&in);
    if (exp != EXP_OK && exp != EXP_OK_OR_OVERFLOW) probe(s, "multiply on invalid inputs");
}

/* ---- SpMM ---- */

static double x_value(unsigned b) { return b >= 250 ? special_value(b) : (double)((int)(b % 17) - 8) * 0.25; }

typedef struct {
    int which, op, layout, k, ldx_extra, ldy_extra, bad_ld, x_null, with_analysis;
    double alpha, beta;
    unsigned seed;
} spmm_args_t;

static void spmm_run(st_t *s, tmat_t *t, const spmm_args_t *g, int is_probe);

/* SpMM on A or B; k from a table that reaches the 8- and 16-column kernels and X packing. */
static void op_spmm(st_t *s, int with_analysis) {
    static const int KS[8] = {0, 1, 2, 3, 5, 8, 16, 17};
    static const double ALPHA[8] = {1.0, 0.0, -2.0, 0.5, 1.0, 3.0, 1.0, NAN};
    static const double BETA[8] = {0.0, 1.0, -1.0, 0.0, 2.0, 0.5, 0.0, NAN};
    unsigned b0 = rd8(&s->rd), b1 = rd8(&s->rd), b2 = rd8(&s->rd);
    spmm_args_t g;
    g.which = b0 & 1;
    g.op = (b0 >> 1) & 1;
    g.layout = (b0 >> 2) & 1;
    g.k = KS[(b0 >> 3) & 7];
    g.ldx_extra = (int)(b1 % 3);
    g.ldy_extra = (int)((b1 >> 2) % 3);
    g.bad_ld = ((b1 >> 4) & 7) == 7;
    g.alpha = ALPHA[b2 & 7];
    g.beta = BETA[(b2 >> 3) & 7];
    g.x_null = g.alpha == 0.0 && ((b2 >> 6) & 1);
    g.with_analysis = with_analysis;
    g.seed = rd8(&s->rd);
    spmm_run(s, g.which ? &s->B : &s->A, &g, 0);
}

/* After an invalid SpMM: the same product with the legal matrix on the same handle. */
static void spmm_probe(st_t *s, const tmat_t *t, const spmm_args_t *g) {
    tmat_t pa;
    spmm_args_t g2 = *g;
    pa = *t;
    memset(&pa.rp, 0, sizeof(buf_t) * 3);
    pa.d = NULL;
    pa.s_rp = S_PARP;
    pa.s_ci = S_PACI;
    pa.s_v = S_PAV;
    pa.name = t->name[0] == 'A' ? "A'" : "B'";
    pa.hasv = 1;
    pa.null_empty = 0;
    ref_copy(&pa.pr, &t->pr);
    g2.bad_ld = 0;
    g2.with_analysis = 0;
    tr("SpMM probe: the same call with the legal %s on the same handle:", pa.name);
    tmat_materialize(&pa);
    trace_mat(&pa);
    spmm_run(s, &pa, &g2, 1);
    tmat_release(&pa);
    ref_free(&pa.pr);
}

/* One SpMM check's arrays: X and Y as the library reads them (x0, y0; SPMM_SENT marks an
   entry of Y outside the used part, or one already checked), the reference and its bound. */
typedef struct {
    int vt, op, layout, k;
    int64_t rows, yr, ldx, ldy, nx, ny;
    double alpha, beta;
    double *x0, *y0, *yref, *yabs;
} spmm_data_t;
#define SPMM_SENT 12345.75

static int64_t spmm_yq(const spmm_data_t *d, int64_t i, int64_t j) {
    return d->layout == SPGEMM_LAYOUT_ROW_MAJOR ? i * d->ldy + j : j * d->ldy + i;
}

/* X from the seed; Y's used entries from the seed (NaN when beta = 0: Y must not be read). */
NO_COVERAGE
static void spmm_fill(spmm_data_t *d, void *x, void *y, unsigned seed) {
    int64_t p, i, j;
    for (p = 0; p < d->nx; p++) {
        d->x0[p] = x_value((seed * 31u + (unsigned)p * 7u) & 255u);
        st_val(x, d->vt, p, d->x0[p]);
        d->x0[p] = ld_val(x, d->vt, p); /* what the library reads (1e300 is inf as a float) */
    }
    for (p = 0; p < d->ny; p++) {
        d->y0[p] = SPMM_SENT;
        st_val(y, d->vt, p, SPMM_SENT);
    }
    for (i = 0; i < d->yr; i++)
        for (j = 0; j < d->k; j++) {
            int64_t q = spmm_yq(d, i, j);
            if (q < 0 || q >= d->ny) continue;
            d->y0[q] = d->beta == 0.0 ? NAN : x_value((seed + (unsigned)q * 13u) & 255u);
            st_val(y, d->vt, q, d->y0[q]);
            d->y0[q] = ld_val(y, d->vt, q);
        }
}

/* Reference: Y = alpha * op(A) X + beta * Y (alpha 0: A, X unread; beta 0: Y unread). */
NO_COVERAGE
static void spmm_reference(spmm_data_t *d, const ref_t *a, int valid) {
    int64_t i, j, p, k = d->k, yr = d->yr;
    double alpha = d->alpha, beta = d->beta;
    for (i = 0; i < yr; i++)
        for (j = 0; j < k; j++) d->yabs[spmm_yq(d, i, j)] = 0.0;
    if (alpha != 0.0 && valid) {
        double *sum = (double *)xcalloc((size_t)(yr * k) + 1, sizeof(double));
        double *sab = (double *)xcalloc((size_t)(yr * k) + 1, sizeof(double));
        for (i = 0; i < d->rows; i++)
            for (p = a->rp[i]; p < a->rp[i + 1]; p++) {
                int64_t c = a->ci[p], orow = d->op ? c : i, xrow = d->op ? i : c;
                for (j = 0; j < k; j++) {
                    double xv = d->x0[d->layout == SPGEMM_LAYOUT_ROW_MAJOR ? xrow * d->ldx + j : j * d->ldx + xrow];
                    sum[orow * k + j] += a->v[p] * xv;
                    if (isfinite(a->v[p] * xv)) sab[orow * k + j] += fabs(a->v[p] * xv);
                    else if (isfinite(a->v[p]) && isfinite(xv)) sab[orow * k + j] = INFINITY; /* overflow */
                }
            }
        for (i = 0; i < yr; i++)
            for (j = 0; j < k; j++) {
                int64_t q = spmm_yq(d, i, j);
                double by = beta == 0.0 ? 0.0 : beta * d->y0[q];
                d->yref[q] = alpha * sum[i * k + j] + by;
                d->yabs[q] = fabs(alpha) * sab[i * k + j] + (beta == 0.0 || !isfinite(by) ? 0.0 : fabs(by));
                if (isnan(d->yabs[q])) d->yabs[q] = 0.0; /* NaN alpha: the NaN reference decides */
                if (isnan(alpha) || (beta != 0.0 && isnan(beta))) d->yref[q] = NAN;
            }
        free(sum);
        free(sab);
    } else {
        for (i = 0; i < yr; i++)
            for (j = 0; j < k; j++) {
                int64_t q = spmm_yq(d, i, j);
                d->yref[q] = beta == 0.0 ? 0.0 : beta * d->y0[q];
                d->yabs[q] = isfinite(d->yref[q]) ? fabs(d->yref[q]) : 0.0;
            }
    }
}

/* Y's used entries against the reference; each checked entry is then marked SPMM_SENT. */
NO_COVERAGE
static void spmm_check_used(spmm_data_t *d, const void *y) {
    int64_t i, j;
    for (i = 0; i < d->yr; i++)
        for (j = 0; j < d->k; j++) {
            int64_t q = spmm_yq(d, i, j);
            double got = ld_val(y, d->vt, q);
            if (!value_ok(got, d->yref[q], d->yabs[q], d->vt == SPGEMM_VALUE_FLOAT32))
                fail("spgemm_spmm: Y(%lld,%lld) = %.17g, expected %.17g (sum of |terms| %g)", (long long)i, (long long)j,
                     got, d->yref[q], d->yabs[q]);
            d->yref[q] = SPMM_SENT;
            d->y0[q] = SPMM_SENT;
        }
}

/* Entries between the used parts are neither read nor written; after an early error none are. */
NO_COVERAGE
static void spmm_check_gaps(const spmm_data_t *d, const void *y, spgemm_status_t st, int exp) {
    int64_t p;
    for (p = 0; p < d->ny; p++) {
        double got = ld_val(y, d->vt, p);
        int used_and_unchecked = d->y0[p] != SPMM_SENT;
        if (used_and_unchecked && (st == SPGEMM_STATUS_SUCCESS || exp == EXP_ANY)) continue;
        if (used_and_unchecked) { /* error reported before the product: Y unchanged */
            double want = d->y0[p];
            if (!(got == want || (isnan(got) && isnan(want))) && st != SPGEMM_STATUS_INTERNAL)
                fail("spgemm_spmm: Y[%lld] changed from %.17g to %.17g by a call that failed with %d", (long long)p, want,
                     got, (int)st);
        } else if (got != (d->vt == SPGEMM_VALUE_FLOAT32 ? (double)(float)SPMM_SENT : SPMM_SENT) && d->yref[p] != SPMM_SENT) {
            fail("spgemm_spmm: Y[%lld], outside the used part (ldy %lld), changed to %.17g", (long long)p,
                 (long long)d->ldy, got);
        }
    }
}

static void spmm_run(st_t *s, tmat_t *t, const spmm_args_t *g, int is_probe) {
    int op = g->op, layout = g->layout, k = g->k, ldx_extra = g->ldx_extra, ldy_extra = g->ldy_extra;
    int bad_ld = g->bad_ld, x_null = g->x_null, with_analysis = g->with_analysis, which = g->which;
    double alpha = g->alpha, beta = g->beta;
    int64_t rows, cols, xr, yr, ldx, ldy, nx, ny;
    int vt = t->vt, exp, o1 = 0, valid, analysis_matches = 0;
    size_t es = vsz(vt);
    ref_t a;
    spmm_data_t d;
    void *x, *y;
    buf_t xb, yb;
    spgemm_status_t st;
    memset(&a, 0, sizeof a);
    memset(&xb, 0, sizeof xb);
    memset(&yb, 0, sizeof yb);
    if (t->m > 65536 || t->n > 65536) return;
    rows = t->m;
    cols = t->n;
    xr = op ? rows : cols; /* X: op(A)'s columns x k */
    yr = op ? cols : rows; /* Y: op(A)'s rows x k */
    ldx = layout == SPGEMM_LAYOUT_ROW_MAJOR ? k + ldx_extra : (xr > 1 ? xr : 1) + ldx_extra;
    ldy = layout == SPGEMM_LAYOUT_ROW_MAJOR ? k + ldy_extra : (yr > 1 ? yr : 1) + ldy_extra;
    if (bad_ld) ldy = (layout == SPGEMM_LAYOUT_ROW_MAJOR ? k : (yr > 1 ? yr : 1)) - 1; /* too small: INVALID_VALUE */
    /* extents: exactly up to the last entry, so reading past it hits the guard page */
    nx = (xr > 0 && k > 0) ? (layout == SPGEMM_LAYOUT_ROW_MAJOR ? (xr - 1) * ldx + k : (k - 1) * ldx + xr) : 0;
    ny = (yr > 0 && k > 0 && ldy >= 0) ? (layout == SPGEMM_LAYOUT_ROW_MAJOR ? (yr - 1) * ldy + k : (k - 1) * ldy + yr) : 0;
    if (bad_ld && ny < 0) ny = 0;
    x = buf_get(&xb, S_X, (size_t)nx * es);
    y = buf_get(&yb, S_Y, (size_t)ny * es);
    d.vt = vt;
    d.op = op;
    d.layout = layout;
    d.k = k;
    d.rows = rows;
    d.yr = yr;
    d.ldx = ldx;
    d.ldy = ldy;
    d.nx = nx;
    d.ny = ny;
    d.alpha = alpha;
    d.beta = beta;
    d.x0 = (double *)xcalloc((size_t)nx, sizeof(double));
    d.y0 = (double *)xcalloc((size_t)ny, sizeof(double));
    d.yref = (double *)xcalloc((size_t)ny, sizeof(double));
    d.yabs = (double *)xcalloc((size_t)ny, sizeof(double));
    spmm_fill(&d, x, y, g->seed);
    valid = tmat_decode(t, &a, &o1);
    if (bad_ld) exp = EXP_FAIL;
    else if (!t->dv || o1) exp = alpha == 0.0 ? EXP_FAIL_OR_OK : EXP_FAIL;
    else if (!valid) exp = s->o.validation ? (alpha == 0.0 ? EXP_FAIL_OR_OK : EXP_FAIL) : EXP_ANY;
    else if (with_analysis && s->an) {
        /* an analysis of another op is not used; one of another structure is a mismatch */
        analysis_matches = s->an_which == which && same_structure(&a, &s->an_s) && s->an_ot == t->ot &&
                           s->an_it == t->it && s->an_vt == t->vt && s->an_base == t->base;
        exp = analysis_matches ? EXP_OK : (s->an_op == op && !s->o.validation) ? EXP_ANY : EXP_FAIL_OR_OK;
    } else exp = EXP_OK;
    /* k = 0 "does nothing": argument errors may or may not be reported (finding F2: the
       library rejects ld = 0 for k = 0, which the header's "ld >= k" allows) */
    if (k == 0 && exp != EXP_ANY) exp = EXP_FAIL_OR_OK;
    /* no entry of Y to compute: a missing-values error may be skipped too */
    if (yr == 0 && exp == EXP_FAIL && !bad_ld) exp = EXP_FAIL_OR_OK;
    tr("spgemm_spmm(h, %s, alpha %g, %s, %s, %s, k %d, X%s ldx %lld, beta %g, Y, ldy %lld)  [validation %d, %d threads; expect %s]",
       op ? "TRANSPOSE" : "NON_TRANSPOSE", alpha, t->name, with_analysis && s->an ? "analysis" : "NULL",
       layout ? "COL_MAJOR" : "ROW_MAJOR", k, x_null ? " NULL" : "", (long long)ldx, beta, (long long)ldy,
       s->o.validation, s->o.threads, EXPN[exp]);
    LIB(st, spgemm_spmm(s->h, op, alpha, t->d, with_analysis ? s->an : NULL, layout, k, x_null ? NULL : x, ldx, beta, y, ldy));
    if (stop_now(st)) {
        s->rd.i = s->rd.n;
        goto done;
    }
    if (check_status(s, "spgemm_spmm", st, exp) && !(exp == EXP_FAIL_OR_OK && !valid && alpha != 0.0)) {
        spmm_reference(&d, &a, valid);
        spmm_check_used(&d, y);
    }
    spmm_check_gaps(&d, y, st, exp);
    if (exp != EXP_OK && !is_probe && !stop_now(st)) {
        probe(s, "spmm on invalid inputs");
        spmm_probe(s, t, g);
    }
done:
    ref_free(&a);
    free(d.x0);
    free(d.y0);
    free(d.yref);
    free(d.yabs);
    buf_put(&xb);
    buf_put(&yb);
}

static void op_analysis(st_t *s) {
    unsigned b = rd8(&s->rd);
    int which = b & 1, op = (b >> 1) & 1, layout = (b >> 2) & 1;
    tmat_t *t = which ? &s->B : &s->A;
    ref_t a;
    int o1 = 0, valid, exp;
    spgemm_status_t st;
    memset(&a, 0, sizeof a);
    if (t->m > 65536 || t->n > 65536) return;
    if (s->an) LIB(st, spgemm_spmm_analysis_destroy(s->an));
    s->an = NULL;
    ref_free(&s->an_s);
    valid = tmat_decode(t, &a, &o1);
    /* the analysis validates A fully whatever the validation option says */
    exp = !t->dv ? (valid ? EXP_FAIL_OR_OK : EXP_FAIL) : valid ? EXP_OK : EXP_FAIL;
    if ((b >> 5) & 1) {
        spgemm_spmm_analysis_t *an = NULL;
        limit_on(s);
        LIB(st, spgemm_spmm_analysis_create(s->h, op, t->d, layout, (int64_t)((b >> 3) % 4), &an));
        if (an) LIB(st, spgemm_spmm_analysis_destroy(an));
        limit_off(s, "spgemm_spmm_analysis_create", st, exp);
    }
    tr("spgemm_spmm_analysis_create(h, %s, %s, %s, k_hint %u, &an)  [expect %s]", op ? "TRANSPOSE" : "NON_TRANSPOSE",
       t->name, layout ? "COL_MAJOR" : "ROW_MAJOR", (b >> 3) % 4, EXPN[exp]);
    LIB(st, spgemm_spmm_analysis_create(s->h, op, t->d, layout, (int64_t)((b >> 3) % 4), &s->an));
    if (st != SPGEMM_STATUS_SUCCESS) s->an = NULL;
    if (check_status(s, "spgemm_spmm_analysis_create", st, exp) || s->an) {
        s->an_op = op;
        s->an_which = which;
        s->an_ot = t->ot;
        s->an_it = t->it;
        s->an_vt = t->vt;
        s->an_base = t->base;
        ref_copy(&s->an_s, &a);
        if (!valid) fail("spgemm_spmm_analysis_create accepted an invalid matrix");
    }
    ref_free(&a);
    if (exp != EXP_OK) probe(s, "analysis of invalid inputs");
}

/* ---- changing the matrices ---- */

static void new_values(st_t *s) {
    unsigned b = rd8(&s->rd), seed = rd8(&s->rd);
    tmat_t *ts[2] = {&s->A, &s->B};
    int w;
    for (w = 0; w < 2; w++) {
        tmat_t *t = ts[w];
        int64_t p;
        if (!((b >> w) & 1) || !t->hasv) continue;
        for (p = 0; p < t->len; p++) {
            double x = value_from((seed * 29u + (unsigned)p * 11u + (unsigned)w) & 255u);
            st_val(t->v.p, t->vt, p, x);
            if (p < t->pr.nnz) t->pr.v[p] = ld_val(t->v.p, t->vt, p);
        }
        tr("caller: new values in %s (same structure)", t->name);
        trace_mat(t);
    }
}

/* A legal change of structure: one column index moves (plans made before no longer match). */
static void restructure(st_t *s) {
    unsigned b = rd8(&s->rd);
    tmat_t *t = (b & 1) ? &s->B : &s->A;
    int64_t p;
    if (t->pr.nnz == 0 || t->n < 2) return;
    p = (int64_t)rd_below(&s->rd, (uint64_t)t->pr.nnz);
    t->pr.ci[p] = (t->pr.ci[p] + 1) % t->n;
    tmat_materialize(t);
    tr("caller: %s column %lld moved (legal, new structure)", t->name, (long long)p);
    trace_mat(t);
}

static const char *CORRN[14] = {"offset +1", "offset -1", "negative offset", "decreasing offsets (swap)",
                                "index +1", "index -1", "negative index", "index out of range",
                                "duplicate (legal)", "explicit zero value (legal)", "NaN value (legal)",
                                "wild words", "first offset != base", "last offset changed"};

/* Corrupts A's or B's arrays in place (legal kinds too: duplicates, zeros, NaN). */
static void corrupt(st_t *s) {
    unsigned b = rd8(&s->rd);
    tmat_t *t = (b & 1) ? &s->B : &s->A;
    int kind = (int)((b >> 1) % 14);
    int64_t nnz = t->len, m = t->m, i, p;
    i = (int64_t)rd_below(&s->rd, (uint64_t)m + 1);
    p = nnz > 0 ? (int64_t)rd_below(&s->rd, (uint64_t)nnz) : 0;
    switch (kind) {
    case 0: case 1: case 2: case 3: case 12: case 13: {
        int64_t old = ld_idx(t->rp.p, t->ot, i), nv = old;
        if (kind == 0) nv = old + 1;
        if (kind == 1) nv = old - 1;
        if (kind == 2) nv = -1 - (int64_t)(rd8(&s->rd) % 3);
        if (kind == 12) { i = 0; nv = t->base + 1 - 2 * (int64_t)(rd8(&s->rd) & 1); }
        if (kind == 13) { i = m; nv = ld_idx(t->rp.p, t->ot, m) + (int64_t)(rd8(&s->rd) % 5) - 2; }
        if (kind == 3) {
            if (m < 1) return;
            if (i == m) i = m - 1;
            nv = ld_idx(t->rp.p, t->ot, i + 1);
            /* a swap into the last offset must not claim more entries than the arrays hold */
            if (i + 1 == m && (old - t->base > t->len || (t->ot == SPGEMM_INDEX_SIZE_T && old < 0))) return;
            st_idx(t->rp.p, t->ot, i + 1, old);
        }
        if (i == m && kind != 3) {
            /* the last offset sets nnz: arrays must hold that many entries (caller contract) */
            int64_t claimed = nv - t->base;
            if (t->ot == SPGEMM_INDEX_SIZE_T && nv < 0) return;
            if (claimed > MAX_NNZ + 8) return;
            if (claimed > t->len) {
                /* new arrays of `claimed` entries, the extra ones legal: copy through the heap,
                   since the slot's new (longer, end-aligned) array overlaps the old one */
                size_t ib = isz(t->it), vb = vsz(t->vt);
                void *tci = xcalloc((size_t)claimed, ib), *tv = xcalloc((size_t)claimed, vb);
                int64_t q;
                memcpy(tci, t->ci.p, (size_t)t->len * ib);
                memcpy(tv, t->v.p, (size_t)t->len * vb);
                for (q = t->len; q < claimed; q++) {
                    st_idx(tci, t->it, q, t->base + (t->n > 0 ? q % t->n : 0));
                    st_val(tv, t->vt, q, 1.0);
                }
                buf_get(&t->ci, t->s_ci, (size_t)claimed * ib);
                buf_get(&t->v, t->s_v, (size_t)claimed * vb);
                memcpy(t->ci.p, tci, (size_t)claimed * ib);
                memcpy(t->v.p, tv, (size_t)claimed * vb);
                free(tci);
                free(tv);
                t->len = claimed;
                st_idx(t->rp.p, t->ot, m, nv);
                tmat_describe(t);
                break;
            }
        }
        if (t->ot == SPGEMM_INDEX_INT32 && (nv > INT32_MAX || nv < INT32_MIN)) return;
        st_idx(t->rp.p, t->ot, i, nv);
        break;
    }
    case 4: case 5: case 6: case 7: case 8: {
        int64_t old, nv;
        if (nnz == 0) return;
        old = ld_idx(t->ci.p, t->it, p);
        nv = kind == 4 ? old + 1 : kind == 5 ? old - 1 : kind == 6 ? -1 - (int64_t)(rd8(&s->rd) % 4)
           : kind == 7 ? t->base + t->n + (int64_t)(rd8(&s->rd) % 3) : (p > 0 ? ld_idx(t->ci.p, t->it, p - 1) : old);
        if (t->it == SPGEMM_INDEX_INT32 && (nv > INT32_MAX || nv < INT32_MIN)) nv = (int64_t)(int32_t)nv;
        st_idx(t->ci.p, t->it, p, nv);
        if (kind == 8 && p < t->pr.nnz && nv - t->base >= 0 && nv - t->base < t->n) t->pr.ci[p] = nv - t->base;
        break;
    }
    case 9: case 10:
        if (nnz == 0 || !t->hasv) return;
        st_val(t->v.p, t->vt, p, kind == 9 ? 0.0 : NAN);
        if (p < t->pr.nnz) t->pr.v[p] = kind == 9 ? 0.0 : NAN;
        break;
    case 11: { /* a few random words in the offsets (interior) and indices */
        int w;
        for (w = 0; w < 3; w++) {
            uint64_t x = ((uint64_t)rd32(&s->rd) << 32) | rd32(&s->rd);
            if ((w & 1) == 0 && m > 1) {
                int64_t at = 1 + (int64_t)rd_below(&s->rd, (uint64_t)m - 1);
                st_idx(t->rp.p, t->ot, at, (int64_t)x);
            } else if (nnz > 0) {
                st_idx(t->ci.p, t->it, (int64_t)rd_below(&s->rd, (uint64_t)nnz), (int64_t)x);
            }
        }
        break;
    }
    default:
        break;
    }
    tr("caller: corrupt %s: %s (row %lld, entry %lld)", t->name, CORRN[kind], (long long)i, (long long)p);
    trace_mat(t);
}

/* ---- problems: A (m x n) and B (n x k) ---- */

static void new_problem(st_t *s) {
    rd_t *r = &s->rd;
    unsigned b0 = rd8(r), b1 = rd8(r), shape = rd8(r) % 16;
    int64_t m, n, k, nb;
    int ot = (int)((b0 & 3) % 3), it = (int)((b0 >> 2) & 1), vt = (int)((b0 >> 3) & 1);
    static const int64_t BIGK[6] = {2147483647LL, 2147483648LL, 2147483649LL, 4294967297LL, 1LL << 40, 65537};
    plan_drop(s);
    tmat_release(&s->A);
    tmat_release(&s->B);
    ref_free(&s->A.pr);
    ref_free(&s->B.pr);
    if (shape < 6) { m = (int64_t)rd_below(r, 5); n = (int64_t)rd_below(r, 5); k = (int64_t)rd_below(r, 5); }
    else if (shape < 10) { m = (int64_t)rd_below(r, 17); n = (int64_t)rd_below(r, 17); k = (int64_t)rd_below(r, 17); }
    else if (shape < 12) { m = (int64_t)rd_below(r, 201); n = (int64_t)rd_below(r, 65); k = (int64_t)rd_below(r, 201); }
    else if (shape == 12) { m = 256 + (int64_t)rd_below(r, MAX_DIM - 255); n = (int64_t)rd_below(r, 33); k = (int64_t)rd_below(r, 65); }
    else if (shape == 13) { /* a zero dimension, the others small */
        unsigned z = rd8(r) % 3;
        m = z == 0 ? 0 : 1 + (int64_t)rd_below(r, 4);
        n = z == 1 ? 0 : 1 + (int64_t)rd_below(r, 4);
        k = z == 2 ? 0 : 1 + (int64_t)rd_below(r, 4);
    } else if (shape == 14) { /* huge k: 32-bit index overflow, accumulators that must not be dense */
        m = 1 + (int64_t)rd_below(r, 8); n = 1 + (int64_t)rd_below(r, 8); k = BIGK[rd8(r) % 6];
    } else { m = n = k = 1; }
    nb = n;
    if ((b1 & 0x70) == 0x70) nb = n + 1; /* dimension mismatch */
    s->A.m = m; s->A.n = n;
    s->B.m = nb; s->B.n = k;
    s->A.ot = s->B.ot = ot;
    s->A.it = s->B.it = it;
    s->A.vt = s->B.vt = vt;
    if ((b1 & 0x80) && (b1 & 0x08)) { /* type mismatch between A and B */
        unsigned which = (b1 >> 1) & 3;
        if (which == 0) s->B.ot = (ot + 1) % 3;
        else if (which == 1) s->B.it = 1 - it;
        else s->B.vt = 1 - vt;
    }
    s->A.base = (int)(b1 & 1);
    s->B.base = (int)((b1 >> 1) & 1);
    s->A.hasv = ((b1 >> 2) & 3) != 3;
    s->B.hasv = ((b1 >> 4) & 3) != 3 || !s->A.hasv;
    s->A.null_empty = s->B.null_empty = (b0 >> 4) & 1;
    gen_ref(r, &s->A.pr, s->A.m, s->A.n, MAX_NNZ);
    gen_ref(r, &s->B.pr, s->B.m, s->B.n, MAX_NNZ);
    if (s->A.n == s->B.m) cap_flops(&s->A.pr, &s->B.pr);
    /* values exact in the value type, so the reference reads what the library reads */
    {
        tmat_t *ts[2] = {&s->A, &s->B};
        int w;
        int64_t p;
        for (w = 0; w < 2; w++)
            for (p = 0; p < ts[w]->pr.nnz; p++)
                if (ts[w]->vt == SPGEMM_VALUE_FLOAT32) ts[w]->pr.v[p] = (double)(float)ts[w]->pr.v[p];
    }
    tmat_materialize(&s->A);
    tmat_materialize(&s->B);
    tr("new problem:");
    trace_mat(&s->A);
    trace_mat(&s->B);
}

static void repair(st_t *s) {
    tmat_materialize(&s->A);
    tmat_materialize(&s->B);
    tr("caller: A and B restored to their legal content");
}

/* ---- the probe: a valid product on the same handle after an invalid call ---- */

static void probe(st_t *s, const char *after) {
    tmat_t pa, pb;
    ref_t c;
    spgemm_plan_t *plan = NULL;
    spgemm_status_t st;
    int64_t nnz = -1;
    buf_t crp, cci, cv;
    int usable = s->A.ot == s->B.ot && s->A.it == s->B.it && s->A.vt == s->B.vt && s->A.n == s->B.m &&
                 !dense_too_big(s, s->B.n) && (s->B.it != SPGEMM_INDEX_INT32 || s->B.n + 1 < INT32_MAX);
    memset(&crp, 0, sizeof crp);
    memset(&cci, 0, sizeof cci);
    memset(&cv, 0, sizeof cv);
    memset(&c, 0, sizeof c);
    pa = s->A;
    pb = s->B;
    memset(&pa.rp, 0, sizeof(buf_t) * 3);
    memset(&pb.rp, 0, sizeof(buf_t) * 3);
    pa.d = pb.d = NULL;
    pa.s_rp = S_PARP; pa.s_ci = S_PACI; pa.s_v = S_PAV;
    pb.s_rp = S_PBRP; pb.s_ci = S_PBCI; pb.s_v = S_PBV;
    pa.name = "A'";
    pb.name = "B'";
    pa.hasv = pb.hasv = 1;
    pa.null_empty = pb.null_empty = 0;
    if (!usable) {
        /* a fixed small product with repeated columns: A 2x3, B 3x2 */
        static const int64_t arp[3] = {0, 3, 5}, aci[5] = {2, 0, 2, 1, 1}, brp[4] = {0, 2, 3, 5}, bci[5] = {1, 0, 1, 0, 0};
        static const double av[5] = {1, 2, 3, 4, 5}, bv[5] = {1, -1, 2, 3, 0.5};
        ref_alloc(&pa.pr, 2, 3, 5, 1);
        ref_alloc(&pb.pr, 3, 2, 5, 1);
        memcpy(pa.pr.rp, arp, sizeof arp);
        memcpy(pa.pr.ci, aci, sizeof aci);
        memcpy(pa.pr.v, av, sizeof av);
        memcpy(pb.pr.rp, brp, sizeof brp);
        memcpy(pb.pr.ci, bci, sizeof bci);
        memcpy(pb.pr.v, bv, sizeof bv);
        pa.m = 2; pa.n = 3; pb.m = 3; pb.n = 2;
        pa.ot = pb.ot = s->A.ot;
        pa.it = pb.it = s->A.it;
        pa.vt = pb.vt = s->A.vt;
    } else {
        ref_copy(&pa.pr, &s->A.pr);
        ref_copy(&pb.pr, &s->B.pr);
    }
    tr("probe after %s: two-phase product of the legal A' and B' on the same handle:", after);
    tmat_materialize(&pa);
    tmat_materialize(&pb);
    trace_mat(&pa);
    trace_mat(&pb);
    ref_mul_memo(&pa.pr, &pb.pr, &c);
    buf_get(&crp, S_PCRP, ((size_t)pa.m + 1) * sizeof(int64_t));
    LIB(st, spgemm_symbolic(s->h, pa.d, pb.d, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64, 0, crp.p, &plan));
    if (st == SPGEMM_STATUS_SUCCESS) LIB(st, spgemm_plan_get_nnz(plan, &nnz));
    tr("  probe symbolic -> %d, nnz %lld (reference %lld)", (int)st, (long long)nnz, (long long)c.nnz);
    if (st != SPGEMM_STATUS_SUCCESS)
        fail("probe after %s: symbolic of valid inputs returned %d: %s", after, (int)st, spgemm_last_error(s->h));
    if (nnz != c.nnz) fail("probe after %s: nnz(C) %lld, expected %lld", after, (long long)nnz, (long long)c.nnz);
    buf_get(&cci, S_PCCI, (size_t)nnz * sizeof(int64_t));
    buf_get(&cv, S_PCV, (size_t)nnz * vsz(pa.vt));
    LIB(st, spgemm_numeric(s->h, plan, pa.d, pb.d, cci.p, cv.p));
    tr("  probe numeric -> %d", (int)st);
    if (st != SPGEMM_STATUS_SUCCESS)
        fail("probe after %s: numeric of valid inputs returned %d: %s", after, (int)st, spgemm_last_error(s->h));
    check_c("probe product", &c, SPGEMM_INDEX_INT64, crp.p, SPGEMM_INDEX_INT64, cci.p, pa.vt, cv.p, 0, s->o.sorted);
    LIB(st, spgemm_plan_destroy(plan));
    ref_free(&c);
    tmat_release(&pa);
    tmat_release(&pb);
    ref_free(&pa.pr);
    ref_free(&pb.pr);
    buf_put(&crp);
    buf_put(&cci);
    buf_put(&cv);
}

/* ---- options and queries ---- */

static void set_options(st_t *s, unsigned b) {
    spgemm_status_t st;
    int32_t got = -1;
    s->o.validation = b & 1;
    s->o.sorted = (b >> 1) & 1;
    s->o.alg = (int)((b >> 2) & 3);
    LIB(st, spgemm_set_validation(s->h, s->o.validation));
    if (st) fail("spgemm_set_validation: %d", (int)st);
    LIB(st, spgemm_set_sorted_output(s->h, s->o.sorted));
    if (st) fail("spgemm_set_sorted_output: %d", (int)st);
    LIB(st, spgemm_set_algorithm(s->h, s->o.alg));
    if (st) fail("spgemm_set_algorithm: %d", (int)st);
    LIB(st, spgemm_get_algorithm(s->h, &got));
    if (st || got != s->o.alg) fail("spgemm_get_algorithm: %d, %d", (int)st, (int)got);
    LIB(st, spgemm_get_validation(s->h, &got));
    if (st || got != s->o.validation) fail("spgemm_get_validation: %d, %d", (int)st, (int)got);
    LIB(st, spgemm_get_sorted_output(s->h, &got));
    if (st || got != s->o.sorted) fail("spgemm_get_sorted_output: %d, %d", (int)st, (int)got);
    tr("options: spgemm_set_validation(h, %d); spgemm_set_sorted_output(h, %d); spgemm_set_algorithm(h, SPGEMM_ALG_%s)",
       s->o.validation, s->o.sorted, ALGN[s->o.alg]);
}

static void set_threads(st_t *s, int t) {
    spgemm_status_t st;
    int32_t got = -1;
    if (t == s->o.threads) return;
    LIB(st, spgemm_set_num_threads(s->h, t));
    if (st) fail("spgemm_set_num_threads(%d): %d", t, (int)st);
    LIB(st, spgemm_get_num_threads(s->h, &got));
    if (st || got != t) fail("spgemm_get_num_threads: %d, %d", (int)st, (int)got);
    s->o.threads = t;
    tr("spgemm_set_num_threads(h, %d)", t);
}

static void query_matrices(st_t *s) {
    tmat_t *ts[2] = {&s->A, &s->B};
    int w;
    for (w = 0; w < 2; w++) {
        tmat_t *t = ts[w];
        int64_t m = -1, n = -1, nnz = -1, first = ld_idx(t->rp.p, t->ot, 0), last = ld_idx(t->rp.p, t->ot, t->m);
        int ot = -1, it = -1, vt = -1, base = -1;
        spgemm_status_t st;
        const void *rp = NULL, *ci = NULL, *v = NULL;
        (void)first;
        LIB(st, spgemm_matrix_get_info(t->d, &m, &n, &nnz, &ot, &it, &vt, &base));
        tr("spgemm_matrix_get_info(%s) -> %d", t->name, (int)st);
        if (t->ot == SPGEMM_INDEX_SIZE_T && last < 0) continue; /* beyond int64: either answer */
        if (last < t->base) {
            if (st != SPGEMM_STATUS_INVALID_STRUCTURE) fail("spgemm_matrix_get_info with last offset below base: %d", (int)st);
        } else if (st != SPGEMM_STATUS_SUCCESS || m != t->m || n != t->n || nnz != last - t->base || ot != t->ot ||
                   it != t->it || vt != t->vt || base != t->base) {
            fail("spgemm_matrix_get_info(%s): status %d, %lldx%lld nnz %lld", t->name, (int)st, (long long)m, (long long)n,
                 (long long)nnz);
        }
        LIB(st, spgemm_matrix_export_csr(t->d, &rp, &ci, &v));
        if (st || rp != t->rp.p) fail("spgemm_matrix_export_csr(%s): %d", t->name, (int)st);
    }
}

static void op_cache(st_t *s) {
    unsigned b = rd8(&s->rd);
    size_t max = (b & 1) ? 0 : ((size_t)1 << (b % 31)), got = 1, held = 1;
    spgemm_status_t st;
    LIB(st, spgemm_set_output_cache(s->h, max));
    if (st) fail("spgemm_set_output_cache: %d", (int)st);
    LIB(st, spgemm_get_output_cache(s->h, &got, &held));
    if (st || got != max || held > max) fail("spgemm_get_output_cache: %d, %zu, %zu", (int)st, got, held);
    tr("spgemm_set_output_cache(h, %zu)", max);
}

/* ---- worker threads ---- */

/*
 * Handle workers alive in this process: threads named spgemm-worker-N (/proc/self/task/N/comm);
 * -1 where that cannot be read. Other threads are not counted: rayon's global pool, which
 * the library starts by mistake (finding F6), lives as long as the process.
 */
static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL) {
        char path[64], comm[32] = "";
        FILE *f;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/comm", e->d_name);
        f = fopen(path, "r");
        if (f == NULL) continue; /* exited meanwhile */
        if (fgets(comm, sizeof comm, f) != NULL) n += strncmp(comm, "spgemm-worker", 13) == 0;
        fclose(f);
    }
    closedir(d);
    return n;
}

/*
 * spgemm_destroy returns before its worker threads have exited (finding F5,
 * ffi-tests/regressions.c); LeakSanitizer, which libFuzzer runs right after an input, then
 * sees an exiting worker's memory as leaked. Wait for them (2 s at most: a worker still
 * alive then is a leaked thread, and fails).
 */
static void wait_for_workers(int before) {
    struct timespec nap = {0, 100000};
    int i, n = thread_count();
    for (i = 0; n > before && before >= 0 && i < 20000; i++) {
        nanosleep(&nap, NULL);
        n = thread_count();
    }
    if (before >= 0 && n > before) fail("%d spgemm-worker threads still running 2 s after spgemm_destroy", n - before);
}

/* ---- one input ---- */

enum {
    OP_OPTIONS, OP_THREADS, OP_PROBLEM, OP_CORRUPT, OP_CORRUPT2, OP_REPAIR, OP_SYMBOLIC, OP_SYMBOLIC2,
    OP_NUMERIC, OP_NUMERIC2, OP_VALUES, OP_STRUCT_NUMERIC, OP_MULTIPLY, OP_SPMM, OP_SPMM_AN, OP_ANALYSIS,
    OP_RESTRUCT, OP_QUERY, OP_CACHE, OP_COUNT
};

static void st_init_mat(tmat_t *t, const char *name, int srp, int sci, int sv) {
    memset(t, 0, sizeof *t);
    t->name = name;
    t->s_rp = srp;
    t->s_ci = sci;
    t->s_v = sv;
}

static int g_inited = 0;

static void global_init(void) {
    long page = sysconf(_SC_PAGESIZE);
    size_t stride = SLOT_BYTES + (size_t)page;
    unsigned char *mem;
    int i;
    FILE *f;
    const char *e;
    if (g_inited) return;
    g_inited = 1;
    e = getenv("SPGEMM_FUZZ_STDERR");
    g_stderr_ignore = e && strcmp(e, "ignore") == 0;
    e = getenv("SPGEMM_FUZZ_AFTER_INTERNAL");
    g_stop_after_internal = e && strcmp(e, "stop") == 0;
    e = getenv("SPGEMM_FUZZ_TRACE");
    g_trace_all = e && *e && *e != '0';
    e = getenv("SPGEMM_FUZZ_MALLOC");
    g_use_malloc = e && *e && *e != '0';
    /* one thread by default: spgemm_create then starts one worker, not one per core */
    setenv("SPGEMM_NUM_THREADS", "1", 0);
    mem = (unsigned char *)mmap(NULL, stride * NSLOTS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) abort();
    for (i = 0; i < NSLOTS; i++) {
        g_slots[i] = mem + stride * (size_t)i;
        if (mprotect(g_slots[i] + SLOT_BYTES, (size_t)page, PROT_NONE) != 0) abort();
    }
    g_real_stderr = dup(2);
    g_real_stdout = dup(1);
    f = tmpfile();
    if (g_real_stderr < 0 || g_real_stdout < 0 || f == NULL) abort();
    g_cap_fd = dup(fileno(f));
    fclose(f);
    if (g_cap_fd < 0) abort();
#ifdef FUZZ_ASAN
    __sanitizer_set_report_fd((void *)(intptr_t)g_real_stderr);
#else
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGFPE, on_signal);
    signal(SIGILL, on_signal);
#endif
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    global_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    st_t s;
    spgemm_status_t st;
    int nops = 0, threads_before;
    unsigned b0;
    global_init();
    memset(&s, 0, sizeof s);
    g_trace_len = 0;
    g_trace[0] = '\0';
    s.rd.p = data;
    s.rd.n = size;
    st_init_mat(&s.A, "A", S_ARP, S_ACI, S_AV);
    st_init_mat(&s.B, "B", S_BRP, S_BCI, S_BV);
    threads_before = thread_count();
    tr("spgemm_create(&h); spgemm_set_backend(h, SPGEMM_BACKEND_CPU)  [%zu input bytes]", size);
    LIB(st, spgemm_create(&s.h));
    if (st) fail("spgemm_create: %d", (int)st);
    LIB(st, spgemm_set_backend(s.h, SPGEMM_BACKEND_CPU));
    if (st) fail("spgemm_set_backend(CPU): %d", (int)st);
    LIB(st, spgemm_get_num_threads(s.h, &s.o.threads));
    if (st) fail("spgemm_get_num_threads: %d", (int)st);
    b0 = rd8(&s.rd);
    set_options(&s, b0);
    set_threads(&s, 1 + (int)((b0 >> 4) % 3));
    new_problem(&s);
    while (rd_more(&s.rd) && nops++ < MAX_OPS) {
        unsigned op = rd8(&s.rd) % OP_COUNT;
        switch (op) {
        case OP_OPTIONS: set_options(&s, rd8(&s.rd)); break;
        case OP_THREADS: set_threads(&s, 1 + (int)(rd8(&s.rd) % 3)); break;
        case OP_PROBLEM: new_problem(&s); break;
        case OP_CORRUPT: case OP_CORRUPT2: corrupt(&s); break;
        case OP_REPAIR: repair(&s); break;
        case OP_SYMBOLIC: case OP_SYMBOLIC2: op_symbolic(&s); break;
        case OP_NUMERIC: case OP_NUMERIC2: op_numeric(&s, 0); break;
        case OP_VALUES: new_values(&s); break;
        case OP_STRUCT_NUMERIC: op_numeric(&s, 1); break;
        case OP_MULTIPLY: op_multiply(&s); break;
        case OP_SPMM: op_spmm(&s, 0); break;
        case OP_SPMM_AN: op_spmm(&s, 1); break;
        case OP_ANALYSIS: op_analysis(&s); break;
        case OP_RESTRUCT: restructure(&s); break;
        case OP_QUERY: query_matrices(&s); break;
        case OP_CACHE: op_cache(&s); break;
        default: break;
        }
    }
    plan_drop(&s);
    if (s.an) LIB(st, spgemm_spmm_analysis_destroy(s.an));
    ref_free(&s.an_s);
    tmat_release(&s.A);
    tmat_release(&s.B);
    ref_free(&s.A.pr);
    ref_free(&s.B.pr);
    memo_clear();
    buf_put(&s.crp);
    buf_put(&s.cci[0]);
    buf_put(&s.cci[1]);
    buf_put(&s.cv[0]);
    buf_put(&s.cv[1]);
    LIB(st, spgemm_destroy(s.h));
    if (st) fail("spgemm_destroy: %d", (int)st);
    wait_for_workers(threads_before);
    if (g_trace_all) dump_trace();
    return 0;
}

#ifdef SPGEMM_FUZZ_REPLAY
/* Replay without libFuzzer: runs each file (or each file of a directory) once. */
#include <sys/stat.h>

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;
    if (f == NULL) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (uint8_t *)xmalloc((size_t)(n > 0 ? n : 1));
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    if (getenv("SPGEMM_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_replay: %s (%ld bytes)\n", path, n);
    LLVMFuzzerTestOneInput(buf, (size_t)(n > 0 ? n : 0));
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    int i, count = 0, bad = 0;
    global_init();
    for (i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            while (d && (e = readdir(d)) != NULL) {
                char path[4096];
                if (e->d_name[0] == '.') continue;
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                bad += replay_file(path);
                count++;
            }
            if (d) closedir(d);
        } else {
            bad += replay_file(argv[i]);
            count++;
        }
    }
    /* a failing input aborts before this line, so reaching it means every input passed */
    printf("%d passed, %d failed\n", count - bad, bad);
    return bad != 0;
}
#endif

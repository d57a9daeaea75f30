/*
 * The layer's overhead measured inside one process: each repetition runs the anchors' MKL
 * driver sequence once through libspgemm_mkl (mkl_sparse_sp2m: NNZ_COUNT, FINALIZE_MULT,
 * FINALIZE_MULT again; FULL_MULT) and once through libspgemm's ABI (spgemm_symbolic,
 * spgemm_numeric twice; spgemm_multiply), alternating which goes first, so both see the same
 * machine state: on a shared machine the spread between separate processes is larger than
 * the overhead being measured. Prints one JSON line per stage with the medians and the
 * median of the per-repetition ratios layer / ABI. Values are checked equal.
 *
 *   layer_vs_abi A.mtx B.mtx|A [reps=21]     threads: MKL_NUM_THREADS (both sides)
 */
#include <mkl.h>
#include <spgemm.h>

#include "common.h"

#define CKM(call)                                                                              \
    do {                                                                                       \
        if ((call) != SPARSE_STATUS_SUCCESS) {                                                 \
            fprintf(stderr, "%s: %s\n", #call, spgemm_mkl_last_error());                       \
            exit(4);                                                                           \
        }                                                                                      \
    } while (0)
#define CKS(call)                                                                              \
    do {                                                                                       \
        if ((call) != SPGEMM_STATUS_SUCCESS) {                                                 \
            fprintf(stderr, "%s: %s\n", #call, spgemm_last_error(NULL));                       \
            exit(4);                                                                           \
        }                                                                                      \
    } while (0)

enum { SP2M, REUSE, FULL, NSTAGE };

static double sum_abs(const double *v, int64_t n) {
    double s = 0;
    for (int64_t k = 0; k < n; k++) s += fabs(v[k]);
    return s;
}

/* The layer: the driver's calls. */
static void run_layer(sparse_matrix_t a, sparse_matrix_t b, double t[NSTAGE], double *check) {
    struct matrix_descr g = {SPARSE_MATRIX_TYPE_GENERAL, SPARSE_FILL_MODE_FULL, SPARSE_DIAG_NON_UNIT};
    const sparse_operation_t n = SPARSE_OPERATION_NON_TRANSPOSE;
    sparse_matrix_t c = NULL;
    sparse_index_base_t base;
    MKL_INT rows, cols, *rs, *re, *ci;
    double *v, t0 = now_s(), t1, t2;
    CKM(mkl_sparse_sp2m(n, g, a, n, g, b, SPARSE_STAGE_NNZ_COUNT, &c));
    CKM(mkl_sparse_sp2m(n, g, a, n, g, b, SPARSE_STAGE_FINALIZE_MULT, &c));
    t1 = now_s();
    CKM(mkl_sparse_sp2m(n, g, a, n, g, b, SPARSE_STAGE_FINALIZE_MULT, &c));
    t2 = now_s();
    CKM(mkl_sparse_d_export_csr(c, &base, &rows, &cols, &rs, &re, &ci, &v));
    *check = sum_abs(v, re[rows - 1] - base);
    mkl_sparse_destroy(c);
    c = NULL;
    double t3 = now_s();
    CKM(mkl_sparse_sp2m(n, g, a, n, g, b, SPARSE_STAGE_FULL_MULT, &c));
    double t4 = now_s();
    mkl_sparse_destroy(c);
    t[SP2M] = t1 - t0;
    t[REUSE] = t2 - t1;
    t[FULL] = t4 - t3;
}

/* libspgemm alone, the same work through its ABI. */
static void run_abi(spgemm_handle_t *h, const spgemm_matrix_t *a, const spgemm_matrix_t *b, int m,
                    double t[NSTAGE], double *check) {
    spgemm_plan_t *plan;
    spgemm_matrix_t *c;
    int64_t nnz;
    double t0 = now_s(), t1, t2;
    int *rp = xmalloc(sizeof(int) * ((size_t)m + 1));
    CKS(spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, rp, &plan));
    CKS(spgemm_plan_get_nnz(plan, &nnz));
    int *ci = xmalloc(sizeof(int) * (size_t)nnz);
    double *v = xmalloc(sizeof(double) * (size_t)nnz);
    CKS(spgemm_numeric(h, plan, a, b, ci, v));
    t1 = now_s();
    CKS(spgemm_numeric(h, plan, a, b, ci, v));
    t2 = now_s();
    *check = sum_abs(v, nnz);
    spgemm_plan_destroy(plan);
    free(rp);
    free(ci);
    free(v);
    double t3 = now_s();
    CKS(spgemm_multiply(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, &c));
    double t4 = now_s();
    spgemm_matrix_destroy(c);
    t[SP2M] = t1 - t0;
    t[REUSE] = t2 - t1;
    t[FULL] = t4 - t3;
}

int main(int argc, char **argv) {
    static const char *const names[NSTAGE] = {"sp2m", "reuse", "sp2m_full"};
    if (argc < 3) {
        fprintf(stderr, "usage: %s A.mtx B.mtx|A [reps]\n", argv[0]);
        return 1;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 21;
    if (reps < 1) reps = 1;
    csr_t A, B;
    char nA[256], nB[256];
    read_mtx(argv[1], &A);
    int same = strcmp(argv[2], "A") == 0;
    if (same) B = A;
    else read_mtx(argv[2], &B);
    basename_noext(argv[1], nA, sizeof nA);
    if (same) snprintf(nB, sizeof nB, "%s", nA);
    else basename_noext(argv[2], nB, sizeof nB);

    sparse_matrix_t ha, hb;
    CKM(mkl_sparse_d_create_csr(&ha, SPARSE_INDEX_BASE_ZERO, A.m, A.n, A.rowptr, A.rowptr + 1, A.col, A.val));
    CKM(mkl_sparse_d_create_csr(&hb, SPARSE_INDEX_BASE_ZERO, B.m, B.n, B.rowptr, B.rowptr + 1, B.col, B.val));
    spgemm_handle_t *h;
    spgemm_matrix_t *a, *b;
    CKS(spgemm_create(&h));
    CKS(spgemm_set_num_threads(h, mkl_get_max_threads()));
    CKS(spgemm_matrix_create_csr(&a, A.m, A.n, SPGEMM_INDEX_INT32, A.rowptr, SPGEMM_INDEX_INT32, A.col,
                                 SPGEMM_VALUE_FLOAT64, A.val, SPGEMM_INDEX_BASE_ZERO));
    CKS(spgemm_matrix_create_csr(&b, B.m, B.n, SPGEMM_INDEX_INT32, B.rowptr, SPGEMM_INDEX_INT32, B.col,
                                 SPGEMM_VALUE_FLOAT64, B.val, SPGEMM_INDEX_BASE_ZERO));
    double *tl = xmalloc(sizeof(double) * NSTAGE * reps), *ta = xmalloc(sizeof(double) * NSTAGE * reps);
    double *ratio = xmalloc(sizeof(double) * reps), cl = 0, ca = 0;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up of both */
        double xl[NSTAGE], xa[NSTAGE];
        if (r & 1) {
            run_abi(h, a, b, A.m, xa, &ca);
            run_layer(ha, hb, xl, &cl);
        } else {
            run_layer(ha, hb, xl, &cl);
            run_abi(h, a, b, A.m, xa, &ca);
        }
        if (cl != ca) {
            fprintf(stderr, "layer and ABI differ: sum |C| %.17g vs %.17g\n", cl, ca);
            return 5;
        }
        for (int s = 0; r >= 0 && s < NSTAGE; s++) {
            tl[s * reps + r] = xl[s];
            ta[s * reps + r] = xa[s];
        }
    }
    for (int s = 0; s < NSTAGE; s++) {
        for (int r = 0; r < reps; r++) ratio[r] = tl[s * reps + r] / ta[s * reps + r];
        printf("{\"A\":\"%s\",\"B\":\"%s\",\"threads\":%d,\"stage\":\"%s\",\"reps\":%d,\"layer_s\":%.6g,"
               "\"abi_s\":%.6g,\"ratio\":%.4f,\"sumabsC\":%.17g}\n",
               nA, nB, mkl_get_max_threads(), names[s], reps, median(tl + s * reps, reps),
               median(ta + s * reps, reps), median(ratio, reps), cl);
    }
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    spgemm_destroy(h);
    mkl_sparse_destroy(ha);
    mkl_sparse_destroy(hb);
    return 0;
}

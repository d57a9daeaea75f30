/*
 * libspgemm through its own C ABI in exactly the sequence the peers' MKL driver
 * (anchors/src/mkl_spgemm.c) times, so that the driver built against libspgemm_mkl can be
 * compared with the library it calls and nothing else (scripts/bench_mkl_layer.sh):
 *   sp2m      : symbolic into a fresh row pointer (NNZ_COUNT) | fresh C arrays + numeric
 *               (FINALIZE_MULT) | numeric again on the same plan and arrays (reuse) | untimed,
 *               a pass over C's columns where the driver calls mkl_sparse_order
 *   sp2m_full : one spgemm_multiply, destroyed after each repetition (FULL_MULT)
 * Same reader (anchors' common.h), same repetitions (1 warm-up + reps, medians), same JSON
 * fields; sorted C and validation on, as the layer leaves them.
 *
 *   spgemm_seq A.mtx B.mtx|A [reps=5]      threads: SPGEMM_NUM_THREADS
 */
#include <spgemm.h>

#include "common.h"

#define CK(call)                                                                          \
    do {                                                                                  \
        spgemm_status_t s_ = (call);                                                      \
        if (s_ != SPGEMM_STATUS_SUCCESS) {                                                \
            fprintf(stderr, "%s: %s\n", #call, spgemm_last_error(NULL));                  \
            exit(4);                                                                      \
        }                                                                                 \
    } while (0)

static void sums(const int *rp, const double *v, int m, int64_t *nnz, double *s, double *sa) {
    *nnz = rp[m];
    *s = *sa = 0;
    for (int64_t k = 0; k < rp[m]; k++) {
        *s += v[k];
        *sa += fabs(v[k]);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s A.mtx B.mtx|A [reps]\n", argv[0]);
        return 1;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 5;
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
    spgemm_handle_t *h;
    spgemm_matrix_t *a, *b;
    int32_t threads;
    CK(spgemm_create(&h));
    CK(spgemm_get_num_threads(h, &threads));
    CK(spgemm_matrix_create_csr(&a, A.m, A.n, SPGEMM_INDEX_INT32, A.rowptr, SPGEMM_INDEX_INT32, A.col,
                                SPGEMM_VALUE_FLOAT64, A.val, SPGEMM_INDEX_BASE_ZERO));
    CK(spgemm_matrix_create_csr(&b, B.m, B.n, SPGEMM_INDEX_INT32, B.rowptr, SPGEMM_INDEX_INT32, B.col,
                                SPGEMM_VALUE_FLOAT64, B.val, SPGEMM_INDEX_BASE_ZERO));
    double *ts = xmalloc(sizeof(double) * reps), *tn = xmalloc(sizeof(double) * reps),
           *tr = xmalloc(sizeof(double) * reps);
    result_t res;
    memset(&res, 0, sizeof res);
    res.lib = "libspgemm-abi";
    res.A = nA;
    res.B = nB;
    res.threads = threads;
    res.m = A.m;
    res.n = B.n;
    res.k = A.n;
    res.nnzA = A.nnz;
    res.nnzB = B.nnz;
    res.mults = spgemm_mults(&A, &B);
    res.extra = "";
    int64_t nnzc = 0;
    double s = 0, sa = 0;
    for (int it = -1; it < reps; it++) {
        spgemm_plan_t *plan;
        int64_t nnz;
        double t0 = now_s();
        int *rp = xmalloc(sizeof(int) * ((size_t)A.m + 1));
        CK(spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, rp, &plan));
        double t1 = now_s();
        CK(spgemm_plan_get_nnz(plan, &nnz));
        int *ci = xmalloc(sizeof(int) * (size_t)nnz);
        double *v = xmalloc(sizeof(double) * (size_t)nnz);
        CK(spgemm_numeric(h, plan, a, b, ci, v));
        double t2 = now_s();
        CK(spgemm_numeric(h, plan, a, b, ci, v));
        double t3 = now_s();
        if (it >= 0) {
            ts[it] = t1 - t0;
            tn[it] = t2 - t1;
            tr[it] = t3 - t2;
        }
        if (it == reps - 1) sums(rp, v, A.m, &nnzc, &s, &sa);
        /* the driver calls mkl_sparse_order here (untimed): on libspgemm's sorted C the layer's
         * order is one pass over C's columns, whose cache footprint the next symbolic feels */
        int64_t unsorted = 0;
        for (int i = 0; i < A.m; i++)
            for (int k = rp[i] + 1; k < rp[i + 1]; k++) unsorted += ci[k] <= ci[k - 1];
        if (unsorted) fprintf(stderr, "C has %lld unsorted pairs\n", (long long)unsorted);
        spgemm_plan_destroy(plan);
        free(rp);
        free(ci);
        free(v);
    }
    res.alg = "sp2m";
    res.symbolic_s = median(ts, reps);
    res.numeric_s = median(tn, reps);
    res.total_s = res.symbolic_s + res.numeric_s;
    res.reuse_s = median(tr, reps);
    res.nnzC = nnzc;
    res.sumC = s;
    res.sumabsC = sa;
    print_result(&res);
    for (int it = -1; it < reps; it++) {
        spgemm_matrix_t *c;
        double t0 = now_s();
        CK(spgemm_multiply(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, &c));
        double t1 = now_s();
        if (it >= 0) tn[it] = t1 - t0;
        spgemm_matrix_destroy(c);
    }
    res.alg = "sp2m_full";
    res.symbolic_s = res.numeric_s = res.reuse_s = NAN;
    res.total_s = median(tn, reps);
    print_result(&res);
    spgemm_matrix_destroy(a);
    spgemm_matrix_destroy(b);
    spgemm_destroy(h);
    return 0;
}

/*
 * libspgemm quickstart in C: C = A*B for small 0-based CSR matrices with int32 indices,
 * in two phases (symbolic, numeric), then numeric reuse after A's values change. Checks C
 * against a dense product; exit status 1 on a wrong answer.
 *
 * Build (after `make install PREFIX=$HOME/opt/spgemm`), on one line:
 *   cc quickstart.c $(pkg-config --cflags --libs spgemm)
 *      -Wl,-rpath,$(pkg-config --variable=libdir spgemm) -o quickstart
 * with PKG_CONFIG_PATH=$HOME/opt/spgemm/lib/pkgconfig.
 */
#include <math.h>
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

enum { M = 3, K = 4, N = 2 };

/* dense[i][j] += v for each stored entry of an m x n 0-based int32 CSR matrix. */
static void to_dense(int m, int n, const int32_t *rp, const int32_t *ci, const double *v,
                     double *dense) {
    for (int i = 0; i < m * n; ++i) dense[i] = 0.0;
    for (int i = 0; i < m; ++i)
        for (int32_t k = rp[i]; k < rp[i + 1]; ++k) dense[i * n + ci[k]] += v[k];
}

int main(void) {
    /* A (3 x 4) and B (4 x 2). */
    int32_t a_rp[M + 1] = {0, 2, 3, 5}, a_ci[5] = {0, 3, 1, 0, 2};
    double a_v[5] = {1.0, 2.0, 3.0, 4.0, 5.0};
    int32_t b_rp[K + 1] = {0, 1, 3, 4, 5}, b_ci[5] = {1, 0, 1, 0, 1};
    double b_v[5] = {1.0, -1.0, 2.0, 0.5, 3.0};
    spgemm_handle_t *h = NULL;
    spgemm_matrix_t *a = NULL, *b = NULL;
    spgemm_plan_t *plan = NULL;
    int32_t c_rp[M + 1];
    int64_t nnz = 0;

    CALL(NULL, spgemm_create(&h));
    /* Descriptors over the arrays above: nothing is copied. */
    CALL(NULL, spgemm_matrix_create_csr(&a, M, K, SPGEMM_INDEX_INT32, a_rp, SPGEMM_INDEX_INT32,
                                        a_ci, SPGEMM_VALUE_FLOAT64, a_v, SPGEMM_INDEX_BASE_ZERO));
    CALL(NULL, spgemm_matrix_create_csr(&b, K, N, SPGEMM_INDEX_INT32, b_rp, SPGEMM_INDEX_INT32,
                                        b_ci, SPGEMM_VALUE_FLOAT64, b_v, SPGEMM_INDEX_BASE_ZERO));

    /* Symbolic phase: C's row offsets and nnz(C); then allocate C. */
    CALL(h, spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                            SPGEMM_INDEX_BASE_ZERO, c_rp, &plan));
    CALL(NULL, spgemm_plan_get_nnz(plan, &nnz));
    int32_t *c_ci = malloc((size_t)nnz * sizeof *c_ci);
    double *c_v = malloc((size_t)nnz * sizeof *c_v);
    if (!c_ci || !c_v) return 1;

    for (int round = 0; round < 2; ++round) {
        /* Numeric phase; round 1 reuses the plan after A's values changed. */
        CALL(h, spgemm_numeric(h, plan, a, b, c_ci, c_v));
        double ad[M * K], bd[K * N], cd[M * N];
        to_dense(M, K, a_rp, a_ci, a_v, ad);
        to_dense(K, N, b_rp, b_ci, b_v, bd);
        to_dense(M, N, c_rp, c_ci, c_v, cd);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double s = 0.0;
                for (int l = 0; l < K; ++l) s += ad[i * K + l] * bd[l * N + j];
                if (fabs(s - cd[i * N + j]) > 1e-12 * (1.0 + fabs(s))) {
                    fprintf(stderr, "quickstart: round %d: C(%d,%d) = %g, expected %g\n", round,
                            i, j, cd[i * N + j], s);
                    return 1;
                }
            }
        for (int k = 0; k < 5; ++k) a_v[k] *= 2.0;
    }
    printf("quickstart: C = A*B has %lld entries, matches the dense product\n", (long long)nnz);

    free(c_ci);
    free(c_v);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(b);
    spgemm_matrix_destroy(a);
    spgemm_destroy(h);
    return 0;
}

/*
 * libspgemm demo: C = A*A for a 7-point 3D Laplacian on an n^3 grid (default n = 64),
 * one symbolic phase, then numeric phases with changed values of A (structure reuse, as in
 * a multigrid setup that recomputes Galerkin products). Prints nnz(C), the time of each
 * phase, GFLOP/s (2 * multiplications / time) and a checksum, and checks each round's
 * checksum against an independent prediction (scaling A by s scales C by s^2).
 *
 * Usage: laplace_demo [n] [rounds]     threads: SPGEMM_NUM_THREADS (default: all cores)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spgemm.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHECK(call)                                                                   \
    do {                                                                              \
        spgemm_status_t s_ = (call);                                                  \
        if (s_ != SPGEMM_STATUS_SUCCESS) {                                            \
            fprintf(stderr, "%s failed: %s (%s)\n", #call, spgemm_status_string(s_),  \
                    spgemm_last_error(h));                                            \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 64;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 2 || rounds < 1) {
        fprintf(stderr, "usage: %s [n >= 2] [rounds >= 1]\n", argv[0]);
        return 2;
    }
    int64_t m = (int64_t)n * n * n;
    int32_t *rp = malloc((size_t)(m + 1) * sizeof *rp);
    int32_t *ci = malloc((size_t)(7 * m) * sizeof *ci);
    double *va = malloc((size_t)(7 * m) * sizeof *va);
    double *base_va = malloc((size_t)(7 * m) * sizeof *base_va);
    if (!rp || !ci || !va || !base_va) return 1;
    int64_t nnz = 0;
    rp[0] = 0;
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                int64_t row = ((int64_t)z * n + y) * n + x;
                const int dz[7] = {-1, 0, 0, 0, 0, 0, 1}, dy[7] = {0, -1, 0, 0, 0, 1, 0},
                          dx[7] = {0, 0, -1, 0, 1, 0, 0};
                for (int s = 0; s < 7; s++) {
                    int xx = x + dx[s], yy = y + dy[s], zz = z + dz[s];
                    if (xx < 0 || yy < 0 || zz < 0 || xx >= n || yy >= n || zz >= n) continue;
                    ci[nnz] = (int32_t)(((int64_t)zz * n + yy) * n + xx);
                    va[nnz] = (s == 3) ? 6.0 : -1.0;
                    base_va[nnz] = va[nnz];
                    nnz++;
                }
                rp[row + 1] = (int32_t)nnz;
            }

    spgemm_handle_t *h = NULL;
    if (spgemm_create(&h) != SPGEMM_STATUS_SUCCESS) {
        fprintf(stderr, "spgemm_create failed: %s\n", spgemm_last_error(NULL));
        return 1;
    }
    int32_t threads = 0;
    CHECK(spgemm_get_num_threads(h, &threads));
    spgemm_matrix_t *A = NULL;
    CHECK(spgemm_matrix_create_csr(&A, m, m, SPGEMM_INDEX_INT32, rp, SPGEMM_INDEX_INT32, ci,
                                   SPGEMM_VALUE_FLOAT64, va, SPGEMM_INDEX_BASE_ZERO));

    int32_t *crp = malloc((size_t)(m + 1) * sizeof *crp);
    if (!crp) return 1;
    spgemm_plan_t *plan = NULL;
    double t0 = now();
    CHECK(spgemm_symbolic(h, A, A, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ZERO,
                          crp, &plan));
    double t_sym = now() - t0;
    int64_t cnnz = 0, mults = 0;
    CHECK(spgemm_plan_get_nnz(plan, &cnnz));
    CHECK(spgemm_plan_get_info(plan, NULL, NULL, &mults));
    int32_t *cci = malloc((size_t)(cnnz > 0 ? cnnz : 1) * sizeof *cci);
    double *cva = malloc((size_t)(cnnz > 0 ? cnnz : 1) * sizeof *cva);
    if (!cci || !cva) return 1;

    printf("libspgemm demo: C = A*A, A = 7-point 3D Laplacian on a %d^3 grid, %d threads\n", n, threads);
    printf("A: %lld x %lld, nnz(A) = %lld; nnz(C) = %lld, multiplications = %lld\n", (long long)m,
           (long long)m, (long long)nnz, (long long)cnnz, (long long)mults);
    printf("symbolic: %.4f s\n", t_sym);

    double first_sum = 0.0;
    int failed = 0;
    for (int r = 0; r < rounds; r++) {
        double s = 1.0 + 0.25 * r; /* a time-dependent coefficient: A_r = s * A_0 */
        for (int64_t p = 0; p < nnz; p++) va[p] = s * base_va[p];
        t0 = now();
        CHECK(spgemm_numeric(h, plan, A, A, cci, cva));
        double t_num = now() - t0;
        double sum = 0.0, sumabs = 0.0;
        for (int64_t p = 0; p < cnnz; p++) {
            sum += cva[p];
            sumabs += fabs(cva[p]);
        }
        if (r == 0) first_sum = sumabs;
        double predicted = first_sum * s * s;
        int ok = fabs(sumabs - predicted) <= 1e-12 * predicted;
        failed |= !ok;
        printf("numeric %s %d: %.4f s, %.2f GFLOP/s, sum(C) = %.6g, sum|C| = %.6g (%s)\n",
               r == 0 ? "first" : "reuse", r, t_num, 2.0 * (double)mults / t_num / 1e9, sum, sumabs,
               ok ? "matches s^2 * sum|C_0|" : "MISMATCH");
    }
    /* Spot check one interior row against a direct computation of (A*A)(i, i) = s^2 * 42. */
    {
        int64_t i = ((int64_t)(n / 2) * n + n / 2) * n + n / 2;
        double s = 1.0 + 0.25 * (rounds - 1), diag = 0.0;
        for (int32_t p = crp[i]; p < crp[i + 1]; p++)
            if (cci[p] == i) diag = cva[p];
        int ok = fabs(diag - 42.0 * s * s) <= 1e-12 * 42.0 * s * s;
        failed |= !ok;
        printf("check: C(%lld,%lld) = %.6g, expected %.6g (%s)\n", (long long)i, (long long)i, diag,
               42.0 * s * s, ok ? "ok" : "MISMATCH");
    }
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(A);
    spgemm_destroy(h);
    free(rp); free(ci); free(va); free(base_va); free(crp); free(cci); free(cva);
    return failed;
}

/*
 * Distributed SpMM from C under mpirun: Y = A*X for the 1D Laplacian tridiag(-1, 2, -1) of
 * order n, rows in contiguous blocks over the ranks (as PETSc's ownership ranges), CSR with
 * GLOBAL column indices, X with k columns row-major. The communicator goes to the library
 * as MPI_Comm_c2f(comm). The plan is reused for a second product with new X. Each rank
 * checks its rows of Y; exit status 1 on a wrong answer.
 *
 *   mpicc dist_spmm.c $(pkg-config --cflags --libs spgemm) -o dist_spmm   # library built with `mpi`
 *   mpirun -np 4 ./dist_spmm
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spgemm.h"

#define CHECK(call)                                                                      \
    do {                                                                                 \
        spgemm_status_t s_ = (call);                                                     \
        if (s_ != SPGEMM_STATUS_SUCCESS) {                                               \
            fprintf(stderr, "rank %d: %s: %s\n", me, #call, spgemm_last_error(h));        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)

int main(int argc, char **argv) {
    const int64_t n = 1000, k = 4;
    int me, np, round, bad = 0, any_bad = 0;
    int64_t first, nloc, i, j, q = 0, pr = 0, pc = 0, foot = 0, xr = 0, yr = 0;
    int32_t alg = 0, vt = 0;
    double pred = 0;
    spgemm_handle_t *h = NULL;
    spgemm_dist_matrix_t *a = NULL;
    spgemm_dist_plan_t *plan = NULL;
    int64_t *rowptr, *cols;
    double *vals, *x, *y;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    first = me * n / np;
    nloc = (me + 1) * n / np - first;
    rowptr = malloc(sizeof *rowptr * (size_t)(nloc + 1));
    cols = malloc(sizeof *cols * (size_t)(3 * nloc + 1));
    vals = malloc(sizeof *vals * (size_t)(3 * nloc + 1));
    x = malloc(sizeof *x * (size_t)(nloc * k + 1));
    y = malloc(sizeof *y * (size_t)(nloc * k + 1));
    rowptr[0] = 0;
    for (i = first; i < first + nloc; i++) {
        for (j = i - 1; j <= i + 1; j++) {
            if (j < 0 || j >= n) continue;
            cols[q] = j;
            vals[q++] = i == j ? 2.0 : -1.0;
        }
        rowptr[i - first + 1] = q;
    }

    CHECK(spgemm_create(&h));
    CHECK(spgemm_set_num_threads(h, 1));
    CHECK(spgemm_dist_matrix_create_csr(h, (int)MPI_Comm_c2f(MPI_COMM_WORLD), n, n, first, nloc,
                                        -1, 0, SPGEMM_INDEX_INT64, rowptr, SPGEMM_INDEX_INT64,
                                        cols, SPGEMM_VALUE_FLOAT64, vals,
                                        SPGEMM_INDEX_BASE_ZERO, &a));
    CHECK(spgemm_dist_spmm_plan(h, a, k, SPGEMM_LAYOUT_ROW_MAJOR, SPGEMM_DIST_ALG_AUTO, 0, 0, 0,
                                &plan));
    CHECK(spgemm_dist_plan_get_info(plan, &alg, &pr, &pc, &foot, &pred, &vt, &xr, &yr));
    for (round = 1; round <= 2; round++) {
        /* X(i, c) = (i + 1) * (c + round): (A X)(i) = 0 except the last row, (n + 1)(c + round). */
        for (i = 0; i < nloc; i++)
            for (j = 0; j < k; j++) x[i * k + j] = (double)(first + i + 1) * (double)(j + round);
        CHECK(spgemm_dist_spmm(h, plan, 1.0, x, k, 0.0, y, k));
        for (i = 0; i < nloc; i++)
            for (j = 0; j < k; j++) {
                double want = first + i == n - 1 ? (double)(n + 1) * (double)(j + round) : 0.0;
                if (fabs(y[i * k + j] - want) > 1e-9) bad = 1;
            }
    }
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("dist_spmm (C): %d ranks, algorithm %d on a %lld x %lld grid, %lld bytes on rank 0: %s\n",
               np, (int)alg, (long long)pr, (long long)pc, (long long)foot,
               any_bad ? "WRONG" : "Y = A*X matches, twice");
    CHECK(spgemm_dist_plan_destroy(plan));
    CHECK(spgemm_dist_matrix_destroy(a));
    CHECK(spgemm_destroy(h));
    free(rowptr), free(cols), free(vals), free(x), free(y);
    MPI_Finalize();
    return any_bad;
}

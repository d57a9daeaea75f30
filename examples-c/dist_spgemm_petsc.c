/*
 * Distributed SpGEMM with PETSc's MPIAIJ layout: each rank owns a contiguous range of rows
 * [rstart, rend) (what MatGetOwnershipRange returns) and a range of columns [cstart, cend)
 * (MatGetOwnershipRangeColumn), and hands its rows over in CSR with GLOBAL column indices
 * (the diagonal and off-diagonal blocks of MPIAIJ merged, as MatGetRow gives them). The
 * matrices stay the caller's arrays; the library keeps a plan.
 *
 * A is the 5-point Laplacian on an nx x nx grid, P aggregates 2 x 2 cells. The program forms
 *   C  = A * A            (MatMatMult(A, A, MAT_INITIAL_MATRIX, ...)),
 *   Ac = P^T * A * P      (MatPtAP(A, P, MAT_INITIAL_MATRIX, ...)),
 * then changes A's values and recomputes both with the same plans (MAT_REUSE_MATRIX), and
 * checks row sums against the exact ones (C's: (A*1) times A's row; Ac's: sums of A
 * over pairs of aggregates). Prints one line per rank count on rank 0.
 *
 *   mpicc -Iinclude examples-c/dist_spgemm_petsc.c -Ltarget/mpi/release -lspgemm -o ex
 *   mpirun -np 4 ./ex
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spgemm.h"

#define TRY(call)                                                                         \
    do {                                                                                  \
        spgemm_status_t s_ = (call);                                                      \
        if (s_ != SPGEMM_STATUS_SUCCESS) {                                                \
            fprintf(stderr, "%s failed: %s\n", #call, spgemm_last_error(h));              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                 \
        }                                                                                 \
    } while (0)

static spgemm_handle_t *h;

/* This rank's rows in CSR with global columns, and the distributed matrix over them. */
typedef struct {
    int64_t rstart, rend, cstart, cend;
    int64_t *rowptr, *cols;
    double *vals;
    spgemm_dist_matrix_t *m;
} Rows;

static void share(int64_t n, int rank, int size, int64_t *start, int64_t *end) {
    *start = n * rank / size;
    *end = n * (rank + 1) / size;
}

int main(int argc, char **argv) {
    const int64_t nx = 60, n = nx * nx, ncx = nx / 2, nc = ncx * ncx;
    int rank, size, f, round;
    int64_t i, e, r;
    Rows A, P;
    spgemm_dist_spgemm_plan_t *mm = NULL, *ptap = NULL;
    int64_t *c_rowptr, *ac_rowptr, c_nnz, ac_nnz;
    int64_t *c_cols, *ac_cols;
    double *c_vals, *ac_vals, err = 0, scale = 1.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    f = (int)MPI_Comm_c2f(MPI_COMM_WORLD);
    TRY(spgemm_create(&h));
    TRY(spgemm_set_num_threads(h, 1));

    /* A: 5-point Laplacian, rows of this rank's ownership range. */
    share(n, rank, size, &A.rstart, &A.rend);
    A.cstart = A.rstart, A.cend = A.rend;
    A.rowptr = malloc(sizeof(int64_t) * (size_t)(A.rend - A.rstart + 1));
    A.cols = malloc(sizeof(int64_t) * (size_t)(5 * (A.rend - A.rstart) + 1));
    A.vals = malloc(sizeof(double) * (size_t)(5 * (A.rend - A.rstart) + 1));
    e = 0;
    A.rowptr[0] = 0;
    for (r = A.rstart; r < A.rend; r++) {
        int64_t x = r % nx, y = r / nx;
        int64_t nb[5] = {r - nx, r - 1, r, r + 1, r + nx};
        int ok[5] = {y > 0, x > 0, 1, x < nx - 1, y < nx - 1};
        for (i = 0; i < 5; i++)
            if (ok[i]) {
                A.cols[e] = nb[i];
                A.vals[e++] = nb[i] == r ? 4.0 : -1.0;
            }
        A.rowptr[r - A.rstart + 1] = e;
    }
    TRY(spgemm_dist_matrix_create_csr(h, f, n, n, A.rstart, A.rend - A.rstart, A.cstart,
                                      A.cend - A.cstart, SPGEMM_INDEX_INT64, A.rowptr,
                                      SPGEMM_INDEX_INT64, A.cols, SPGEMM_VALUE_FLOAT64, A.vals,
                                      SPGEMM_INDEX_BASE_ZERO, &A.m));
    /* P: n x nc, one entry per row (the 2 x 2 aggregate of the point). */
    P.rstart = A.rstart, P.rend = A.rend;
    share(nc, rank, size, &P.cstart, &P.cend);
    P.rowptr = malloc(sizeof(int64_t) * (size_t)(P.rend - P.rstart + 1));
    P.cols = malloc(sizeof(int64_t) * (size_t)(P.rend - P.rstart + 1));
    P.vals = malloc(sizeof(double) * (size_t)(P.rend - P.rstart + 1));
    for (r = P.rstart; r < P.rend; r++) {
        P.rowptr[r - P.rstart] = r - P.rstart;
        P.cols[r - P.rstart] = (r / nx / 2) * ncx + (r % nx) / 2;
        P.vals[r - P.rstart] = 1.0;
    }
    P.rowptr[P.rend - P.rstart] = P.rend - P.rstart;
    TRY(spgemm_dist_matrix_create_csr(h, f, n, nc, P.rstart, P.rend - P.rstart, P.cstart,
                                      P.cend - P.cstart, SPGEMM_INDEX_INT64, P.rowptr,
                                      SPGEMM_INDEX_INT64, P.cols, SPGEMM_VALUE_FLOAT64, P.vals,
                                      SPGEMM_INDEX_BASE_ZERO, &P.m));

    /* "MAT_INITIAL_MATRIX": the symbolic phases (row offsets of this rank's rows). */
    c_rowptr = malloc(sizeof(int64_t) * (size_t)(A.rend - A.rstart + 1));
    ac_rowptr = malloc(sizeof(int64_t) * (size_t)(P.cend - P.cstart + 1));
    TRY(spgemm_dist_spgemm_symbolic(h, SPGEMM_OPERATION_NON_TRANSPOSE, A.m, A.m, SPGEMM_INDEX_INT64,
                                    SPGEMM_INDEX_INT64, SPGEMM_INDEX_BASE_ZERO, c_rowptr, &mm));
    TRY(spgemm_dist_rap_symbolic(h, SPGEMM_OPERATION_TRANSPOSE, P.m, A.m, P.m, SPGEMM_INDEX_INT64,
                                 SPGEMM_INDEX_INT64, SPGEMM_INDEX_BASE_ZERO, ac_rowptr, &ptap));
    TRY(spgemm_dist_spgemm_plan_get_info(mm, NULL, NULL, NULL, &c_nnz, NULL, NULL));
    TRY(spgemm_dist_spgemm_plan_get_info(ptap, NULL, NULL, NULL, &ac_nnz, NULL, NULL));
    c_cols = malloc(sizeof(int64_t) * (size_t)(c_nnz + 1));
    c_vals = malloc(sizeof(double) * (size_t)(c_nnz + 1));
    ac_cols = malloc(sizeof(int64_t) * (size_t)(ac_nnz + 1));
    ac_vals = malloc(sizeof(double) * (size_t)(ac_nnz + 1));

    for (round = 0; round < 3; round++) {
        /* The numeric phases ("MAT_REUSE_MATRIX" after the first round). */
        TRY(spgemm_dist_spgemm_numeric(h, mm, A.m, A.m, NULL, c_cols, c_vals));
        TRY(spgemm_dist_spgemm_numeric(h, ptap, P.m, A.m, P.m, ac_cols, ac_vals));
        /* Row sums of C = A*A: A*(A*1); A*1 is 4 - (neighbours) per point, scaled twice. */
        for (r = A.rstart; r < A.rend; r++) {
            double s = 0, want = 0;
            for (e = c_rowptr[r - A.rstart]; e < c_rowptr[r - A.rstart + 1]; e++) s += c_vals[e];
            for (e = A.rowptr[r - A.rstart]; e < A.rowptr[r - A.rstart + 1]; e++) {
                int64_t c = A.cols[e], x = c % nx, y = c / nx;
                double rowsum = scale * (4.0 - (x > 0) - (x < nx - 1) - (y > 0) - (y < nx - 1));
                want += A.vals[e] * rowsum;
            }
            err = fmax(err, fabs(s - want));
        }
        /* Ac's entries sum to the sum of all of A's entries in the aggregates' rows. */
        {
            double s = 0, want = 0, all[2];
            for (e = 0; e < ac_nnz; e++) s += ac_vals[e];
            for (e = 0; e < A.rowptr[A.rend - A.rstart]; e++) want += A.vals[e];
            all[0] = s, all[1] = want;
            MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            err = fmax(err, fabs(all[0] - all[1]));
        }
        /* New values for the next setup (same structure). */
        for (e = 0; e < A.rowptr[A.rend - A.rstart]; e++) A.vals[e] *= 1.5;
        scale *= 1.5;
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("dist_spgemm_petsc: %d ranks, C = A*A and Ac = P^T*A*P on a %lld x %lld grid, "
               "3 rounds with one plan each: max error %.2e\n",
               size, (long long)nx, (long long)nx, err);
    TRY(spgemm_dist_spgemm_plan_destroy(mm));
    TRY(spgemm_dist_spgemm_plan_destroy(ptap));
    TRY(spgemm_dist_matrix_destroy(A.m));
    TRY(spgemm_dist_matrix_destroy(P.m));
    TRY(spgemm_destroy(h));
    free(A.rowptr), free(A.cols), free(A.vals), free(P.rowptr), free(P.cols), free(P.vals);
    free(c_rowptr), free(c_cols), free(c_vals), free(ac_rowptr), free(ac_cols), free(ac_vals);
    MPI_Finalize();
    return err < 1e-9 ? 0 : 1;
}

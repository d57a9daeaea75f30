/*
 * What the MPI tests of the C ABI share (dist_spmm.c, dist_spgemm.c): the agreed-status
 * check, a global CSR matrix and its random generator's state, and the uneven row blocks.
 * Include after "../check.h"; each test defines its own generator of matrices.
 */
#ifndef FFI_TESTS_MPI_DIST_COMMON_H
#define FFI_TESTS_MPI_DIST_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

/* The status every rank got must be the same, and `want`. */
#define CHECK_ALL(h, call, want)                                                  \
    do {                                                                          \
        spgemm_status_t s_ = (call);                                              \
        int lo_ = s_, hi_ = s_;                                                   \
        MPI_Allreduce(MPI_IN_PLACE, &lo_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);   \
        MPI_Allreduce(MPI_IN_PLACE, &hi_, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);   \
        CHECK(lo_ == hi_);                                                        \
        CHECK_STATUS(h, s_, want);                                                \
    } while (0)

/* A global m x n CSR matrix (int64, base 0), every rank holding the same one. */
typedef struct {
    int64_t m, n, nnz;
    int64_t *rowptr;
    int64_t *cols;
    double *vals;
} Global;

/* One linear congruential stream, so every rank generates the same matrices. */
static uint64_t rng_state;
static uint64_t rnd(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng_state >> 33;
}

static void free_global(Global *g) {
    free(g->rowptr);
    free(g->cols);
    free(g->vals);
}

/* Uneven blocks: rank r has weight r + 1, except rank 1 at 3 or more ranks (no rows). */
static int64_t weight(int r, int p) { return (p >= 3 && r == 1) ? 0 : r + 1; }
static int64_t block_start(int64_t total, int q, int p) {
    int64_t before = 0, all = 0;
    int r;
    for (r = 0; r < p; r++) {
        if (r < q) before += weight(r, p);
        all += weight(r, p);
    }
    return total * before / all;
}
static int64_t block_len(int64_t total, int q, int p) {
    return block_start(total, q + 1, p) - block_start(total, q, p);
}

#endif

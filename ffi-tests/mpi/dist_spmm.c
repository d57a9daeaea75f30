/*
 * Distributed SpMM through the C ABI under mpirun (any rank count): the communicator is
 * passed as MPI_Comm_c2f(comm). Each rank builds the same global matrices, owns an uneven
 * block of rows (some ranks own none at 3 and 4 ranks), and every algorithm's Y is
 * compared with the serial spgemm_spmm of the whole matrix on every rank: bitwise where
 * the summation order is the serial one (one rank; sA-1.5D on a p x 1 grid; 1D-halo;
 * alpha = 0),
 * else within 1e-12 (double) / 1e-5 (float) of sum |alpha a x| + |beta y|. Errors made on
 * one rank only must come back with the same status on every rank. Rank 0 prints the
 * checks of all ranks together as "N passed, M failed".
 *
 *   mpicc -Iinclude ffi-tests/mpi/dist_spmm.c -Ltarget/mpi/release -lspgemm -lm
 *   mpirun -np 4 ./a.out
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>

#include "../check.h"
#include "dist_common.h"

static int rank_, nranks_;

/* Every rank got the same status, and not success. */
#define CHECK_ALL_FAIL(h, call)                                                   \
    do {                                                                          \
        spgemm_status_t s_ = (call);                                              \
        int lo_ = s_, hi_ = s_;                                                   \
        MPI_Allreduce(MPI_IN_PLACE, &lo_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);   \
        MPI_Allreduce(MPI_IN_PLACE, &hi_, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);   \
        CHECK(lo_ == hi_);                                                        \
        CHECK(s_ != SPGEMM_STATUS_SUCCESS);                                       \
        if (getenv("FFI_TESTS_VERBOSE") && rank_ == 0)                            \
            fprintf(stderr, "  %s: %s\n", #call, spgemm_last_error(h));          \
    } while (0)

/* A global m x n CSR matrix with power-law-ish rows (row i has about n / (1 + i % 17)
 * entries, some rows empty), unsorted columns, one duplicate per few rows. */
static Global make_global(int64_t m, int64_t n, uint64_t seed) {
    Global g;
    int64_t i, cap = 0;
    g.m = m;
    g.n = n;
    g.rowptr = malloc(sizeof(int64_t) * (size_t)(m + 1));
    for (i = 0; i < m; i++) cap += n / (1 + i % 17) / 3 + 2;
    g.cols = malloc(sizeof(int64_t) * (size_t)(cap + 1));
    g.vals = malloc(sizeof(double) * (size_t)(cap + 1));
    rng_state = seed;
    g.nnz = 0;
    g.rowptr[0] = 0;
    for (i = 0; i < m; i++) {
        int64_t len = (i % 11 == 5) ? 0 : (int64_t)(rnd() % (uint64_t)(n / (1 + i % 17) / 3 + 1)) + 1, j;
        for (j = 0; j < len; j++) {
            g.cols[g.nnz] = (j == 1 && i % 4 == 0) ? g.cols[g.nnz - 1] : (int64_t)(rnd() % (uint64_t)n);
            g.vals[g.nnz] = (double)((int64_t)(rnd() % 2001) - 1000) / 256.0;
            g.nnz++;
        }
        g.rowptr[i + 1] = g.nnz;
    }
    return g;
}

static double xval(int64_t i, int64_t j) { return (double)((i * 7 + j * 13) % 19 - 9) / 8.0; }
static double yval(int64_t i, int64_t j) { return (double)((i * 5 + j * 3) % 11 - 5) / 4.0; }

/* Fills an rows x k block starting at global row r0 with f, in layout with ld. */
static void fill(double *a, int64_t r0, int64_t rows, int64_t k, int col_major, int64_t ld,
                 double (*f)(int64_t, int64_t)) {
    int64_t i, j;
    for (i = 0; i < rows; i++)
        for (j = 0; j < k; j++) a[col_major ? j * ld + i : i * ld + j] = f(r0 + i, j);
}

typedef struct {
    int failed_cases;
} Stats;

/*
 * One case: A (m x n) on `comm`, algorithm `alg`, k columns, layout, value type; checks
 * two products (new X the second time) and a values update.
 */
static void run_case(spgemm_handle_t *h, MPI_Comm comm, const Global *g, int alg, int64_t k,
                     int col_major, int f32, int one_based, int64_t gr, int64_t gc) {
    int p, me;
    int64_t r0, nr, x0, nx, i, j, lnnz, ldx, ldy, gldx, gldy;
    int64_t *lrow;
    int32_t *lcol;
    double *lvals_d;
    float *lvals_f;
    void *vals;
    spgemm_dist_matrix_t *A = NULL;
    spgemm_dist_plan_t *plan = NULL;
    spgemm_matrix_t *full = NULL;
    double *xg, *y0g, *yref, *xl, *yl;
    float *xgf = NULL, *yreff = NULL, *xlf = NULL, *ylf = NULL;
    int layout = col_major ? SPGEMM_LAYOUT_COL_MAJOR : SPGEMM_LAYOUT_ROW_MAJOR;
    int32_t got_alg = -1, vt = -1;
    int64_t pr = 0, pc = 0, foot = 0, xr = 0, yr = 0, sent = -1, recv = -1, ctl = -1;
    double pred = 0, comp = 0, tot = 0;
    int rep;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    r0 = block_start(g->m, me, p);
    nr = block_len(g->m, me, p);
    x0 = block_start(g->n, me, p);
    nx = block_len(g->n, me, p);
    lnnz = g->rowptr[r0 + nr] - g->rowptr[r0];
    /* This rank's rows: size_t offsets, int32 global columns, base 0 or 1. */
    lrow = malloc(sizeof(int64_t) * (size_t)(nr + 1));
    lcol = malloc(sizeof(int32_t) * (size_t)(lnnz + 1));
    lvals_d = malloc(sizeof(double) * (size_t)(lnnz + 1));
    lvals_f = malloc(sizeof(float) * (size_t)(lnnz + 1));
    for (i = 0; i <= nr; i++) lrow[i] = g->rowptr[r0 + i] - g->rowptr[r0] + one_based;
    for (i = 0; i < lnnz; i++) {
        lcol[i] = (int32_t)(g->cols[g->rowptr[r0] + i] + one_based);
        lvals_d[i] = g->vals[g->rowptr[r0] + i];
        lvals_f[i] = (float)lvals_d[i];
    }
    vals = f32 ? (void *)lvals_f : (void *)lvals_d;
    CHECK_ALL(h,
              spgemm_dist_matrix_create_csr(h, (int)MPI_Comm_c2f(comm), g->m, g->n, r0, nr,
                                            g->m == g->n ? -1 : x0, nx, SPGEMM_INDEX_SIZE_T,
                                            lrow, SPGEMM_INDEX_INT32, lcol,
                                            f32 ? SPGEMM_VALUE_FLOAT32 : SPGEMM_VALUE_FLOAT64,
                                            vals, one_based, &A),
              SPGEMM_STATUS_SUCCESS);
    CHECK_ALL(h, spgemm_dist_spmm_plan(h, A, k, layout, alg, gr, gc, 0, &plan),
              SPGEMM_STATUS_SUCCESS);
    if (plan == NULL) {
        spgemm_dist_matrix_destroy(A);
        free(lrow), free(lcol), free(lvals_d), free(lvals_f);
        return;
    }
    CHECK_OK(NULL, spgemm_dist_plan_get_info(plan, &got_alg, &pr, &pc, &foot, &pred, &vt, &xr, &yr));
    CHECK(alg == SPGEMM_DIST_ALG_AUTO ? got_alg != SPGEMM_DIST_ALG_AUTO : got_alg == alg);
    CHECK(pr * pc == p && xr == nx && yr == nr && foot > 0 && pred >= 0.0);
    CHECK(vt == (f32 ? SPGEMM_VALUE_FLOAT32 : SPGEMM_VALUE_FLOAT64));
    if (gr > 0) CHECK(pr == gr && pc == gc);

    /* The serial reference: the whole matrix on this rank, the library's serial SpMM. */
    CHECK_OK(NULL, spgemm_matrix_create_csr(&full, g->m, g->n, SPGEMM_INDEX_INT64, g->rowptr,
                                            SPGEMM_INDEX_INT64, g->cols, SPGEMM_VALUE_FLOAT64,
                                            g->vals, SPGEMM_INDEX_BASE_ZERO));
    xg = malloc(sizeof(double) * (size_t)(g->n * k + 1));
    y0g = malloc(sizeof(double) * (size_t)(g->m * k + 1));
    yref = malloc(sizeof(double) * (size_t)(g->m * k + 1));
    gldx = col_major ? g->n : k; /* the serial reference: packed, in the case's layout */
    gldy = col_major ? g->m : k;
    ldx = col_major ? nx + 1 : k + 2; /* padded leading dimensions */
    ldy = col_major ? nr + 3 : k + 1;
    xl = malloc(sizeof(double) * (size_t)((col_major ? ldx * k : ldx * nx) + 1));
    yl = malloc(sizeof(double) * (size_t)((col_major ? ldy * k : ldy * nr) + 1));
    if (f32) {
        xgf = malloc(sizeof(float) * (size_t)(g->n * k + 1));
        yreff = malloc(sizeof(float) * (size_t)(g->m * k + 1));
        xlf = malloc(sizeof(float) * (size_t)((col_major ? ldx * k : ldx * nx) + 1));
        ylf = malloc(sizeof(float) * (size_t)((col_major ? ldy * k : ldy * nr) + 1));
    }
    for (rep = 0; rep < 3; rep++) {
        /* rep 0: alpha 1.5, beta 0 over NaN; rep 1: new X, beta -0.5; rep 2: values x2. */
        double alpha = rep == 0 ? 1.5 : -0.75, beta = rep == 1 ? -0.5 : (rep == 2 ? 2.0 : 0.0);
        double scale = rep == 2 ? 2.0 : 1.0, tol = f32 ? 1e-5 : 1e-12, worst = 0.0;
        int exact = (p == 1) || (got_alg == SPGEMM_DIST_ALG_SA15D && pc == 1) ||
                    got_alg == SPGEMM_DIST_ALG_HALO1D,
            bad = 0;
        spgemm_matrix_t *fs = full;
        double *gv2 = NULL;
        if (rep == 2) {
            for (i = 0; i < lnnz; i++) {
                lvals_d[i] *= 2.0;
                lvals_f[i] *= 2.0f;
            }
            CHECK_ALL(h, spgemm_dist_spmm_update_values(h, plan, A), SPGEMM_STATUS_SUCCESS);
            gv2 = malloc(sizeof(double) * (size_t)(g->nnz + 1));
            for (i = 0; i < g->nnz; i++) gv2[i] = 2.0 * g->vals[i];
            CHECK_OK(NULL, spgemm_matrix_create_csr(&fs, g->m, g->n, SPGEMM_INDEX_INT64, g->rowptr,
                                                    SPGEMM_INDEX_INT64, g->cols,
                                                    SPGEMM_VALUE_FLOAT64, gv2,
                                                    SPGEMM_INDEX_BASE_ZERO));
        }
        fill(xg, rep, g->n, k, col_major, gldx, xval);
        fill(y0g, 0, g->m, k, col_major, gldy, yval);
        fill(xl, x0 + rep, nx, k, col_major, ldx, xval);
        fill(yl, r0, nr, k, col_major, ldy, yval);
        if (beta == 0.0)
            for (i = 0; i < (col_major ? ldy * k : ldy * nr); i++) yl[i] = NAN;
        memcpy(yref, y0g, sizeof(double) * (size_t)(g->m * k));
        if (f32) {
            /* The float reference: the serial float SpMM of float copies. */
            float *gvf = malloc(sizeof(float) * (size_t)(g->nnz + 1));
            spgemm_matrix_t *ff = NULL;
            for (i = 0; i < g->nnz; i++) gvf[i] = (float)(scale * g->vals[i]);
            for (i = 0; i < g->n * k; i++) xgf[i] = (float)xg[i];
            for (i = 0; i < g->m * k; i++) yreff[i] = (float)y0g[i];
            for (i = 0; i < (col_major ? ldx * k : ldx * nx); i++) xlf[i] = (float)xl[i];
            for (i = 0; i < (col_major ? ldy * k : ldy * nr); i++) ylf[i] = (float)yl[i];
            CHECK_OK(NULL, spgemm_matrix_create_csr(&ff, g->m, g->n, SPGEMM_INDEX_INT64, g->rowptr,
                                                    SPGEMM_INDEX_INT64, g->cols,
                                                    SPGEMM_VALUE_FLOAT32, gvf,
                                                    SPGEMM_INDEX_BASE_ZERO));
            CHECK_OK(h, spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, alpha, ff, NULL,
                                    layout, k, xgf, gldx, beta, yreff, gldy));
            spgemm_matrix_destroy(ff);
            free(gvf);
            CHECK_ALL(h, spgemm_dist_spmm(h, plan, alpha, xlf, ldx, beta, ylf, ldy),
                      SPGEMM_STATUS_SUCCESS);
        } else {
            CHECK_OK(h, spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, alpha, fs, NULL,
                                    layout, k, xg, gldx, beta, yref, gldy));
            CHECK_ALL(h, spgemm_dist_spmm(h, plan, alpha, xl, ldx, beta, yl, ldy),
                      SPGEMM_STATUS_SUCCESS);
        }
        for (i = 0; i < nr; i++) {
            for (j = 0; j < k; j++) {
                int64_t at = col_major ? j * ldy + i : i * ldy + j, q;
                int64_t gat = col_major ? j * gldy + r0 + i : (r0 + i) * gldy + j;
                double got = f32 ? (double)ylf[at] : yl[at];
                double want = f32 ? (double)yreff[gat] : yref[gat];
                double bound = fabs(beta * y0g[gat]);
                for (q = g->rowptr[r0 + i]; q < g->rowptr[r0 + i + 1]; q++)
                    bound += fabs(alpha * scale * g->vals[q] *
                                  xg[col_major ? j * gldx + g->cols[q] : g->cols[q] * gldx + j]);
                if (exact ? (memcmp(&got, &want, sizeof got) != 0 && !(got == 0 && want == 0))
                          : !(fabs(got - want) <= tol * bound)) {
                    if (bad++ == 0)
                        fprintf(stderr, "rank %d alg %d k %lld rep %d: Y(%lld,%lld) = %.17g, serial %.17g\n",
                                me, got_alg, (long long)k, rep, (long long)(r0 + i), (long long)j, got, want);
                }
                if (bound > 0 && fabs(got - want) / bound > worst) worst = fabs(got - want) / bound;
            }
        }
        CHECK(bad == 0);
        CHECK_OK(NULL, spgemm_dist_plan_get_stats(plan, &sent, &recv, &ctl, &comp, &tot));
        CHECK(sent >= 0 && recv >= 0 && ctl > 0 && tot >= comp && comp >= 0);
        if (p == 1) CHECK(sent == 0 && recv == 0);
        if (rep == 2) {
            spgemm_matrix_destroy(fs);
            free(gv2);
            for (i = 0; i < lnnz; i++) {
                lvals_d[i] /= 2.0;
                lvals_f[i] /= 2.0f;
            }
        }
    }
    CHECK_OK(NULL, spgemm_dist_plan_destroy(plan));
    CHECK_OK(NULL, spgemm_dist_matrix_destroy(A));
    spgemm_matrix_destroy(full);
    free(lrow), free(lcol), free(lvals_d), free(lvals_f);
    free(xg), free(y0g), free(yref), free(xl), free(yl);
    free(xgf), free(yreff), free(xlf), free(ylf);
}

/* Bad input on one rank: the same status on every rank, nothing hangs. */
static void run_errors(spgemm_handle_t *h, MPI_Comm comm, const Global *g) {
    int p, me, last;
    int64_t r0, nr, i, lnnz;
    int64_t *lrow;
    int64_t *lcol;
    double *x, *y;
    spgemm_dist_matrix_t *A = NULL, *B = NULL;
    spgemm_dist_plan_t *plan = NULL;
    int fint = (int)MPI_Comm_c2f(comm);
    int32_t alg = -1;
    int64_t pr = 0, pc = 0, foot = 0, k = 4;
    double secs = 0;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    last = p - 1;
    r0 = block_start(g->m, me, p);
    nr = block_len(g->m, me, p);
    lnnz = g->rowptr[r0 + nr] - g->rowptr[r0];
    lrow = malloc(sizeof(int64_t) * (size_t)(nr + 1));
    lcol = malloc(sizeof(int64_t) * (size_t)(lnnz + 1));
    for (i = 0; i <= nr; i++) lrow[i] = g->rowptr[r0 + i] - g->rowptr[r0];
    for (i = 0; i < lnnz; i++) lcol[i] = g->cols[g->rowptr[r0] + i];
#define CREATE(rows, start, len, cols, out)                                                 \
    spgemm_dist_matrix_create_csr(h, fint, rows, g->n, start, len, -1, 0, SPGEMM_INDEX_INT64, \
                                  lrow, SPGEMM_INDEX_INT64, cols, SPGEMM_VALUE_FLOAT64,      \
                                  g->vals + g->rowptr[r0], SPGEMM_INDEX_BASE_ZERO, out)
    /* A column index out of range on the last rank that has entries. */
    if (lnnz > 0 && me == last) lcol[0] = g->n;
    CHECK_ALL(h, CREATE(g->m, r0, nr, lcol, &A), SPGEMM_STATUS_INDEX_OUT_OF_RANGE);
    if (A) spgemm_dist_matrix_destroy(A), A = NULL;
    if (lnnz > 0 && me == last) lcol[0] = g->cols[g->rowptr[r0]];
    /* Global sizes that differ on one rank. */
    CHECK_ALL_FAIL(h, CREATE(me == last ? g->m + 1 : g->m, r0, nr, lcol, &A));
    if (A) spgemm_dist_matrix_destroy(A), A = NULL;
    /* Ranges that do not tile the rows (rank 0 claims one row less). */
    CHECK_ALL_FAIL(h, CREATE(g->m, me == 0 ? r0 + 1 : r0, me == 0 ? nr - 1 : nr, lcol, &A));
    if (A) spgemm_dist_matrix_destroy(A), A = NULL;
    /* A bad type code, and a NULL output pointer, on one rank. */
    CHECK_ALL(h,
              spgemm_dist_matrix_create_csr(h, fint, g->m, g->n, r0, nr, -1, 0,
                                            me == last ? 9 : SPGEMM_INDEX_INT64, lrow,
                                            SPGEMM_INDEX_INT64, lcol, SPGEMM_VALUE_FLOAT64,
                                            g->vals + g->rowptr[r0], SPGEMM_INDEX_BASE_ZERO, &A),
              SPGEMM_STATUS_INVALID_VALUE);
    CHECK(A == NULL);
    CHECK_ALL(h, CREATE(g->m, r0, nr, lcol, me == 0 ? NULL : &A), SPGEMM_STATUS_NULL_POINTER);
    if (A) spgemm_dist_matrix_destroy(A), A = NULL;
    CHECK_ALL(h, CREATE(g->m, r0, nr, lcol, &A), SPGEMM_STATUS_SUCCESS);
    if (!A) goto out;
    /* Plan arguments bad on one rank; a memory limit no plan fits. */
    CHECK_ALL(h, spgemm_dist_spmm_plan(h, A, me == last ? -1 : k, SPGEMM_LAYOUT_ROW_MAJOR,
                                       SPGEMM_DIST_ALG_AUTO, 0, 0, 0, &plan),
              SPGEMM_STATUS_INVALID_VALUE);
    CHECK_ALL(h, spgemm_dist_spmm_plan(h, A, k, SPGEMM_LAYOUT_ROW_MAJOR,
                                       me == 0 ? 77 : SPGEMM_DIST_ALG_SA2D, 0, 0, 0, &plan),
              SPGEMM_STATUS_INVALID_VALUE);
    CHECK_ALL_FAIL(h, spgemm_dist_spmm_plan(h, A, k, SPGEMM_LAYOUT_ROW_MAJOR, SPGEMM_DIST_ALG_AUTO,
                                            p + 1, 1, 0, &plan));
    CHECK_ALL(h, spgemm_dist_spmm_plan(h, A, k, SPGEMM_LAYOUT_ROW_MAJOR, SPGEMM_DIST_ALG_AUTO,
                                       0, 0, 1, &plan),
              SPGEMM_STATUS_ALLOC_FAILED);
    CHECK(plan == NULL);
    CHECK_ALL(h, spgemm_dist_spmm_estimate(h, A, k, SPGEMM_LAYOUT_ROW_MAJOR, SPGEMM_DIST_ALG_AUTO,
                                           0, 0, 0, &alg, &pr, &pc, &secs, &foot),
              SPGEMM_STATUS_SUCCESS);
    CHECK(alg != SPGEMM_DIST_ALG_AUTO && pr * pc == p && secs > 0 && foot > 0);
    CHECK_ALL(h, spgemm_dist_spmm_plan(h, A, k, SPGEMM_LAYOUT_ROW_MAJOR, SPGEMM_DIST_ALG_AUTO,
                                       0, 0, 0, &plan),
              SPGEMM_STATUS_SUCCESS);
    if (!plan) goto out;
    x = calloc((size_t)(nr * k + 1), sizeof(double));
    y = calloc((size_t)(nr * k + 1), sizeof(double));
    /* Product arguments bad on one rank (a rank with no rows passes NULL legitimately). */
    CHECK_ALL(h, spgemm_dist_spmm(h, plan, 1.0, me == last ? NULL : x, k, 0.0, y, k),
              SPGEMM_STATUS_NULL_POINTER);
    CHECK_ALL(h, spgemm_dist_spmm(h, plan, 1.0, x, k, 0.0, y, me == 0 ? k - 1 : k),
              SPGEMM_STATUS_INVALID_VALUE);
    CHECK_ALL(h, spgemm_dist_spmm(h, plan, me == last ? 2.0 : 1.0, x, k, 0.0, y, k),
              p == 1 ? SPGEMM_STATUS_SUCCESS : SPGEMM_STATUS_INVALID_VALUE);
    CHECK_ALL(h, spgemm_dist_spmm(h, plan, 1.0, x, k, 0.0, x, k), SPGEMM_STATUS_INVALID_VALUE);
    CHECK_ALL(h, spgemm_dist_spmm(h, plan, 0.0, NULL, k, 0.0, y, k), SPGEMM_STATUS_SUCCESS);
    /* A changed structure on update: the plan refuses it on every rank. */
    if (lnnz > 1 && me == last) lcol[1] = (lcol[1] + 1) % g->n;
    CHECK_ALL(h, CREATE(g->m, r0, nr, lcol, &B), SPGEMM_STATUS_SUCCESS);
    if (B) {
        CHECK_ALL(h, spgemm_dist_spmm_update_values(h, plan, B), SPGEMM_STATUS_PLAN_MISMATCH);
        CHECK_OK(NULL, spgemm_dist_matrix_destroy(B));
    }
    CHECK_ALL(h, spgemm_dist_spmm_update_values(h, plan, me == 0 ? NULL : A),
              SPGEMM_STATUS_NULL_POINTER);
    CHECK_OK(NULL, spgemm_dist_plan_destroy(plan));
    free(x), free(y);
out:
    if (A) CHECK_OK(NULL, spgemm_dist_matrix_destroy(A));
    free(lrow), free(lcol);
#undef CREATE
}

int main(int argc, char **argv) {
    spgemm_handle_t *h = NULL;
    MPI_Comm comm;
    Global sq, rect;
    int algs[7] = {SPGEMM_DIST_ALG_AUTO,       SPGEMM_DIST_ALG_SA15D,      SPGEMM_DIST_ALG_SA2D,
                   SPGEMM_DIST_ALG_SC2D,       SPGEMM_DIST_ALG_SA2D_ASYNC, SPGEMM_DIST_ALG_SC2D_ASYNC,
                   SPGEMM_DIST_ALG_HALO1D};
    int64_t ks[3] = {1, 8, 64};
    int a, q, totals[2];
    (void)argc, (void)argv;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
    /* A communicator other than MPI_COMM_WORLD, reversed rank order. */
    MPI_Comm_split(MPI_COMM_WORLD, 0, nranks_ - rank_, &comm);
    CHECK_OK(NULL, spgemm_create(&h));
    CHECK_OK(h, spgemm_set_num_threads(h, 1));
    CHECK_OK(h, spgemm_set_backend(h, SPGEMM_BACKEND_CPU));
    sq = make_global(240, 240, 7);
    rect = make_global(150, 310, 11);
    for (a = 0; a < 7; a++) {
        for (q = 0; q < 3; q++) {
            run_case(h, comm, &sq, algs[a], ks[q], q == 1, 0, 0, 0, 0);
        }
        run_case(h, comm, &rect, algs[a], 8, a % 2, a == 3, 1, 0, 0);
    }
    /* Forced grids: 1.5D with every replication factor c dividing p, a p x 1 2D grid. */
    for (q = 1; q <= nranks_; q++)
        if (nranks_ % q == 0) run_case(h, comm, &sq, SPGEMM_DIST_ALG_SA15D, 8, 0, 0, 0, nranks_ / q, q);
    run_case(h, comm, &rect, SPGEMM_DIST_ALG_SC2D_ASYNC, 8, 1, 0, 0, nranks_, 1);
    run_errors(h, comm, &sq);
    free_global(&sq);
    free_global(&rect);
    CHECK_OK(NULL, spgemm_destroy(h));
    MPI_Comm_free(&comm);
    totals[0] = check_passed_;
    totals[1] = check_failed_;
    MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (check_failed_ > 0) fprintf(stderr, "rank %d: %d failed\n", rank_, check_failed_);
    if (rank_ == 0) {
        printf("dist_spmm (C ABI) on %d ranks: ", nranks_);
        check_passed_ = totals[0];
        check_failed_ = totals[1];
        q = check_report();
    } else {
        q = totals[1] == 0 ? 0 : 1;
    }
    MPI_Finalize();
    return q;
}

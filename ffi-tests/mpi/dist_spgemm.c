/*
 * Distributed SpGEMM through the C ABI under mpirun (any rank count): C = A*P, C = A^T*B,
 * R*A*P and P^T*A*P of row-distributed matrices on a communicator other than
 * MPI_COMM_WORLD (reversed rank order), uneven row blocks (rank 1 owns none at 3 or more
 * ranks), 64-bit or 32-bit arrays, base 0 or 1, double or float. Every rank's rows of C are
 * compared bitwise with the library's serial product of the whole matrices (values
 * summed in one order at every rank count), then again after new values (plan reuse).
 * Errors made on one rank only must come back with the same status on every rank. Rank 0
 * prints the checks of all ranks together as "N passed, M failed".
 *
 *   mpicc -Iinclude ffi-tests/mpi/dist_spgemm.c -Ltarget/mpi/release -lspgemm -lm
 *   mpirun -np 4 ./a.out
 */
#include <mpi.h>
#include <stdint.h>

#include "../check.h"
#include "dist_common.h"

static int rank_, nranks_;

/* A global m x n CSR matrix: rows of 0 to ~2*avg entries, unsorted, some duplicates. */
static Global make_global(int64_t m, int64_t n, int64_t avg, uint64_t seed) {
    Global g;
    int64_t i, j;
    g.m = m;
    g.n = n;
    g.rowptr = malloc(sizeof(int64_t) * (size_t)(m + 1));
    g.cols = malloc(sizeof(int64_t) * (size_t)(m * 2 * avg + 1));
    g.vals = malloc(sizeof(double) * (size_t)(m * 2 * avg + 1));
    rng_state = seed;
    g.nnz = 0;
    g.rowptr[0] = 0;
    for (i = 0; i < m; i++) {
        int64_t len = n == 0 || i % 9 == 4 ? 0 : (int64_t)(rnd() % (uint64_t)(2 * avg));
        for (j = 0; j < len; j++) {
            g.cols[g.nnz] = (j == 1 && i % 4 == 0) ? g.cols[g.nnz - 1] : (int64_t)(rnd() % (uint64_t)n);
            g.vals[g.nnz] = (double)((int64_t)(rnd() % 2001) - 1000) / 256.0;
            g.nnz++;
        }
        g.rowptr[i + 1] = g.nnz;
    }
    return g;
}

static void revalue(Global *g, uint64_t seed) {
    int64_t e;
    rng_state = seed;
    for (e = 0; e < g->nnz; e++) g->vals[e] = (double)((int64_t)(rnd() % 2001) - 1000) / 128.0;
}


/* This rank's rows of a global matrix, in the case's types, and its distributed matrix. */
typedef struct {
    int64_t r0, nr, x0, nx, nnz;
    void *rowptr, *cols, *vals;
    spgemm_dist_matrix_t *dm;
} Local;

typedef struct {
    int wide;    /* int64 offsets and indices, else int32 */
    int f32;     /* float values */
    int base;    /* 0 or 1 */
} Types;

static void fill_values(Local *l, const Global *g, Types t) {
    int64_t e, s = g->rowptr[l->r0];
    for (e = 0; e < l->nnz; e++) {
        if (t.f32)
            ((float *)l->vals)[e] = (float)g->vals[s + e];
        else
            ((double *)l->vals)[e] = g->vals[s + e];
    }
}

static Local make_local(spgemm_handle_t *h, MPI_Comm comm, const Global *g, Types t) {
    Local l;
    int64_t i, s;
    int p, me;
    size_t iw = t.wide ? 8 : 4;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    l.r0 = block_start(g->m, me, p);
    l.nr = block_len(g->m, me, p);
    l.x0 = block_start(g->n, me, p);
    l.nx = block_len(g->n, me, p);
    s = g->rowptr[l.r0];
    l.nnz = g->rowptr[l.r0 + l.nr] - s;
    l.rowptr = malloc(iw * (size_t)(l.nr + 1));
    l.cols = malloc(iw * (size_t)(l.nnz + 1));
    l.vals = malloc((t.f32 ? 4 : 8) * (size_t)(l.nnz + 1));
    for (i = 0; i <= l.nr; i++) {
        int64_t o = g->rowptr[l.r0 + i] - s + t.base;
        if (t.wide)
            ((int64_t *)l.rowptr)[i] = o;
        else
            ((int32_t *)l.rowptr)[i] = (int32_t)o;
    }
    for (i = 0; i < l.nnz; i++) {
        int64_t c = g->cols[s + i] + t.base;
        if (t.wide)
            ((int64_t *)l.cols)[i] = c;
        else
            ((int32_t *)l.cols)[i] = (int32_t)c;
    }
    fill_values(&l, g, t);
    l.dm = NULL;
    CHECK_ALL(h,
              spgemm_dist_matrix_create_csr(
                  h, (int)MPI_Comm_c2f(comm), g->m, g->n, l.r0, l.nr, l.x0, l.nx,
                  t.wide ? SPGEMM_INDEX_INT64 : SPGEMM_INDEX_INT32, l.rowptr,
                  t.wide ? SPGEMM_INDEX_INT64 : SPGEMM_INDEX_INT32, l.cols,
                  t.f32 ? SPGEMM_VALUE_FLOAT32 : SPGEMM_VALUE_FLOAT64, l.vals, t.base, &l.dm),
              SPGEMM_STATUS_SUCCESS);
    return l;
}

static void free_local(Local *l) {
    CHECK_OK(NULL, spgemm_dist_matrix_destroy(l->dm));
    free(l->rowptr);
    free(l->cols);
    free(l->vals);
}

/* The serial product op(A) * B of whole matrices (int64, base 0, sorted rows). */
typedef struct {
    int64_t m, nnz;
    int64_t *rowptr, *cols;
    double *vals;
} Result;

static Result serial(spgemm_handle_t *h, int op, const Global *a, const Global *b, int f32) {
    Result r;
    spgemm_matrix_t *A = NULL, *B = NULL;
    spgemm_plan_t *plan = NULL;
    float *af = NULL, *bf = NULL, *cf = NULL;
    int64_t e;
    int vt = f32 ? SPGEMM_VALUE_FLOAT32 : SPGEMM_VALUE_FLOAT64;
    const void *av = a->vals, *bv = b->vals;
    if (f32) {
        af = malloc(sizeof(float) * (size_t)(a->nnz + 1));
        bf = malloc(sizeof(float) * (size_t)(b->nnz + 1));
        for (e = 0; e < a->nnz; e++) af[e] = (float)a->vals[e];
        for (e = 0; e < b->nnz; e++) bf[e] = (float)b->vals[e];
        av = af;
        bv = bf;
    }
    CHECK_OK(NULL, spgemm_matrix_create_csr(&A, a->m, a->n, SPGEMM_INDEX_INT64, a->rowptr,
                                            SPGEMM_INDEX_INT64, a->cols, vt, av, 0));
    CHECK_OK(NULL, spgemm_matrix_create_csr(&B, b->m, b->n, SPGEMM_INDEX_INT64, b->rowptr,
                                            SPGEMM_INDEX_INT64, b->cols, vt, bv, 0));
    r.m = op ? a->n : a->m;
    r.rowptr = malloc(sizeof(int64_t) * (size_t)(r.m + 1));
    CHECK_OK(h, spgemm_symbolic_op(h, op, A, SPGEMM_OPERATION_NON_TRANSPOSE, B,
                                   SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64, 0, r.rowptr, &plan));
    r.nnz = r.rowptr[r.m];
    r.cols = malloc(sizeof(int64_t) * (size_t)(r.nnz + 1));
    r.vals = malloc(sizeof(double) * (size_t)(r.nnz + 1));
    cf = f32 ? malloc(sizeof(float) * (size_t)(r.nnz + 1)) : NULL;
    CHECK_OK(h, spgemm_numeric(h, plan, A, B, r.cols, f32 ? (void *)cf : (void *)r.vals));
    if (f32)
        for (e = 0; e < r.nnz; e++) r.vals[e] = cf[e];
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    free(af), free(bf), free(cf);
    return r;
}

static void free_result(Result *r) {
    free(r->rowptr);
    free(r->cols);
    free(r->vals);
}

/* Result as a Global (for the second serial product of R*A*P). */
static Global as_global(const Result *r, int64_t n) {
    Global g;
    g.m = r->m;
    g.n = n;
    g.nnz = r->nnz;
    g.rowptr = r->rowptr;
    g.cols = r->cols;
    g.vals = r->vals;
    return g;
}

/* This rank's rows of C (c0..c0+nr) against the serial result, bitwise (both sorted). */
static int same_rows(const Result *want, int64_t c0, int64_t nr, const int64_t *offs,
                     const int64_t *cols, const void *vals, int f32, int base) {
    int64_t i, e;
    for (i = 0; i < nr; i++) {
        int64_t s = offs[i] - base, len = offs[i + 1] - offs[i];
        int64_t ws = want->rowptr[c0 + i], wlen = want->rowptr[c0 + i + 1] - ws;
        if (len != wlen) return 0;
        for (e = 0; e < len; e++) {
            double v = f32 ? (double)((const float *)vals)[s + e] : ((const double *)vals)[s + e];
            if (cols[s + e] - base != want->cols[ws + e]) return 0;
            if (memcmp(&v, &want->vals[ws + e], sizeof v) != 0) return 0;
        }
    }
    return 1;
}

/*
 * One case. what: 0 = op(A) * B with op = `op`; 1 = R*A*P (op N) or P^T*A*P (op T).
 */
static void run_case(spgemm_handle_t *h, MPI_Comm comm, int what, int op, Types t, int64_t m,
                     int64_t n, int64_t k, uint64_t seed) {
    Global g[3];
    Local l[3];
    int nm = what ? 3 : 2, i, round;
    int64_t row0 = -1, rows = -1, gcols = -1, lnnz = -1, gnnz = -1, *offs, *cols;
    int32_t ops = 0;
    void *vals;
    spgemm_dist_spgemm_plan_t *plan = NULL;
    Result want, ap;
    int c_base = (int)(seed % 2);
    if (what == 0) {
        g[0] = op ? make_global(k, m, 4, seed) : make_global(m, k, 4, seed);
        g[1] = make_global(k, n, 5, seed + 1);
    } else {
        g[1] = make_global(m, m, 5, seed);
        g[2] = make_global(m, n, 2, seed + 1);
        g[0] = op ? make_global(m, n, 2, seed + 1) : make_global(n, m, 3, seed + 2);
    }
    for (i = 0; i < nm; i++) l[i] = make_local(h, comm, &g[i], t);
    /* C's rows here: op(first)'s (its rows, or its columns' block for a transpose). */
    offs = malloc(sizeof(int64_t) * (size_t)((op ? l[0].nx : l[0].nr) + 1));
    if (what == 0)
        CHECK_ALL(h, spgemm_dist_spgemm_symbolic(h, op, l[0].dm, l[1].dm, SPGEMM_INDEX_INT64,
                                                 SPGEMM_INDEX_INT64, c_base, offs, &plan),
                  SPGEMM_STATUS_SUCCESS);
    else
        CHECK_ALL(h, spgemm_dist_rap_symbolic(h, op, l[0].dm, l[1].dm, l[2].dm, SPGEMM_INDEX_INT64,
                                              SPGEMM_INDEX_INT64, c_base, offs, &plan),
                  SPGEMM_STATUS_SUCCESS);
    if (plan == NULL) goto done;
    CHECK_OK(NULL, spgemm_dist_spgemm_plan_get_info(plan, &row0, &rows, &gcols, &lnnz, &gnnz, &ops));
    CHECK(rows == (op ? l[0].nx : l[0].nr) && row0 == (op ? l[0].x0 : l[0].r0));
    CHECK(ops == nm && lnnz == offs[rows] - c_base && gcols == g[nm - 1].n);
    cols = malloc(sizeof(int64_t) * (size_t)(lnnz + 1));
    vals = malloc((t.f32 ? 4 : 8) * (size_t)(lnnz + 1));
    for (round = 0; round < 2; round++) {
        if (round == 1) {
            /* New values, same structure: the plan is reused. */
            for (i = 0; i < nm; i++) {
                revalue(&g[i], seed * 7 + (uint64_t)i);
                fill_values(&l[i], &g[i], t);
            }
            if (what == 1 && op) {
                memcpy(g[0].vals, g[2].vals, sizeof(double) * (size_t)g[2].nnz);
                fill_values(&l[0], &g[0], t);
            }
        }
        CHECK_ALL(h, spgemm_dist_spgemm_numeric(h, plan, l[0].dm, l[1].dm, what ? l[2].dm : NULL,
                                                cols, vals),
                  SPGEMM_STATUS_SUCCESS);
        if (what == 0) {
            want = serial(h, op, &g[0], &g[1], t.f32);
        } else {
            Global apg;
            ap = serial(h, SPGEMM_OPERATION_NON_TRANSPOSE, &g[1], &g[2], t.f32);
            apg = as_global(&ap, g[2].n);
            want = serial(h, op, &g[0], &apg, t.f32);
            free_result(&ap);
        }
        CHECK(want.rowptr[want.m] == gnnz || round == 1);
        CHECK(same_rows(&want, row0, rows, offs, cols, vals, t.f32, c_base));
        free_result(&want);
    }
    /* A third matrix for a two-operand plan, on one rank: INVALID_VALUE everywhere. */
    if (what == 0)
        CHECK_ALL(h, spgemm_dist_spgemm_numeric(h, plan, l[0].dm, l[1].dm,
                                                rank_ == nranks_ - 1 ? l[0].dm : NULL, cols, vals),
                  SPGEMM_STATUS_INVALID_VALUE);
    /* C's values NULL on one rank: NULL_POINTER everywhere. */
    CHECK_ALL(h, spgemm_dist_spgemm_numeric(h, plan, l[0].dm, l[1].dm, what ? l[2].dm : NULL, cols,
                                            rank_ == 0 ? NULL : vals),
              SPGEMM_STATUS_NULL_POINTER);
    CHECK_OK(NULL, spgemm_dist_spgemm_plan_destroy(plan));
    free(cols);
    free(vals);
done:
    free(offs);
    for (i = 0; i < nm; i++) {
        free_local(&l[i]);
        free_global(&g[i]);
    }
}

/* Errors made on one rank only: the same status everywhere, nothing left half-done. */
static void run_errors(spgemm_handle_t *h, MPI_Comm comm) {
    Types t = {0, 0, 0};
    Global a = make_global(50, 40, 3, 5), b = make_global(41, 30, 3, 6), ok = make_global(40, 30, 3, 7);
    Local la = make_local(h, comm, &a, t), lb = make_local(h, comm, &b, t), lok = make_local(h, comm, &ok, t);
    spgemm_dist_spgemm_plan_t *plan = NULL;
    int64_t *offs = malloc(sizeof(int64_t) * (size_t)(la.nr + 1));
    /* Inner dimensions differ (A is 50 x 40, B 41 x 30). */
    CHECK_ALL(h, spgemm_dist_spgemm_symbolic(h, 0, la.dm, lb.dm, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                             0, offs, &plan),
              SPGEMM_STATUS_DIMENSION_MISMATCH);
    CHECK(plan == NULL);
    /* A bad op code on the last rank. */
    CHECK_ALL(h, spgemm_dist_spgemm_symbolic(h, rank_ == nranks_ - 1 ? 7 : 0, la.dm, lok.dm,
                                             SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64, 0, offs, &plan),
              SPGEMM_STATUS_INVALID_VALUE);
    /* NULL row offsets on rank 0, a NULL plan pointer on the last rank. */
    CHECK_ALL(h, spgemm_dist_spgemm_symbolic(h, 0, la.dm, lok.dm, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                             0, rank_ == 0 ? NULL : offs, &plan),
              SPGEMM_STATUS_NULL_POINTER);
    CHECK_ALL(h, spgemm_dist_spgemm_symbolic(h, 0, la.dm, lok.dm, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                             0, offs, rank_ == nranks_ - 1 ? NULL : &plan),
              SPGEMM_STATUS_NULL_POINTER);
    CHECK(plan == NULL);
    /* A NULL handle on rank 0. */
    CHECK_ALL(NULL, spgemm_dist_spgemm_symbolic(rank_ == 0 ? NULL : h, 0, la.dm, lok.dm, SPGEMM_INDEX_INT64,
                                                SPGEMM_INDEX_INT64, 0, offs, &plan),
              SPGEMM_STATUS_NULL_POINTER);
    /* The same call, correct: works after the failures. */
    CHECK_ALL(h, spgemm_dist_spgemm_symbolic(h, 0, la.dm, lok.dm, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                             0, offs, &plan),
              SPGEMM_STATUS_SUCCESS);
    CHECK_OK(NULL, spgemm_dist_spgemm_plan_destroy(plan));
    CHECK_OK(NULL, spgemm_dist_spgemm_plan_destroy(NULL));
    CHECK_STATUS(NULL, spgemm_dist_spgemm_plan_get_info(NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                 SPGEMM_STATUS_NULL_POINTER);
    CHECK_STATUS(NULL, spgemm_dist_spgemm_plan_get_stats(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                 SPGEMM_STATUS_NULL_POINTER);
    free(offs);
    free_local(&la), free_local(&lb), free_local(&lok);
    free_global(&a), free_global(&b), free_global(&ok);
}

int main(int argc, char **argv) {
    spgemm_handle_t *h = NULL;
    MPI_Comm comm;
    int q, totals[2], what, op;
    uint64_t seed = 100;
    double sym = -1, num = -1, imp = -1;
    int64_t rows = -1, sb = -1, nb = -1, fl = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
    MPI_Comm_split(MPI_COMM_WORLD, 0, nranks_ - rank_, &comm);
    CHECK_OK(NULL, spgemm_create(&h));
    CHECK_OK(h, spgemm_set_num_threads(h, 1));
    CHECK_OK(h, spgemm_set_backend(h, SPGEMM_BACKEND_CPU));
    for (what = 0; what < 2; what++)
        for (op = 0; op < 2; op++)
            for (q = 0; q < 4; q++) {
                Types t = {q % 2, q == 3, q / 2};
                run_case(h, comm, what, op, t, 70 + q * 9, 45 + q, 60 - q, seed++);
            }
    /* Statistics of a plan: filled, sane. */
    {
        Types t = {1, 0, 0};
        Global a = make_global(80, 80, 4, 3), p = make_global(80, 20, 2, 4);
        Local la = make_local(h, comm, &a, t), lp = make_local(h, comm, &p, t);
        spgemm_dist_spgemm_plan_t *plan = NULL;
        int64_t *offs = malloc(sizeof(int64_t) * (size_t)(lp.nx + 1)), lnnz = 0;
        CHECK_ALL(h, spgemm_dist_rap_symbolic(h, 1, lp.dm, la.dm, lp.dm, SPGEMM_INDEX_INT64,
                                              SPGEMM_INDEX_INT64, 0, offs, &plan),
                  SPGEMM_STATUS_SUCCESS);
        if (plan) {
            int64_t *cols;
            double *vals;
            CHECK_OK(NULL, spgemm_dist_spgemm_plan_get_info(plan, NULL, NULL, NULL, &lnnz, NULL, NULL));
            cols = malloc(sizeof(int64_t) * (size_t)(lnnz + 1));
            vals = malloc(sizeof(double) * (size_t)(lnnz + 1));
            CHECK_ALL(h, spgemm_dist_spgemm_numeric(h, plan, lp.dm, la.dm, lp.dm, cols, vals),
                      SPGEMM_STATUS_SUCCESS);
            CHECK_OK(NULL, spgemm_dist_spgemm_plan_get_stats(plan, &sym, &num, &imp, &rows, &sb, &nb, &fl));
            CHECK(sym >= 0 && num >= 0 && imp >= 0 && imp <= num && rows >= 0 && fl >= 0);
            CHECK(nranks_ > 1 || (rows == 0 && sb == 0 && nb == 0));
            CHECK_OK(NULL, spgemm_dist_spgemm_plan_destroy(plan));
            free(cols), free(vals);
        }
        free(offs);
        free_local(&la), free_local(&lp);
        free_global(&a), free_global(&p);
    }
    run_errors(h, comm);
    CHECK_OK(NULL, spgemm_destroy(h));
    MPI_Comm_free(&comm);
    totals[0] = check_passed_;
    totals[1] = check_failed_;
    MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (check_failed_ > 0) fprintf(stderr, "rank %d: %d failed\n", rank_, check_failed_);
    if (rank_ == 0) {
        printf("dist_spgemm (C ABI) on %d ranks: ", nranks_);
        check_passed_ = totals[0];
        check_failed_ = totals[1];
        q = check_report();
    } else {
        q = totals[1] == 0 ? 0 : 1;
    }
    MPI_Finalize();
    return q;
}

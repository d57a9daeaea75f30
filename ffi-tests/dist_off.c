/*
 * The distributed SpMM and SpGEMM entry points without MPI: `make c-test` links the library built
 * without the `mpi` feature, where creating a distributed matrix is
 * SPGEMM_STATUS_NOT_SUPPORTED (a library built with it, run without MPI_Init, gives
 * SPGEMM_STATUS_INVALID_VALUE instead: MPI not initialised). Everything else must reject
 * NULL objects by name, and destroy(NULL) is a no-op. The MPI runs are in ffi-tests/mpi/.
 */
#include "check.h"

int main(void) {
    spgemm_handle_t *h = NULL;
    int32_t rowptr[3] = {0, 1, 2};
    int32_t cols[2] = {0, 1};
    double vals[2] = {1.0, 2.0};
    double x[2] = {1.0, 1.0}, y[2] = {0.0, 0.0};
    spgemm_dist_matrix_t *a = (spgemm_dist_matrix_t *)&h; /* must be overwritten */
    spgemm_dist_plan_t *plan = NULL;
    spgemm_status_t s;
    int32_t alg = -1;
    int64_t gr = -1, gc = -1, foot = -1, i64 = -1;
    double secs = -1.0, d = -1.0;
    int32_t vt = -1;

    CHECK_OK(NULL, spgemm_create(&h));
    s = spgemm_dist_matrix_create_csr(h, 0, 2, 2, 0, 2, -1, 0, SPGEMM_INDEX_INT32, rowptr,
                                      SPGEMM_INDEX_INT32, cols, SPGEMM_VALUE_FLOAT64, vals,
                                      SPGEMM_INDEX_BASE_ZERO, &a);
    CHECK(s == SPGEMM_STATUS_NOT_SUPPORTED || s == SPGEMM_STATUS_INVALID_VALUE);
    if (s == SPGEMM_STATUS_NOT_SUPPORTED) {
        CHECK(has_word(spgemm_last_error(h), "mpi"));
    } else {
        CHECK(has_word(spgemm_last_error(h), "MPI"));
    }
    CHECK(a == NULL);

    /* NULL objects: no communicator to reach, the call returns on this process alone. */
    CHECK_ERR(h, spgemm_dist_spmm_plan(h, NULL, 2, SPGEMM_LAYOUT_ROW_MAJOR, SPGEMM_DIST_ALG_AUTO,
                                       0, 0, 0, &plan),
              SPGEMM_STATUS_NULL_POINTER, WORDS("A"));
    CHECK(plan == NULL);
    CHECK_ERR(h, spgemm_dist_spmm_estimate(h, NULL, 2, SPGEMM_LAYOUT_COL_MAJOR,
                                           SPGEMM_DIST_ALG_SC2D_ASYNC, 0, 0, 0, &alg, &gr, &gc,
                                           &secs, &foot),
              SPGEMM_STATUS_NULL_POINTER, WORDS("A"));
    CHECK_ERR(h, spgemm_dist_spmm(h, NULL, 1.0, x, 2, 0.0, y, 2), SPGEMM_STATUS_NULL_POINTER,
              WORDS("plan"));
    CHECK_ERR(NULL, spgemm_dist_spmm(NULL, NULL, 1.0, x, 2, 0.0, y, 2),
              SPGEMM_STATUS_NULL_POINTER, WORDS("handle"));
    CHECK_ERR(h, spgemm_dist_spmm_update_values(h, NULL, NULL), SPGEMM_STATUS_NULL_POINTER,
              WORDS("plan"));
    CHECK_ERR(NULL, spgemm_dist_plan_get_info(NULL, &alg, &gr, &gc, &foot, &d, &vt, &i64, &i64),
              SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));
    CHECK_ERR(NULL, spgemm_dist_plan_get_stats(NULL, &i64, &i64, &i64, &secs, &secs),
              SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));
    CHECK_OK(NULL, spgemm_dist_plan_destroy(NULL));
    CHECK_OK(NULL, spgemm_dist_matrix_destroy(NULL));
    /* Distributed SpGEMM: the same for its entry points. */
    {
        spgemm_dist_spgemm_plan_t *sp = (spgemm_dist_spgemm_plan_t *)&h; /* overwritten */
        int64_t offs[3] = {0, 0, 0}, c_cols[1] = {0};
        double c_vals[1] = {0.0};
        int32_t ops = -1;
        CHECK_ERR(h, spgemm_dist_spgemm_symbolic(h, SPGEMM_OPERATION_NON_TRANSPOSE, NULL, NULL,
                                                 SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                                 SPGEMM_INDEX_BASE_ZERO, offs, &sp),
                  SPGEMM_STATUS_NULL_POINTER, WORDS("A"));
        CHECK(sp == NULL);
        CHECK_ERR(h, spgemm_dist_rap_symbolic(h, SPGEMM_OPERATION_TRANSPOSE, NULL, NULL, NULL,
                                              SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                              SPGEMM_INDEX_BASE_ZERO, offs, &sp),
                  SPGEMM_STATUS_NULL_POINTER, WORDS("R"));
        CHECK_ERR(h, spgemm_dist_spgemm_numeric(h, NULL, NULL, NULL, NULL, c_cols, c_vals),
                  SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));
        CHECK_ERR(NULL, spgemm_dist_spgemm_plan_get_info(NULL, &i64, &i64, &i64, &i64, &i64, &ops),
                  SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));
        CHECK_ERR(NULL, spgemm_dist_spgemm_plan_get_stats(NULL, &secs, &secs, &secs, &i64, &i64,
                                                          &i64, &i64),
                  SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));
        CHECK_ERR(NULL, spgemm_dist_matrix_get_local_sizes(NULL, &i64, &i64),
                  SPGEMM_STATUS_NULL_POINTER, WORDS("matrix"));
        CHECK_OK(NULL, spgemm_dist_spgemm_plan_destroy(NULL));
        CHECK(c_cols[0] == 0 && c_vals[0] == 0.0 && ops == -1);
    }
    CHECK(SPGEMM_DIST_ALG_AUTO == 0 && SPGEMM_DIST_ALG_SA15D == 1 && SPGEMM_DIST_ALG_SA2D == 2 &&
          SPGEMM_DIST_ALG_SC2D == 3 && SPGEMM_DIST_ALG_SA2D_ASYNC == 4 &&
          SPGEMM_DIST_ALG_SC2D_ASYNC == 5 && SPGEMM_DIST_ALG_HALO1D == 6);
    CHECK(y[0] == 0.0 && y[1] == 0.0);
    CHECK_OK(NULL, spgemm_destroy(h));
    return check_report();
}

/*
 * Every error path of the C ABI: each status code a caller can provoke, with a message that
 * names the offending argument (and the row or position where there is one), read through
 * spgemm_last_error(handle) or spgemm_last_error(NULL) for calls without a handle. Also:
 * destroy(NULL) for each object type, spgemm_status_string for every code, and the 32-bit
 * overflow checks (nothing written before the error).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "spgemm.h"
#include "testlib.h"

#define ST_NULL SPGEMM_STATUS_NULL_POINTER
#define ST_INVAL SPGEMM_STATUS_INVALID_VALUE

/* A small valid pair: A is 3x4, B is 4x2 (0-based int32 offsets and indices, double). */
static const int32_t A_RP[] = {0, 2, 2, 4}, A_CI[] = {0, 2, 1, 3};
static const double A_V[] = {1, 2, 3, 4};
static const int32_t B_RP[] = {0, 2, 3, 4, 5}, B_CI[] = {0, 1, 1, 0, 1};
static const double B_V[] = {1, 2, 1, 5, -1};

static spgemm_matrix_t *make32(int64_t m, int64_t n, const int32_t *rp, const int32_t *ci,
                               const double *v, int base) {
    spgemm_matrix_t *mat = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&mat, m, n, SPGEMM_INDEX_INT32, rp,
                                            SPGEMM_INDEX_INT32, ci, SPGEMM_VALUE_FLOAT64, v,
                                            base));
    return mat;
}

static void test_status_strings(void) {
    spgemm_status_t s;
    const char *seen[SPGEMM_STATUS_INTERNAL + 1];
    int distinct = 1, i, j;
    for (s = SPGEMM_STATUS_SUCCESS; s <= SPGEMM_STATUS_INTERNAL; s++) {
        const char *str = spgemm_status_string(s);
        seen[s] = str;
        CHECK(str != NULL && str[0] != '\0');
        CHECK(str != NULL && strcmp(str, "unknown status") != 0);
    }
    for (i = 0; i <= SPGEMM_STATUS_INTERNAL; i++)
        for (j = 0; j < i; j++) distinct &= strcmp(seen[i], seen[j]) != 0;
    CHECK(distinct);
    CHECK(strcmp(spgemm_status_string(SPGEMM_STATUS_INTERNAL + 1), "unknown status") == 0);
    CHECK(strcmp(spgemm_status_string(-1), "unknown status") == 0);
    CHECK(strcmp(spgemm_status_string(INT32_MAX), "unknown status") == 0);
    CHECK(strcmp(spgemm_status_string(INT32_MIN), "unknown status") == 0);
}

static void test_destroy_null_and_version(void) {
    int32_t major = -1, minor = -1, patch = -1;
    CHECK_OK(NULL, spgemm_destroy(NULL));
    CHECK_OK(NULL, spgemm_matrix_destroy(NULL));
    CHECK_OK(NULL, spgemm_plan_destroy(NULL));
    CHECK_OK(NULL, spgemm_version(&major, &minor, &patch));
    CHECK(major == SPGEMM_VERSION_MAJOR && minor == SPGEMM_VERSION_MINOR &&
          patch == SPGEMM_VERSION_PATCH);
    CHECK_OK(NULL, spgemm_version(NULL, &minor, NULL));
}

/* Handle functions: NULL handle, NULL outputs, bad option values. */
static void test_handle_errors(void) {
    spgemm_handle_t *h = NULL;
    int32_t x = 5;
    spgemm_algorithm_t alg = 0;
    CHECK_ERR(NULL, spgemm_create(NULL), ST_NULL, WORDS("handle"));
    if (!CHECK_OK(NULL, spgemm_create(&h))) return;
    CHECK(spgemm_last_error(h) != NULL && spgemm_last_error(h)[0] == '\0');

    CHECK_ERR(NULL, spgemm_set_num_threads(NULL, 1), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_set_num_threads(h, -1), ST_INVAL, WORDS("num_threads"));
    CHECK_ERR(h, spgemm_set_num_threads(h, INT32_MIN), ST_INVAL, WORDS("num_threads"));
    CHECK_ERR(NULL, spgemm_get_num_threads(NULL, &x), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_get_num_threads(h, NULL), ST_NULL, WORDS("num_threads"));

    CHECK_ERR(NULL, spgemm_set_algorithm(NULL, SPGEMM_ALG_AUTO), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_set_algorithm(h, 99), ST_INVAL, WORDS("algorithm", "99"));
    CHECK_ERR(h, spgemm_set_algorithm(h, -1), ST_INVAL, WORDS("algorithm"));
    CHECK_OK(h, spgemm_get_algorithm(h, &alg));
    CHECK(alg == SPGEMM_ALG_AUTO); /* a rejected value changes nothing */
    CHECK_ERR(NULL, spgemm_get_algorithm(NULL, &alg), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_get_algorithm(h, NULL), ST_NULL, WORDS("algorithm"));

    CHECK_ERR(NULL, spgemm_set_sorted_output(NULL, 1), ST_NULL, WORDS("handle"));
    CHECK_ERR(NULL, spgemm_get_sorted_output(NULL, &x), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_get_sorted_output(h, NULL), ST_NULL, WORDS("sorted"));
    CHECK_ERR(NULL, spgemm_set_validation(NULL, 1), ST_NULL, WORDS("handle"));
    CHECK_ERR(NULL, spgemm_get_validation(NULL, &x), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_get_validation(h, NULL), ST_NULL, WORDS("enabled"));
    CHECK_ERR(NULL, spgemm_set_output_cache(NULL, 0), ST_NULL, WORDS("handle"));
    CHECK_ERR(NULL, spgemm_get_output_cache(NULL, NULL, NULL), ST_NULL, WORDS("handle"));

    /* Backend option: CUDA succeeds with a usable GPU, else NO_DEVICE with a message and
     * the option unchanged (CI has no GPU). */
    {
        spgemm_backend_t be = -1;
        spgemm_status_t st;
        CHECK_ERR(NULL, spgemm_set_backend(NULL, SPGEMM_BACKEND_CPU), ST_NULL, WORDS("handle"));
        CHECK_ERR(h, spgemm_set_backend(h, 3), ST_INVAL, WORDS("backend", "3"));
        CHECK_ERR(NULL, spgemm_get_backend(NULL, &be), ST_NULL, WORDS("handle"));
        CHECK_ERR(h, spgemm_get_backend(h, NULL), ST_NULL, WORDS("backend"));
        CHECK_OK(h, spgemm_get_backend(h, &be));
        CHECK(be == SPGEMM_BACKEND_AUTO);
        st = spgemm_set_backend(h, SPGEMM_BACKEND_CUDA);
        CHECK(st == SPGEMM_STATUS_SUCCESS || st == SPGEMM_STATUS_NO_DEVICE);
        if (st == SPGEMM_STATUS_NO_DEVICE) CHECK(spgemm_last_error(h)[0] != '\0');
        CHECK_OK(h, spgemm_get_backend(h, &be));
        CHECK(be == (st == SPGEMM_STATUS_SUCCESS ? SPGEMM_BACKEND_CUDA : SPGEMM_BACKEND_AUTO));
        CHECK_OK(h, spgemm_set_backend(h, SPGEMM_BACKEND_CPU));
        CHECK_OK(h, spgemm_get_backend(h, &be));
        CHECK(be == SPGEMM_BACKEND_CPU);
    }

    /* spgemm_last_error(NULL) describes the thread's latest call, whatever the object; a
     * handle's text describes the latest call on that handle (empty after a success) */
    CHECK_ERR(h, spgemm_set_algorithm(h, 99), ST_INVAL, WORDS("algorithm", "99"));
    CHECK(has_word(spgemm_last_error(NULL), "99"));
    CHECK_ERR(NULL, spgemm_set_num_threads(NULL, 1), ST_NULL, WORDS("handle"));
    CHECK(has_word(spgemm_last_error(h), "99"));
    CHECK(!has_word(spgemm_last_error(h), "handle"));
    CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_KKLP)); /* a success clears the text */
    CHECK(spgemm_last_error(h)[0] == '\0');
    CHECK(spgemm_last_error(NULL)[0] == '\0');
    CHECK_OK(h, spgemm_destroy(h));
}

/* Matrix creation: argument checks made at creation time. */
static void test_create_errors(void) {
    spgemm_matrix_t *M = NULL;
    int32_t buf32[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int64_t buf64[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    double vals[8] = {0};
    const char *mis32 = (const char *)buf32 + 1; /* misaligned for int32 */
    const char *mis64 = (const char *)buf64 + 4; /* misaligned for int64 */
    const char *misd = (const char *)vals + 2;   /* misaligned for double */

    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(NULL, 3, 4, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_INT32,
                                       A_CI, SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_NULL, WORDS("matrix"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, 4, SPGEMM_INDEX_INT32, NULL, SPGEMM_INDEX_INT32,
                                       A_CI, SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_NULL, WORDS("row_offsets"));
    CHECK(M == NULL);
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, -1, 4, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_INT32,
                                       A_CI, SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("nrows", "-1"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, -7, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_INT32,
                                       A_CI, SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("ncols", "7"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, 4, 5, A_RP, SPGEMM_INDEX_INT32, A_CI,
                                       SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("offset_type", "5"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, 4, -1, A_RP, SPGEMM_INDEX_INT32, A_CI,
                                       SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("offset_type"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, 4, SPGEMM_INDEX_INT32, A_RP, 9, A_CI,
                                       SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("index_type", "9"));
    /* size_t is for row offsets only */
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, 4, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_SIZE_T,
                                       A_CI, SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("index_type", "size_t"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, 4, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_INT32,
                                       A_CI, 4, A_V, 0),
              ST_INVAL, WORDS("value_type", "4"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, 4, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_INT32,
                                       A_CI, SPGEMM_VALUE_FLOAT64, A_V, 2),
              ST_INVAL, WORDS("base", "2"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 3, 4, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_INT32,
                                       A_CI, SPGEMM_VALUE_FLOAT64, A_V, -1),
              ST_INVAL, WORDS("base"));
    /* misaligned arrays (1 row, 1 entry so that only a few bytes are read) */
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 1, 4, SPGEMM_INDEX_INT32, mis32, SPGEMM_INDEX_INT32,
                                       A_CI, SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("row_offsets"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 1, 4, SPGEMM_INDEX_INT64, mis64, SPGEMM_INDEX_INT64,
                                       buf64, SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("row_offsets"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 1, 4, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_INT32,
                                       mis32, SPGEMM_VALUE_FLOAT64, A_V, 0),
              ST_INVAL, WORDS("col_indices"));
    CHECK_ERR(NULL,
              spgemm_matrix_create_csr(&M, 1, 4, SPGEMM_INDEX_INT32, A_RP, SPGEMM_INDEX_INT32,
                                       A_CI, SPGEMM_VALUE_FLOAT64, misd, 0),
              ST_INVAL, WORDS("values"));
    CHECK(M == NULL);
    /* col_indices may be NULL only when there are no entries; the header says contents
     * (and so nnz) are checked when the matrix is used: test_use_time_errors */
    {
        const int32_t empty_rp[] = {0, 0, 0};
        spgemm_matrix_t *E = NULL;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&E, 2, 4, SPGEMM_INDEX_INT32, empty_rp,
                                                SPGEMM_INDEX_INT32, NULL, SPGEMM_VALUE_FLOAT64,
                                                NULL, 0));
        spgemm_matrix_destroy(E);
    }
    /* matrix queries */
    {
        int64_t n = 0;
        const void *p = NULL;
        CHECK_ERR(NULL, spgemm_matrix_get_info(NULL, &n, &n, &n, NULL, NULL, NULL, NULL), ST_NULL,
                  WORDS("matrix"));
        CHECK_ERR(NULL, spgemm_matrix_export_csr(NULL, &p, &p, &p), ST_NULL, WORDS("matrix"));
    }
}

/*
 * Structure errors found when a matrix is used, with the matrix name (A or B) and the
 * row or position in the message. Made through spgemm_symbolic and spgemm_multiply.
 */
static void check_structure_error(spgemm_handle_t *h, const spgemm_matrix_t *a,
                                  const spgemm_matrix_t *b, spgemm_status_t want,
                                  const char *const *words, const char *what) {
    spgemm_plan_t *plan = NULL;
    spgemm_matrix_t *c = NULL;
    int32_t crp[8];
    int i, untouched = 1;
    for (i = 0; i < 8; i++) crp[i] = -12345;
    fprintf(stderr, "  [%s]\n", what);
    CHECK_ERR(h, spgemm_symbolic(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crp, &plan),
              want, words);
    for (i = 0; i < 8; i++) untouched &= crp[i] == -12345;
    CHECK(untouched);
    CHECK(plan == NULL);
    CHECK_ERR(h, spgemm_multiply(h, a, b, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, &c), want,
              words);
    CHECK(c == NULL);
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(c);
}

static void test_structure_errors(spgemm_handle_t *h) {
    spgemm_matrix_t *A = make32(3, 4, A_RP, A_CI, A_V, 0);
    spgemm_matrix_t *B = make32(4, 2, B_RP, B_CI, B_V, 0);
    spgemm_matrix_t *X = NULL;
    int v;
    for (v = 1; v >= 0; v--) {
        /* offsets not starting at the base: always checked (O(1)) */
        const int32_t rp_start1[] = {1, 2, 3, 5}; /* base 0 */
        const int32_t rp_start0_b1[] = {0, 2, 3, 4, 5}; /* base 1 */
        CHECK_OK(h, spgemm_set_validation(h, v));
        X = make32(3, 4, rp_start1, A_CI, A_V, 0);
        check_structure_error(h, X, B, SPGEMM_STATUS_INVALID_STRUCTURE,
                              WORDS("A", "row_offsets", "1"), "A offsets start at 1, base 0");
        spgemm_matrix_destroy(X);
        X = make32(4, 2, rp_start0_b1, B_CI, B_V, 1);
        check_structure_error(h, A, X, SPGEMM_STATUS_INVALID_STRUCTURE,
                              WORDS("B", "row_offsets", "0"), "B offsets start at 0, base 1");
        spgemm_matrix_destroy(X);
    }
    CHECK_OK(h, spgemm_set_validation(h, 1));
    {
        /* decreasing offsets in B at row 2: 0 2 3 1 5 */
        const int32_t rp_dec[] = {0, 2, 3, 1, 5};
        X = make32(4, 2, rp_dec, B_CI, B_V, 0);
        check_structure_error(h, A, X, SPGEMM_STATUS_INVALID_STRUCTURE,
                              WORDS("B", "row_offsets", "2"), "B offsets decrease at row 2");
        spgemm_matrix_destroy(X);
    }
    {
        /* column 0 with base 1 in A, position 3 (row 2) */
        const int32_t rp1[] = {1, 3, 3, 5}, ci1[] = {1, 3, 2, 0};
        X = make32(3, 4, rp1, ci1, A_V, 1);
        check_structure_error(h, X, B, SPGEMM_STATUS_INDEX_OUT_OF_RANGE,
                              WORDS("A", "column", "0", "3", "2"),
                              "A column 0 with base 1 at position 3, row 2");
        spgemm_matrix_destroy(X);
    }
    {
        /* column ncols (= 2) with base 0 in B, position 2 (row 1) */
        const int32_t ci_bad[] = {0, 1, 2, 0, 1};
        X = make32(4, 2, B_RP, ci_bad, B_V, 0);
        check_structure_error(h, A, X, SPGEMM_STATUS_INDEX_OUT_OF_RANGE,
                              WORDS("B", "column", "2", "1"),
                              "B column 2 = ncols at position 2, row 1");
        spgemm_matrix_destroy(X);
    }
    {
        /* negative column */
        const int32_t ci_neg[] = {0, 1, 1, -5, 1};
        X = make32(4, 2, B_RP, ci_neg, B_V, 0);
        check_structure_error(h, A, X, SPGEMM_STATUS_INDEX_OUT_OF_RANGE,
                              WORDS("B", "column", "-5", "3"), "B column -5 at position 3");
        spgemm_matrix_destroy(X);
    }
    {
        /* last row offset below the base: get_info reports it */
        const int32_t rp_bad[] = {1, 0};
        int64_t nnz = 0;
        X = NULL;
        spgemm_status_t s = spgemm_matrix_create_csr(&X, 1, 4, SPGEMM_INDEX_INT32, rp_bad,
                                                     SPGEMM_INDEX_INT32, A_CI,
                                                     SPGEMM_VALUE_FLOAT64, A_V, 1);
        if (s == SPGEMM_STATUS_SUCCESS) {
            CHECK_ERR(NULL, spgemm_matrix_get_info(X, NULL, NULL, &nnz, NULL, NULL, NULL, NULL),
                      SPGEMM_STATUS_INVALID_STRUCTURE, WORDS("row_offsets"));
            check_structure_error(h, X, B, SPGEMM_STATUS_INVALID_STRUCTURE,
                                  WORDS("A", "row_offsets"), "A last offset below base");
        } else {
            CHECK_ERR(NULL, s, SPGEMM_STATUS_INVALID_STRUCTURE, WORDS("row_offsets"));
        }
        spgemm_matrix_destroy(X);
    }
    {
        /* negative offset in 64-bit offsets (row 0 decreases to -5) */
        const int64_t rp_neg[] = {0, -5, 4, 4}, ci64[] = {0, 2, 1, 3};
        X = NULL;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&X, 3, 4, SPGEMM_INDEX_INT64, rp_neg,
                                                SPGEMM_INDEX_INT64, ci64, SPGEMM_VALUE_FLOAT64,
                                                A_V, 0));
        const int64_t b_rp64[] = {0, 2, 3, 4, 5}, b_ci64[] = {0, 1, 1, 0, 1};
        spgemm_matrix_t *B64 = NULL;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&B64, 4, 2, SPGEMM_INDEX_INT64, b_rp64,
                                                SPGEMM_INDEX_INT64, b_ci64, SPGEMM_VALUE_FLOAT64,
                                                B_V, 0));
        check_structure_error(h, X, B64, SPGEMM_STATUS_INVALID_STRUCTURE,
                              WORDS("A", "row_offsets", "0", "-5"), "A offset -5 at row 1");
        spgemm_matrix_destroy(X);
        spgemm_matrix_destroy(B64);
    }
    {
        /* size_t offsets whose last entry is SIZE_MAX: nnz cannot be addressed */
        const size_t rp_huge[] = {0, 0, 0, SIZE_MAX};
        const size_t b_rp_sz[] = {0, 2, 3, 4, 5};
        spgemm_matrix_t *BS = NULL;
        X = NULL;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&X, 3, 4, SPGEMM_INDEX_SIZE_T, rp_huge,
                                                SPGEMM_INDEX_INT32, A_CI, SPGEMM_VALUE_FLOAT64,
                                                A_V, 0));
        CHECK_OK(NULL, spgemm_matrix_create_csr(&BS, 4, 2, SPGEMM_INDEX_SIZE_T, b_rp_sz,
                                                SPGEMM_INDEX_INT32, B_CI, SPGEMM_VALUE_FLOAT64,
                                                B_V, 0));
        check_structure_error(h, X, BS, SPGEMM_STATUS_INDEX_OVERFLOW,
                              WORDS("A", "col_indices"), "A with SIZE_MAX entries");
        spgemm_matrix_destroy(X);
        spgemm_matrix_destroy(BS);
    }
    /* dimension mismatch: A is 3x4, B is 2x2 (its first two rows) */
    X = make32(2, 2, B_RP, B_CI, B_V, 0);
    check_structure_error(h, A, X, SPGEMM_STATUS_DIMENSION_MISMATCH, WORDS("A", "B", "4", "2"),
                          "4 columns times 2 rows");
    spgemm_matrix_destroy(X);
    /* A and B of different types */
    {
        const int64_t b_rp64[] = {0, 2, 3, 4, 5}, b_ci64[] = {0, 1, 1, 0, 1};
        const float b_vf[] = {1, 2, 1, 5, -1};
        X = NULL;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&X, 4, 2, SPGEMM_INDEX_INT64, b_rp64,
                                                SPGEMM_INDEX_INT32, B_CI, SPGEMM_VALUE_FLOAT64,
                                                B_V, 0));
        check_structure_error(h, A, X, SPGEMM_STATUS_TYPE_MISMATCH, WORDS("A", "B"),
                              "offset types differ");
        spgemm_matrix_destroy(X);
        X = NULL;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&X, 4, 2, SPGEMM_INDEX_INT32, B_RP,
                                                SPGEMM_INDEX_INT64, b_ci64, SPGEMM_VALUE_FLOAT64,
                                                B_V, 0));
        check_structure_error(h, A, X, SPGEMM_STATUS_TYPE_MISMATCH, WORDS("A", "B"),
                              "index types differ");
        spgemm_matrix_destroy(X);
        X = NULL;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&X, 4, 2, SPGEMM_INDEX_INT32, B_RP,
                                                SPGEMM_INDEX_INT32, B_CI, SPGEMM_VALUE_FLOAT32,
                                                b_vf, 0));
        check_structure_error(h, A, X, SPGEMM_STATUS_TYPE_MISMATCH, WORDS("A", "B"),
                              "value types differ");
        spgemm_matrix_destroy(X);
    }
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
}

/* Errors of descriptors that are only detectable when the matrix is used. */
static void test_use_time_errors(spgemm_handle_t *h) {
    spgemm_matrix_t *A = make32(3, 4, A_RP, A_CI, A_V, 0);
    spgemm_matrix_t *B = make32(4, 2, B_RP, B_CI, B_V, 0);
    spgemm_matrix_t *X = NULL;
    int64_t buf64[4] = {0, 0, 0, 0};
    double vals[4] = {0, 0, 0, 0};
    int64_t nnz = -1;
    /* col_indices NULL while row offsets say there are 4 entries */
    X = make32(3, 4, A_RP, NULL, A_V, 0);
    check_structure_error(h, X, B, ST_NULL, WORDS("A", "col_indices", "4"),
                          "A col_indices NULL, 4 entries");
    CHECK_ERR(NULL, spgemm_matrix_get_info(X, NULL, NULL, &nnz, NULL, NULL, NULL, NULL),
              ST_NULL, WORDS("col_indices"));
    spgemm_matrix_destroy(X);
    /* values given for B but NULL col_indices */
    X = make32(4, 2, B_RP, NULL, B_V, 0);
    check_structure_error(h, A, X, ST_NULL, WORDS("B", "col_indices", "5"),
                          "B col_indices NULL, 5 entries");
    spgemm_matrix_destroy(X);
    /* more rows than memory can address: the size check comes before any read */
    X = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&X, INT64_MAX, 4, SPGEMM_INDEX_INT64, buf64,
                                            SPGEMM_INDEX_INT64, buf64, SPGEMM_VALUE_FLOAT64,
                                            vals, 0));
    if (X != NULL) {
        spgemm_matrix_t *Y = NULL;
        const int64_t y_rp[] = {0, 0, 0, 0, 0};
        CHECK_OK(NULL, spgemm_matrix_create_csr(&Y, 4, 2, SPGEMM_INDEX_INT64, y_rp,
                                                SPGEMM_INDEX_INT64, NULL, SPGEMM_VALUE_FLOAT64,
                                                NULL, 0));
        check_structure_error(h, X, Y, SPGEMM_STATUS_INDEX_OVERFLOW, WORDS("A", "row_offsets"),
                              "A with INT64_MAX rows");
        CHECK_ERR(NULL, spgemm_matrix_get_info(X, NULL, NULL, &nnz, NULL, NULL, NULL, NULL),
                  SPGEMM_STATUS_INDEX_OVERFLOW, WORDS("row_offsets"));
        spgemm_matrix_destroy(Y);
    }
    spgemm_matrix_destroy(X);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
}

/* NULL pointers and bad C formats in symbolic, multiply and plan queries. */
static void test_symbolic_multiply_args(spgemm_handle_t *h) {
    spgemm_matrix_t *A = make32(3, 4, A_RP, A_CI, A_V, 0);
    spgemm_matrix_t *B = make32(4, 2, B_RP, B_CI, B_V, 0);
    spgemm_plan_t *plan = NULL;
    spgemm_matrix_t *C = NULL;
    int32_t crp[4];
    int64_t n = 0;
    spgemm_algorithm_t s1, s2;
    CHECK_ERR(NULL, spgemm_symbolic(NULL, A, B, 0, 0, 0, crp, &plan), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_symbolic(h, NULL, B, 0, 0, 0, crp, &plan), ST_NULL, WORDS("A"));
    CHECK_ERR(h, spgemm_symbolic(h, A, NULL, 0, 0, 0, crp, &plan), ST_NULL, WORDS("B"));
    CHECK_ERR(h, spgemm_symbolic(h, A, B, 0, 0, 0, crp, NULL), ST_NULL, WORDS("plan"));
    CHECK_ERR(h, spgemm_symbolic(h, A, B, 3, 0, 0, crp, &plan), ST_INVAL,
              WORDS("c_offset_type", "3"));
    CHECK_ERR(h, spgemm_symbolic(h, A, B, 0, SPGEMM_INDEX_SIZE_T, 0, crp, &plan), ST_INVAL,
              WORDS("c_index_type"));
    CHECK_ERR(h, spgemm_symbolic(h, A, B, 0, -2, 0, crp, &plan), ST_INVAL, WORDS("c_index_type"));
    CHECK_ERR(h, spgemm_symbolic(h, A, B, 0, 0, 2, crp, &plan), ST_INVAL, WORDS("c_base", "2"));
    CHECK(plan == NULL);

    CHECK_ERR(NULL, spgemm_multiply(NULL, A, B, 0, 0, 0, &C), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_multiply(h, NULL, B, 0, 0, 0, &C), ST_NULL, WORDS("A"));
    CHECK_ERR(h, spgemm_multiply(h, A, NULL, 0, 0, 0, &C), ST_NULL, WORDS("B"));
    CHECK_ERR(h, spgemm_multiply(h, A, B, 0, 0, 0, NULL), ST_NULL, WORDS("c"));
    CHECK_ERR(h, spgemm_multiply(h, A, B, 7, 0, 0, &C), ST_INVAL, WORDS("c_offset_type", "7"));
    CHECK_ERR(h, spgemm_multiply(h, A, B, 0, 2, 0, &C), ST_INVAL, WORDS("c_index_type"));
    CHECK_ERR(h, spgemm_multiply(h, A, B, 0, 0, 5, &C), ST_INVAL, WORDS("c_base", "5"));
    CHECK(C == NULL);

    CHECK_ERR(NULL, spgemm_plan_row_offsets(NULL, crp), ST_NULL, WORDS("plan"));
    CHECK_ERR(NULL, spgemm_plan_get_nnz(NULL, &n), ST_NULL, WORDS("plan"));
    CHECK_ERR(NULL, spgemm_plan_get_info(NULL, &n, &n, &n), ST_NULL, WORDS("plan"));
    CHECK_ERR(NULL, spgemm_plan_get_algorithm(NULL, &s1, &s2), ST_NULL, WORDS("plan"));
    if (CHECK_OK(h, spgemm_symbolic(h, A, B, 0, 0, 0, NULL, &plan))) {
        CHECK_ERR(NULL, spgemm_plan_row_offsets(plan, NULL), ST_NULL, WORDS("c_row_offsets"));
        CHECK_ERR(NULL, spgemm_plan_get_nnz(plan, NULL), ST_NULL, WORDS("nnz"));
    }
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
}

/* Numeric-phase errors: NULL arguments, missing values, types and structure that differ
 * from the plan's. */
static void test_numeric_errors(spgemm_handle_t *h) {
    spgemm_matrix_t *A = make32(3, 4, A_RP, A_CI, A_V, 0);
    spgemm_matrix_t *B = make32(4, 2, B_RP, B_CI, B_V, 0);
    spgemm_matrix_t *X = NULL;
    spgemm_plan_t *plan = NULL;
    int32_t crp[4], cci[3];
    double cv[3];
    int v;
    if (!CHECK_OK(h, spgemm_symbolic(h, A, B, 0, 0, 0, crp, &plan))) return;
    CHECK_ERR(NULL, spgemm_numeric(NULL, plan, A, B, cci, cv), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_numeric(h, NULL, A, B, cci, cv), ST_NULL, WORDS("plan"));
    CHECK_ERR(h, spgemm_numeric(h, plan, NULL, B, cci, cv), ST_NULL, WORDS("A"));
    CHECK_ERR(h, spgemm_numeric(h, plan, A, NULL, cci, cv), ST_NULL, WORDS("B"));
    CHECK_ERR(h, spgemm_numeric(h, plan, A, B, NULL, cv), ST_NULL, WORDS("c_col_indices"));
    CHECK_ERR(h, spgemm_numeric(h, plan, A, B, cci, NULL), ST_NULL, WORDS("c_values"));
    CHECK_ERR(NULL, spgemm_numeric_structure(NULL, plan, A, B, cci), ST_NULL, WORDS("handle"));
    CHECK_ERR(h, spgemm_numeric_structure(h, NULL, A, B, cci), ST_NULL, WORDS("plan"));
    CHECK_ERR(h, spgemm_numeric_structure(h, plan, NULL, B, cci), ST_NULL, WORDS("A"));
    CHECK_ERR(h, spgemm_numeric_structure(h, plan, A, NULL, cci), ST_NULL, WORDS("B"));
    CHECK_ERR(h, spgemm_numeric_structure(h, plan, A, B, NULL), ST_NULL,
              WORDS("c_col_indices"));
    /* values requested but A (then B) has none */
    X = make32(3, 4, A_RP, A_CI, NULL, 0);
    CHECK_ERR(h, spgemm_numeric(h, plan, X, B, cci, cv), ST_INVAL, WORDS("A", "values"));
    CHECK_OK(h, spgemm_numeric_structure(h, plan, X, B, cci)); /* fine without values */
    spgemm_matrix_destroy(X);
    X = make32(4, 2, B_RP, B_CI, NULL, 0);
    CHECK_ERR(h, spgemm_numeric(h, plan, A, X, cci, cv), ST_INVAL, WORDS("B", "values"));
    spgemm_matrix_destroy(X);
    /* types differ from the plan's: same structure in float */
    {
        const float af[] = {1, 2, 3, 4}, bf[] = {1, 2, 1, 5, -1};
        spgemm_matrix_t *FA = NULL, *FB = NULL;
        float cf[3];
        CHECK_OK(NULL, spgemm_matrix_create_csr(&FA, 3, 4, 0, A_RP, 0, A_CI,
                                                SPGEMM_VALUE_FLOAT32, af, 0));
        CHECK_OK(NULL, spgemm_matrix_create_csr(&FB, 4, 2, 0, B_RP, 0, B_CI,
                                                SPGEMM_VALUE_FLOAT32, bf, 0));
        CHECK_ERR(h, spgemm_numeric(h, plan, FA, FB, cci, cf), SPGEMM_STATUS_TYPE_MISMATCH,
                  WORDS("A", "B"));
        spgemm_matrix_destroy(FA);
        spgemm_matrix_destroy(FB);
    }
    for (v = 1; v >= 0; v--) {
        CHECK_OK(h, spgemm_set_validation(h, v));
        /* shape differs from the plan's: A with one more column */
        X = make32(3, 5, A_RP, A_CI, A_V, 0);
        {
            spgemm_matrix_t *B5 = NULL;
            const int32_t b5rp[] = {0, 2, 3, 4, 5, 5};
            B5 = make32(5, 2, b5rp, B_CI, B_V, 0);
            CHECK_ERR(h, spgemm_numeric(h, plan, X, B5, cci, cv), SPGEMM_STATUS_PLAN_MISMATCH,
                      WORDS("A"));
            spgemm_matrix_destroy(B5);
        }
        spgemm_matrix_destroy(X);
        /* B with 3 columns instead of 2 */
        X = make32(4, 3, B_RP, B_CI, B_V, 0);
        CHECK_ERR(h, spgemm_numeric(h, plan, A, X, cci, cv), SPGEMM_STATUS_PLAN_MISMATCH,
                  WORDS("B"));
        spgemm_matrix_destroy(X);
    }
    CHECK_OK(h, spgemm_set_validation(h, 1));
    /* same nnz, one column moved: structure differs (found with validation on) */
    {
        const int32_t a_moved[] = {0, 1, 1, 3}; /* A(0,2) moved to A(0,1) */
        const int32_t b_moved[] = {0, 1, 1, 0, 0}; /* B(3,1) moved to B(3,0) */
        double before[3];
        X = make32(3, 4, A_RP, a_moved, A_V, 0);
        cv[0] = cv[1] = cv[2] = 42.0;
        memcpy(before, cv, sizeof cv);
        CHECK_ERR(h, spgemm_numeric(h, plan, X, B, cci, cv), SPGEMM_STATUS_PLAN_MISMATCH,
                  WORDS("A"));
        CHECK(memcmp(before, cv, sizeof cv) == 0); /* nothing written */
        CHECK_ERR(h, spgemm_numeric_structure(h, plan, X, B, cci), SPGEMM_STATUS_PLAN_MISMATCH,
                  WORDS("A"));
        spgemm_matrix_destroy(X);
        X = make32(4, 2, B_RP, b_moved, B_V, 0);
        CHECK_ERR(h, spgemm_numeric(h, plan, A, X, cci, cv), SPGEMM_STATUS_PLAN_MISMATCH,
                  WORDS("B"));
        spgemm_matrix_destroy(X);
        /* same structure through other arrays (copies): accepted */
        {
            int32_t rp_copy[4], ci_copy[4];
            memcpy(rp_copy, A_RP, sizeof rp_copy);
            memcpy(ci_copy, A_CI, sizeof ci_copy);
            X = make32(3, 4, rp_copy, ci_copy, A_V, 0);
            CHECK_OK(h, spgemm_numeric(h, plan, X, B, cci, cv));
            CHECK(cv[0] == 11 && cv[1] == 2 && cv[2] == -1);
            spgemm_matrix_destroy(X);
        }
    }
    /* with validation off, invalid input must still not crash (result unspecified) */
    {
        const int32_t ci_bad[] = {0, 2, 1, 1000};
        spgemm_status_t s;
        CHECK_OK(h, spgemm_set_validation(h, 0));
        X = make32(3, 4, A_RP, ci_bad, A_V, 0);
        s = spgemm_numeric(h, plan, X, B, cci, cv);
        CHECK(s == SPGEMM_STATUS_SUCCESS || s == SPGEMM_STATUS_INTERNAL ||
              s == SPGEMM_STATUS_PLAN_MISMATCH || s == SPGEMM_STATUS_INDEX_OUT_OF_RANGE);
        spgemm_matrix_destroy(X);
        CHECK_OK(h, spgemm_set_validation(h, 1));
    }
    /* nnz(C) = 0: NULL output arrays are fine */
    {
        const int32_t zrp[] = {0, 0, 0, 0};
        spgemm_plan_t *zp = NULL;
        int64_t nnz = -1;
        X = make32(3, 4, zrp, NULL, NULL, 0);
        spgemm_matrix_t *Z = make32(3, 4, zrp, NULL, A_V, 0);
        if (CHECK_OK(h, spgemm_symbolic(h, X, B, 0, 0, 0, NULL, &zp))) {
            CHECK_OK(NULL, spgemm_plan_get_nnz(zp, &nnz));
            CHECK(nnz == 0);
            CHECK_OK(h, spgemm_numeric_structure(h, zp, X, B, NULL));
            CHECK_OK(h, spgemm_numeric(h, zp, Z, B, NULL, NULL));
        }
        spgemm_plan_destroy(zp);
        spgemm_matrix_destroy(X);
        spgemm_matrix_destroy(Z);
    }
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
}

/*
 * 32-bit overflow of C's row offsets: C = u*v^T with u, v of 46341 ones has
 * 46341^2 = 2147488281 > 2^31 - 1 entries. With int32 offsets symbolic fails with
 * INDEX_OVERFLOW and leaves the caller's row offsets untouched.
 */
static void test_nnz_overflow(spgemm_handle_t *h) {
    const int32_t n = 46341;
    int32_t *u_rp = (int32_t *)xmalloc(((size_t)n + 1) * sizeof(int32_t));
    int32_t *u_ci = (int32_t *)xcalloc((size_t)n, sizeof(int32_t));
    double *ones = (double *)xmalloc((size_t)n * sizeof(double));
    int32_t vt_rp[2] = {0, n};
    int32_t *vt_ci = (int32_t *)xmalloc((size_t)n * sizeof(int32_t));
    int32_t *crp = (int32_t *)xmalloc(((size_t)n + 1) * sizeof(int32_t));
    spgemm_matrix_t *U = NULL, *VT = NULL, *C = NULL;
    spgemm_plan_t *plan = NULL;
    int32_t i;
    int untouched = 1;
    for (i = 0; i <= n; i++) u_rp[i] = i;
    for (i = 0; i < n; i++) {
        vt_ci[i] = i;
        ones[i] = 1.0;
    }
    for (i = 0; i <= n; i++) crp[i] = 0x5eed;
    U = make32(n, 1, u_rp, u_ci, ones, 0);
    VT = make32(1, n, vt_rp, vt_ci, ones, 0);
    CHECK_ERR(h, spgemm_symbolic(h, U, VT, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crp, &plan),
              SPGEMM_STATUS_INDEX_OVERFLOW, WORDS("C", "int32", "2147488281"));
    for (i = 0; i <= n; i++) untouched &= crp[i] == 0x5eed;
    CHECK(untouched);
    CHECK(plan == NULL);
    CHECK_ERR(h, spgemm_multiply(h, U, VT, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, &C),
              SPGEMM_STATUS_INDEX_OVERFLOW, WORDS("C", "int32", "2147488281"));
    CHECK(C == NULL);
    spgemm_matrix_destroy(U);
    spgemm_matrix_destroy(VT);
    free(u_rp);
    free(u_ci);
    free(ones);
    free(vt_ci);
    free(crp);
}

/* ncols(B) > INT32_MAX with int64 inputs: int32 column indices of C overflow. */
static void test_ncols_overflow(spgemm_handle_t *h) {
    const int64_t k = (int64_t)INT32_MAX + 10;
    const int64_t a_rp[] = {0, 2, 3}, a_ci[] = {0, 1, 1};
    const double a_v[] = {1, 2, 3};
    const int64_t b_rp[] = {0, 2, 3}, b_ci[] = {5, k - 1, (int64_t)INT32_MAX + 1};
    const double b_v[] = {1, 1, 1};
    spgemm_matrix_t *A = NULL, *B = NULL, *C = NULL;
    spgemm_plan_t *plan = NULL;
    int32_t crp[3] = {-9, -9, -9};
    CHECK_OK(NULL, spgemm_matrix_create_csr(&A, 2, 2, SPGEMM_INDEX_INT64, a_rp,
                                            SPGEMM_INDEX_INT64, a_ci, SPGEMM_VALUE_FLOAT64, a_v,
                                            0));
    CHECK_OK(NULL, spgemm_matrix_create_csr(&B, 2, k, SPGEMM_INDEX_INT64, b_rp,
                                            SPGEMM_INDEX_INT64, b_ci, SPGEMM_VALUE_FLOAT64, b_v,
                                            0));
    CHECK_ERR(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crp, &plan),
              SPGEMM_STATUS_INDEX_OVERFLOW, WORDS("C", "int32", "2147483657"));
    CHECK(crp[0] == -9 && crp[1] == -9 && crp[2] == -9);
    CHECK(plan == NULL);
    CHECK_ERR(h, spgemm_multiply(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, &C),
              SPGEMM_STATUS_INDEX_OVERFLOW, WORDS("C", "int32", "2147483657"));
    CHECK(C == NULL);
    /* int64 column indices of C: fine, with the library choosing the algorithm */
    {
        int64_t ci[4] = {0, 0, 0, 0}, nnz = -1;
        double cv[4] = {0, 0, 0, 0};
        CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
        if (CHECK_OK(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64, 0, crp,
                                        &plan))) {
            CHECK_OK(NULL, spgemm_plan_get_nnz(plan, &nnz));
            /* row 0 = 1*B0 + 2*B1 = {5: 1, k-1: 1, 2^31: 2}; row 1 = 3*B1 = {2^31: 3} */
            CHECK(nnz == 4);
            CHECK(crp[0] == 0 && crp[1] == 3 && crp[2] == 4);
            if (nnz == 4 && CHECK_OK(h, spgemm_numeric(h, plan, A, B, ci, cv))) {
                CHECK(ci[0] == 5 && ci[1] == (int64_t)INT32_MAX + 1 && ci[2] == k - 1 &&
                      ci[3] == (int64_t)INT32_MAX + 1);
                CHECK(cv[0] == 1 && cv[1] == 2 && cv[2] == 1 && cv[3] == 3);
            }
        }
        spgemm_plan_destroy(plan);
    }
    /* the dense accumulator cannot index 2^32 or more columns: NOT_SUPPORTED when forced */
    {
        const int64_t big = (int64_t)1 << 32; /* k = 2^32 + 3 */
        const int64_t c_rp[] = {0, 2, 3}, c_ci[] = {5, big + 2, big};
        spgemm_matrix_t *W = NULL;
        int64_t nnz = -1;
        CHECK_OK(NULL, spgemm_matrix_create_csr(&W, 2, big + 3, SPGEMM_INDEX_INT64, c_rp,
                                                SPGEMM_INDEX_INT64, c_ci, SPGEMM_VALUE_FLOAT64,
                                                b_v, 0));
        CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_KKDENSE));
        CHECK_ERR(h, spgemm_symbolic(h, A, W, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64, 0, NULL,
                                     &plan),
                  SPGEMM_STATUS_NOT_SUPPORTED, WORDS("4294967299"));
        CHECK(plan == NULL);
        CHECK_OK(h, spgemm_set_algorithm(h, SPGEMM_ALG_AUTO));
        if (CHECK_OK(h, spgemm_symbolic(h, A, W, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64, 0, NULL,
                                        &plan))) {
            CHECK_OK(NULL, spgemm_plan_get_nnz(plan, &nnz));
            CHECK(nnz == 4);
        }
        spgemm_plan_destroy(plan);
        spgemm_matrix_destroy(W);
    }
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
}

/*
 * The exact int32 limit: nnz(C) = 46340 * 46341 + 41707 = 2^31 - 1. With base 0 the last
 * row offset is INT32_MAX and fits; with base 1 it would be 2^31: INDEX_OVERFLOW, and the
 * caller's row offsets are untouched.
 */
static void test_nnz_at_int32_limit(spgemm_handle_t *h) {
    const int32_t p = 46340, q = 46341, r = 41707, m = p + 1;
    int32_t *a_rp = (int32_t *)xmalloc(((size_t)m + 1) * sizeof(int32_t));
    int32_t *a_ci = (int32_t *)xmalloc((size_t)m * sizeof(int32_t));
    int32_t b_rp[3] = {0, q, q + r};
    int32_t *b_ci = (int32_t *)xmalloc(((size_t)q + (size_t)r) * sizeof(int32_t));
    int32_t *crp = (int32_t *)xmalloc(((size_t)m + 1) * sizeof(int32_t));
    spgemm_matrix_t *A = NULL, *B = NULL;
    spgemm_plan_t *plan = NULL;
    int64_t nnz = -1;
    int32_t i;
    int untouched = 1;
    for (i = 0; i <= m; i++) a_rp[i] = i;
    for (i = 0; i < m; i++) a_ci[i] = i < p ? 0 : 1; /* rows 0..p-1: B row 0; row p: B row 1 */
    for (i = 0; i < q; i++) b_ci[i] = i;
    for (i = 0; i < r; i++) b_ci[q + i] = i;
    A = make32(m, 2, a_rp, a_ci, NULL, 0);
    B = make32(2, q, b_rp, b_ci, NULL, 0);
    if (CHECK_OK(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, crp,
                                    &plan))) {
        CHECK_OK(NULL, spgemm_plan_get_nnz(plan, &nnz));
        CHECK(nnz == INT32_MAX);
        CHECK(crp[0] == 0 && crp[1] == q && crp[p] == (int32_t)((int64_t)p * q) &&
              crp[m] == INT32_MAX);
    }
    spgemm_plan_destroy(plan);
    plan = NULL;
    for (i = 0; i <= m; i++) crp[i] = 0x5eed;
    CHECK_ERR(h, spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 1, crp, &plan),
              SPGEMM_STATUS_INDEX_OVERFLOW, WORDS("C", "int32", "2147483647"));
    for (i = 0; i <= m; i++) untouched &= crp[i] == 0x5eed;
    CHECK(untouched);
    CHECK(plan == NULL);
    spgemm_matrix_destroy(A);
    spgemm_matrix_destroy(B);
    free(a_rp);
    free(a_ci);
    free(b_ci);
    free(crp);
}

/*
 * Column indices of C at the int32 limit: with k = 2^31 - 1 columns (base 0 or 1) and with
 * k = 2^31 and base 0 the largest index fits; k = 2^31 with base 1 needs index 2^31.
 */
static void test_ncols_at_int32_limit(spgemm_handle_t *h) {
    const int64_t one_rp[] = {0, 1}, zero_ci[] = {0};
    const double one[] = {1.0};
    int64_t k;
    int base;
    for (base = 0; base <= 1; base++)
        for (k = INT32_MAX; k <= (int64_t)INT32_MAX + 1; k++) {
            const int64_t last_ci[] = {k - 1};
            spgemm_matrix_t *X = NULL, *Y = NULL;
            spgemm_plan_t *plan = NULL;
            int32_t rp[2] = {-1, -1}, ci[1] = {-1};
            double cv[1] = {0};
            int fits = base == 0 || k <= INT32_MAX;
            CHECK_OK(NULL, spgemm_matrix_create_csr(&X, 1, 1, SPGEMM_INDEX_INT64, one_rp,
                                                    SPGEMM_INDEX_INT64, zero_ci,
                                                    SPGEMM_VALUE_FLOAT64, one, 0));
            CHECK_OK(NULL, spgemm_matrix_create_csr(&Y, 1, k, SPGEMM_INDEX_INT64, one_rp,
                                                    SPGEMM_INDEX_INT64, last_ci,
                                                    SPGEMM_VALUE_FLOAT64, one, 0));
            if (fits) {
                if (CHECK_OK(h, spgemm_symbolic(h, X, Y, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                                base, rp, &plan)) &&
                    CHECK_OK(h, spgemm_numeric(h, plan, X, Y, ci, cv))) {
                    CHECK(rp[0] == base && rp[1] == base + 1);
                    CHECK((int64_t)ci[0] == k - 1 + base && cv[0] == 1.0);
                }
            } else {
                CHECK_ERR(h, spgemm_symbolic(h, X, Y, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                                             base, rp, &plan),
                          SPGEMM_STATUS_INDEX_OVERFLOW, WORDS("C", "int32", "2147483648"));
                CHECK(rp[0] == -1 && rp[1] == -1 && plan == NULL);
            }
            spgemm_plan_destroy(plan);
            spgemm_matrix_destroy(X);
            spgemm_matrix_destroy(Y);
        }
}

int main(void) {
    spgemm_handle_t *h = NULL;
    test_status_strings();
    test_destroy_null_and_version();
    test_handle_errors();
    test_create_errors();
    if (!CHECK_OK(NULL, spgemm_create(&h))) return check_report();
    test_structure_errors(h);
    test_use_time_errors(h);
    test_symbolic_multiply_args(h);
    test_numeric_errors(h);
    test_ncols_overflow(h);
    test_ncols_at_int32_limit(h);
    test_nnz_overflow(h);
    test_nnz_at_int32_limit(h);
    spgemm_destroy(h);
    return check_report();
}

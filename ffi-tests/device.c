/*
 * Device-resident matrices, device outputs and hybrid execution through the C ABI, as a
 * caller would use them. On a machine without a GPU every device path must end in a
 * status (NO_DEVICE, or NOT_SUPPORTED with the CPU backend or mixed host/device inputs)
 * without touching the device pointers: the descriptors here hold made-up addresses that
 * would crash the process (under ASan) if the host dereferenced them. With a GPU present
 * the made-up addresses are not used in products (the checks that need them are reported
 * as skipped); descriptor queries, hybrid plans on host arrays and errors still run.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "spgemm.h"

/* A is 3x4, B is 4x2 (0-based int32, double); C = A*B is 3x2 with rows of 2, 0, 1 entries. */
static const int32_t A_RP[] = {0, 2, 2, 4}, A_CI[] = {0, 2, 1, 3};
static const double A_V[] = {1, 2, 3, 4};
static const int32_t B_RP[] = {0, 2, 3, 4, 5}, B_CI[] = {0, 1, 1, 0, 1};
static const double B_V[] = {1, 2, 1, 5, -1};

/* Addresses in no mapped page (low 64 KB): a host access would fault at once. */
#define FAKE(a) ((void *)(uintptr_t)(a))

static spgemm_matrix_t *host32(int64_t m, int64_t n, const int32_t *rp, const int32_t *ci,
                               const double *v) {
    spgemm_matrix_t *mat = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr(&mat, m, n, SPGEMM_INDEX_INT32, rp,
                                            SPGEMM_INDEX_INT32, ci, SPGEMM_VALUE_FLOAT64, v, 0));
    return mat;
}

static spgemm_matrix_t *dev(int64_t m, int64_t n, int64_t nnz, uintptr_t at) {
    spgemm_matrix_t *mat = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr_device(&mat, m, n, nnz, SPGEMM_INDEX_INT64,
                                                   FAKE(at), SPGEMM_INDEX_INT32,
                                                   FAKE(at + 0x1000), SPGEMM_VALUE_FLOAT64,
                                                   FAKE(at + 0x2000), 1));
    return mat;
}

/* A device descriptor of the types of host32 (for numeric calls on its plans). */
static spgemm_matrix_t *dev32(int64_t m, int64_t n, int64_t nnz, uintptr_t at) {
    spgemm_matrix_t *mat = NULL;
    CHECK_OK(NULL, spgemm_matrix_create_csr_device(&mat, m, n, nnz, SPGEMM_INDEX_INT32,
                                                   FAKE(at), SPGEMM_INDEX_INT32,
                                                   FAKE(at + 0x1000), SPGEMM_VALUE_FLOAT64,
                                                   FAKE(at + 0x2000), 0));
    return mat;
}

static void test_descriptor(void) {
    spgemm_matrix_t *d = NULL, *h = host32(3, 4, A_RP, A_CI, A_V);
    spgemm_memory_t where = -1;
    int64_t nr = -1, nc = -1, nz = -1;
    spgemm_index_type_t ot = -1, it = -1;
    spgemm_value_type_t vt = -1;
    spgemm_index_base_t base = -1;
    const void *rp = NULL, *ci = NULL, *v = NULL;

    CHECK_ERR(NULL, spgemm_matrix_create_csr_device(NULL, 3, 4, 4, 0, FAKE(0x100), 0,
                                                    FAKE(0x200), 1, NULL, 0),
              SPGEMM_STATUS_NULL_POINTER, WORDS("matrix"));
    CHECK_ERR(NULL, spgemm_matrix_create_csr_device(&d, -3, 4, 4, 0, FAKE(0x100), 0,
                                                    FAKE(0x200), 1, NULL, 0),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("nrows"));
    CHECK(d == NULL);
    CHECK_ERR(NULL, spgemm_matrix_create_csr_device(&d, 3, 4, -1, 0, FAKE(0x100), 0,
                                                    FAKE(0x200), 1, NULL, 0),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("nnz"));
    CHECK_ERR(NULL, spgemm_matrix_create_csr_device(&d, 3, 4, 4, 0, NULL, 0, FAKE(0x200), 1,
                                                    NULL, 0),
              SPGEMM_STATUS_NULL_POINTER, WORDS("row_offsets"));
    CHECK_ERR(NULL, spgemm_matrix_create_csr_device(&d, 3, 4, 4, 0, FAKE(0x100), 0, NULL, 1,
                                                    NULL, 0),
              SPGEMM_STATUS_NULL_POINTER, WORDS("col_indices"));
    CHECK_ERR(NULL, spgemm_matrix_create_csr_device(&d, 3, 4, 4, 0, FAKE(0x100), 0,
                                                    FAKE(0x202), 1, NULL, 0),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("col_indices", "aligned"));
    CHECK_ERR(NULL, spgemm_matrix_create_csr_device(&d, 3, 4, 4, 0, FAKE(0x100), 2,
                                                    FAKE(0x200), 1, NULL, 0),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("index_type"));
    CHECK_ERR(NULL, spgemm_matrix_create_csr_device(&d, 3, 4, 4, 0, FAKE(0x100), 0,
                                                    FAKE(0x200), 1, NULL, 2),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("base"));
    CHECK(d == NULL);

    d = dev(3, 4, 4, 0x1000);
    CHECK_OK(NULL, spgemm_matrix_get_memory(d, &where));
    CHECK(where == SPGEMM_MEMORY_DEVICE);
    CHECK_OK(NULL, spgemm_matrix_get_memory(h, &where));
    CHECK(where == SPGEMM_MEMORY_HOST);
    CHECK_ERR(NULL, spgemm_matrix_get_memory(NULL, &where), SPGEMM_STATUS_NULL_POINTER,
              WORDS("matrix"));
    CHECK_ERR(NULL, spgemm_matrix_get_memory(d, NULL), SPGEMM_STATUS_NULL_POINTER,
              WORDS("memory"));
    /* Queries answer from the descriptor, without reading device memory. */
    CHECK_OK(NULL, spgemm_matrix_get_info(d, &nr, &nc, &nz, &ot, &it, &vt, &base));
    CHECK(nr == 3 && nc == 4 && nz == 4);
    CHECK(ot == SPGEMM_INDEX_INT64 && it == SPGEMM_INDEX_INT32 && vt == SPGEMM_VALUE_FLOAT64);
    CHECK(base == 1);
    CHECK_OK(NULL, spgemm_matrix_export_csr(d, &rp, &ci, &v));
    CHECK(rp == FAKE(0x1000) && ci == FAKE(0x2000) && v == FAKE(0x3000));
    spgemm_matrix_destroy(d);
    spgemm_matrix_destroy(h);
}

/* Every product path with device matrices, on a machine without a GPU. */
static void test_no_gpu(spgemm_handle_t *h) {
    spgemm_matrix_t *da = dev(3, 4, 4, 0x1000), *db = dev(4, 2, 5, 0x4000);
    spgemm_matrix_t *ha = host32(3, 4, A_RP, A_CI, A_V), *hb = host32(4, 2, B_RP, B_CI, B_V);
    spgemm_matrix_t *da32 = dev32(3, 4, 4, 0x1000), *db32 = dev32(4, 2, 5, 0x4000);
    spgemm_matrix_t *big = NULL, *c = NULL;
    spgemm_plan_t *plan = NULL, *none = NULL;
    int32_t cols[4];
    double vals[4], y[6] = {0}, x[8] = {0};

    CHECK_ERR(h, spgemm_symbolic(h, da, db, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, NULL,
                                 &plan),
              SPGEMM_STATUS_NO_DEVICE, WORDS("GPU", "memory"));
    CHECK(plan == NULL);
    CHECK_ERR(h, spgemm_symbolic(h, ha, db, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, NULL,
                                 &plan),
              SPGEMM_STATUS_NOT_SUPPORTED, WORDS("B", "device", "host"));
    /* Sizes beyond 32-bit device indices: refused before the device is looked for. */
    CHECK_OK(NULL, spgemm_matrix_create_csr_device(&big, (int64_t)1 << 31, 4, 4,
                                                   SPGEMM_INDEX_INT64, FAKE(0x1000),
                                                   SPGEMM_INDEX_INT32, FAKE(0x2000),
                                                   SPGEMM_VALUE_FLOAT64, FAKE(0x3000), 1));
    CHECK_ERR(h, spgemm_symbolic(h, big, db, SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64, 0, NULL,
                                 &plan),
              SPGEMM_STATUS_NOT_SUPPORTED, WORDS("32", "rows"));
    CHECK_ERR(h, spgemm_multiply(h, da, db, 0, 0, 0, &c), SPGEMM_STATUS_NOT_SUPPORTED,
              WORDS("A", "device"));
    CHECK_ERR(h, spgemm_spmm(h, SPGEMM_OPERATION_NON_TRANSPOSE, 1.0, da, NULL,
                             SPGEMM_LAYOUT_ROW_MAJOR, 2, x, 2, 0.0, y, 2),
              SPGEMM_STATUS_NOT_SUPPORTED, WORDS("A", "device"));

    /* A CPU plan from host arrays, then device inputs or outputs: no GPU. */
    CHECK_OK(h, spgemm_symbolic(h, ha, hb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, NULL,
                                &plan));
    CHECK_ERR(h, spgemm_numeric(h, plan, da32, db32, cols, vals), SPGEMM_STATUS_NO_DEVICE,
              WORDS("GPU"));
    CHECK_ERR(h, spgemm_numeric_structure(h, plan, da32, db32, cols), SPGEMM_STATUS_NO_DEVICE,
              WORDS("GPU"));
    /* Device inputs of other types than the plan's: TYPE_MISMATCH, still no access. */
    CHECK_ERR(h, spgemm_numeric(h, plan, da, db, cols, vals), SPGEMM_STATUS_TYPE_MISMATCH,
              WORDS("plan"));
    CHECK_ERR(h, spgemm_numeric_device(h, plan, ha, hb, FAKE(0x1000), FAKE(0x2000),
                                       FAKE(0x3000)),
              SPGEMM_STATUS_NO_DEVICE, WORDS("GPU"));
    CHECK_ERR(h, spgemm_numeric_device(h, plan, da32, db32, NULL, FAKE(0x2000), NULL),
              SPGEMM_STATUS_NO_DEVICE, WORDS("GPU"));
    CHECK_ERR(h, spgemm_numeric_device(h, plan, ha, hb, NULL, FAKE(0x2002), NULL),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("c_col_indices", "aligned"));
    CHECK_ERR(h, spgemm_numeric_device(h, plan, da, hb, NULL, FAKE(0x2000), NULL),
              SPGEMM_STATUS_NOT_SUPPORTED, WORDS("A", "device"));
    CHECK_ERR(NULL, spgemm_numeric_device(NULL, plan, ha, hb, NULL, FAKE(0x2000), NULL),
              SPGEMM_STATUS_NULL_POINTER, WORDS("handle"));
    CHECK_ERR(h, spgemm_numeric_device(h, NULL, ha, hb, NULL, FAKE(0x2000), NULL),
              SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));

    /* The CPU backend cannot read device memory: NOT_SUPPORTED, whatever the machine. */
    CHECK_OK(h, spgemm_set_backend(h, SPGEMM_BACKEND_CPU));
    CHECK_ERR(h, spgemm_symbolic(h, da, db, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, NULL,
                                 &none),
              SPGEMM_STATUS_NOT_SUPPORTED, WORDS("SPGEMM_BACKEND_CPU"));
    CHECK(none == NULL);
    CHECK_ERR(h, spgemm_numeric_device(h, plan, ha, hb, NULL, FAKE(0x2000), NULL),
              SPGEMM_STATUS_NOT_SUPPORTED, WORDS("SPGEMM_BACKEND_CPU"));
    CHECK_OK(h, spgemm_set_backend(h, SPGEMM_BACKEND_AUTO));

    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(big);
    spgemm_matrix_destroy(da32);
    spgemm_matrix_destroy(db32);
    spgemm_matrix_destroy(da);
    spgemm_matrix_destroy(db);
    spgemm_matrix_destroy(ha);
    spgemm_matrix_destroy(hb);
}

/* Hybrid option and plan info: the split and, without a GPU, all rows on the CPU. */
static void test_hybrid(spgemm_handle_t *h, int have_gpu) {
    spgemm_matrix_t *ha = host32(3, 4, A_RP, A_CI, A_V), *hb = host32(4, 2, B_RP, B_CI, B_V);
    spgemm_plan_t *plan = NULL;
    int enabled = -1;
    int64_t nnz = -1, cpu_rows = -1, gpu_rows = -1;
    int32_t rp[4], cols[4];
    double vals[4];
    char text[512], tiny[4];
    size_t needed = 0;
    /* C = A*B: row 0 = 1*B0 + 2*B2 = (1 + 2*5, 2); row 2 = 3*B1 + 4*B3 = (_, 3 - 4). */
    static const int32_t want_rp[4] = {0, 2, 2, 3}, want_cols[3] = {0, 1, 1};
    static const double want_vals[3] = {11, 2, -1};

    CHECK_OK(h, spgemm_get_hybrid(h, &enabled));
    CHECK(enabled == 0);
    CHECK_OK(h, spgemm_set_hybrid(h, 1));
    CHECK_OK(h, spgemm_get_hybrid(h, &enabled));
    CHECK(enabled == 1);
    CHECK_ERR(NULL, spgemm_set_hybrid(NULL, 1), SPGEMM_STATUS_NULL_POINTER, WORDS("handle"));
    CHECK_ERR(h, spgemm_get_hybrid(h, NULL), SPGEMM_STATUS_NULL_POINTER, WORDS("enabled"));

    CHECK_OK(h, spgemm_symbolic(h, ha, hb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, rp, &plan));
    CHECK_OK(h, spgemm_plan_get_nnz(plan, &nnz));
    CHECK(nnz == 3);
    CHECK_OK(h, spgemm_numeric(h, plan, ha, hb, cols, vals));
    CHECK(memcmp(rp, want_rp, sizeof rp) == 0);
    CHECK(memcmp(cols, want_cols, sizeof want_cols) == 0);
    CHECK(memcmp(vals, want_vals, sizeof want_vals) == 0);
    CHECK_OK(NULL, spgemm_plan_get_split(plan, &cpu_rows, &gpu_rows));
    CHECK(cpu_rows + gpu_rows == 3);
    CHECK_OK(NULL, spgemm_plan_info(plan, NULL, 0, &needed));
    CHECK(needed > 1 && needed <= sizeof text);
    CHECK_OK(NULL, spgemm_plan_info(plan, text, sizeof text, &needed));
    CHECK(strlen(text) + 1 == needed);
    CHECK(strstr(text, "hybrid:") != NULL);
    if (!have_gpu) {
        CHECK(cpu_rows == 3 && gpu_rows == 0);
        CHECK(strstr(text, "backend: cpu") != NULL);
        CHECK(strstr(text, "all 3 rows on the CPU") != NULL);
    }
    CHECK_ERR(NULL, spgemm_plan_info(plan, tiny, sizeof tiny, &needed),
              SPGEMM_STATUS_INVALID_VALUE, WORDS("len"));
    CHECK(tiny[0] == '\0');
    CHECK_ERR(NULL, spgemm_plan_info(plan, text, sizeof text, NULL), SPGEMM_STATUS_NULL_POINTER,
              WORDS("needed"));
    CHECK_ERR(NULL, spgemm_plan_info(NULL, text, sizeof text, &needed),
              SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));
    CHECK_ERR(NULL, spgemm_plan_get_split(NULL, &cpu_rows, &gpu_rows),
              SPGEMM_STATUS_NULL_POINTER, WORDS("plan"));
    spgemm_plan_destroy(plan);
    plan = NULL;

    /* Hybrid off: a CPU plan (no GPU) names no split. */
    CHECK_OK(h, spgemm_set_hybrid(h, 0));
    CHECK_OK(h, spgemm_symbolic(h, ha, hb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, NULL,
                                &plan));
    CHECK_OK(NULL, spgemm_plan_info(plan, text, sizeof text, &needed));
    CHECK(strstr(text, "hybrid:") == NULL);
    if (!have_gpu) {
        CHECK_OK(NULL, spgemm_plan_get_split(plan, &cpu_rows, NULL));
        CHECK(cpu_rows == 3);
    }
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(ha);
    spgemm_matrix_destroy(hb);
}

/* Reproducible GPU sums and the kernel cache directory: options that give the same C on
   a CPU plan (the CPU's sums never depend on thread timing). */
static void test_reproducible_and_kernel_cache(spgemm_handle_t *h) {
    spgemm_matrix_t *ha = host32(3, 4, A_RP, A_CI, A_V), *hb = host32(4, 2, B_RP, B_CI, B_V);
    spgemm_plan_t *plan = NULL;
    int enabled = -1;
    int32_t rp[4], cols[3];
    double vals[3];
    static const double want_vals[3] = {11, 2, -1};
    static const char bad_utf8[] = {(char)0xff, (char)0xfe, 0};

    CHECK_OK(h, spgemm_get_reproducible(h, &enabled));
    CHECK(enabled == 0);
    CHECK_OK(h, spgemm_set_reproducible(h, 1));
    CHECK_OK(h, spgemm_get_reproducible(h, &enabled));
    CHECK(enabled == 1);
    CHECK_ERR(NULL, spgemm_set_reproducible(NULL, 1), SPGEMM_STATUS_NULL_POINTER,
              WORDS("handle"));
    CHECK_ERR(h, spgemm_get_reproducible(h, NULL), SPGEMM_STATUS_NULL_POINTER,
              WORDS("enabled"));
    CHECK_OK(NULL, spgemm_set_kernel_cache_dir("/nonexistent/libspgemm-kernel-cache"));
    CHECK_ERR(NULL, spgemm_set_kernel_cache_dir(bad_utf8), SPGEMM_STATUS_INVALID_VALUE,
              WORDS("UTF-8"));
    CHECK_OK(h, spgemm_symbolic(h, ha, hb, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, rp, &plan));
    CHECK_OK(h, spgemm_numeric(h, plan, ha, hb, cols, vals));
    CHECK(memcmp(vals, want_vals, sizeof want_vals) == 0);
    CHECK_OK(NULL, spgemm_set_kernel_cache_dir(""));
    CHECK_OK(NULL, spgemm_set_kernel_cache_dir(NULL));
    CHECK_OK(h, spgemm_set_reproducible(h, 0));
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(ha);
    spgemm_matrix_destroy(hb);
}

int main(void) {
    spgemm_handle_t *h = NULL;
    spgemm_status_t st;
    int have_gpu;
    CHECK_OK(NULL, spgemm_create(&h));
    st = spgemm_set_backend(h, SPGEMM_BACKEND_CUDA);
    CHECK(st == SPGEMM_STATUS_SUCCESS || st == SPGEMM_STATUS_NO_DEVICE);
    have_gpu = st == SPGEMM_STATUS_SUCCESS;
    CHECK_OK(h, spgemm_set_backend(h, SPGEMM_BACKEND_AUTO));
    test_descriptor();
    if (have_gpu) {
        printf("SKIPPED device.c test_no_gpu: a GPU is present (made-up device addresses "
               "would reach it)\n");
    } else {
        test_no_gpu(h);
    }
    test_hybrid(h, have_gpu);
    test_reproducible_and_kernel_cache(h);
    spgemm_destroy(h);
    return check_report();
}

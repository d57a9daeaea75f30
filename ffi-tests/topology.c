/* Thread binding, high-bandwidth memory options and the topology report, from C.
 * A product (1D Laplacian squared) under every binding policy checks that the workers
 * still compute correctly wherever they are placed. Self-contained (no shared helpers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spgemm.h"

static int failures = 0, passes = 0;
#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                    \
        } else {                                                           \
            passes++;                                                      \
        }                                                                  \
    } while (0)

/* C = A*A for the n x n tridiagonal [-1 2 -1]; checks row n/2 is [1 -4 6 -4 1]. */
static void laplace_square(spgemm_handle_t *h, int32_t n) {
    int32_t *ap = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *ai = malloc(sizeof(int32_t) * (size_t)(3 * n));
    double *av = malloc(sizeof(double) * (size_t)(3 * n));
    int32_t nnz = 0;
    for (int32_t r = 0; r < n; r++) {
        ap[r] = nnz;
        for (int32_t c = r - 1; c <= r + 1; c++) {
            if (c < 0 || c >= n) continue;
            ai[nnz] = c;
            av[nnz] = (c == r) ? 2.0 : -1.0;
            nnz++;
        }
    }
    ap[n] = nnz;
    spgemm_matrix_t *a = NULL;
    CHECK(spgemm_matrix_create_csr(&a, n, n, SPGEMM_INDEX_INT32, ap, SPGEMM_INDEX_INT32, ai,
                                   SPGEMM_VALUE_FLOAT64, av, SPGEMM_INDEX_BASE_ZERO) == 0);
    int32_t *cp = malloc(sizeof(int32_t) * (size_t)(n + 1));
    spgemm_plan_t *plan = NULL;
    CHECK(spgemm_symbolic(h, a, a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ZERO,
                          cp, &plan) == 0);
    int64_t cnnz = 0;
    CHECK(spgemm_plan_get_nnz(plan, &cnnz) == 0);
    CHECK(cnnz == 5 * (int64_t)n - 6);
    int32_t *ci = malloc(sizeof(int32_t) * (size_t)cnnz);
    double *cv = malloc(sizeof(double) * (size_t)cnnz);
    CHECK(spgemm_numeric(h, plan, a, a, ci, cv) == 0);
    int32_t mid = n / 2;
    const double want[5] = {1, -4, 6, -4, 1};
    CHECK(cp[mid + 1] - cp[mid] == 5);
    for (int k = 0; k < 5; k++) {
        CHECK(ci[cp[mid] + k] == mid - 2 + k);
        CHECK(cv[cp[mid] + k] == want[k]);
    }
    spgemm_plan_destroy(plan);
    spgemm_matrix_destroy(a);
    free(ap); free(ai); free(av); free(cp); free(ci); free(cv);
}

int main(void) {
    spgemm_handle_t *h = NULL;
    CHECK(spgemm_create(&h) == SPGEMM_STATUS_SUCCESS);
    CHECK(spgemm_set_num_threads(h, 2) == 0);

    /* Two-call pattern for the report. */
    size_t needed = 0;
    CHECK(spgemm_topology_info(h, NULL, 0, &needed) == SPGEMM_STATUS_SUCCESS);
    CHECK(needed > 2);
    char *buf = malloc(needed);
    CHECK(spgemm_topology_info(h, buf, needed, &needed) == SPGEMM_STATUS_SUCCESS);
    CHECK(strlen(buf) + 1 == needed);
    CHECK(buf[0] == '{' && buf[needed - 2] == '}');
    CHECK(strstr(buf, "\"workers\":") != NULL);
    printf("topology: %s\n", buf);
    char small[4];
    CHECK(spgemm_topology_info(h, small, sizeof small, &needed) == SPGEMM_STATUS_INVALID_VALUE);
    CHECK(small[0] == '\0');
    CHECK(spgemm_topology_info(h, NULL, 0, NULL) == SPGEMM_STATUS_NULL_POINTER);
    free(buf);

    /* Every binding policy computes the same product. */
    const spgemm_bind_t policies[4] = {SPGEMM_BIND_NONE, SPGEMM_BIND_CLOSE, SPGEMM_BIND_SPREAD,
                                       SPGEMM_BIND_AUTO};
    for (int i = 0; i < 4; i++) {
        CHECK(spgemm_set_thread_binding(h, policies[i]) == SPGEMM_STATUS_SUCCESS);
        spgemm_bind_t got = -1;
        CHECK(spgemm_get_thread_binding(h, &got) == 0);
        CHECK(got == SPGEMM_BIND_NONE || got == SPGEMM_BIND_CLOSE || got == SPGEMM_BIND_SPREAD);
        if (getenv("SPGEMM_PROC_BIND") == NULL && policies[i] != SPGEMM_BIND_AUTO) {
            CHECK(got == policies[i]);
        }
        laplace_square(h, 1000);
    }
    CHECK(spgemm_set_thread_binding(h, 42) == SPGEMM_STATUS_INVALID_VALUE);
    CHECK(strstr(spgemm_last_error(h), "binding = 42") != NULL);

    /* High-bandwidth memory mode. */
    spgemm_hbm_t mode = -1;
    int32_t present = -1;
    CHECK(spgemm_get_hbm(h, &mode, &present) == 0);
    CHECK(mode == SPGEMM_HBM_AUTO && (present == 0 || present == 1));
    CHECK(spgemm_set_hbm(h, SPGEMM_HBM_ON) == 0);
    CHECK(spgemm_get_hbm(h, &mode, NULL) == 0 && mode == SPGEMM_HBM_ON);
    laplace_square(h, 257);
    CHECK(spgemm_set_hbm(h, 9) == SPGEMM_STATUS_INVALID_VALUE);
    CHECK(spgemm_set_hbm(NULL, SPGEMM_HBM_OFF) == SPGEMM_STATUS_NULL_POINTER);

    spgemm_destroy(h);
    printf("topology: %d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}

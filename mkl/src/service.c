/*
 * MKL service functions of libspgemm_mkl (mkl_service.h): version, threads, aligned memory,
 * and the process-wide libspgemm handle the sparse functions share.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkl_service.h"
#include "layer.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static spgemm_handle_t *g_handle;
static spgemm_status_t g_status;
static char g_error[512];

int spgemm_mkl__env_threads(void) {
    const char *e;
    long n;
    char *end;
    /* libspgemm reads its own variable; an MKL default must not override an explicit one */
    if (getenv("SPGEMM_NUM_THREADS")) return 0;
    e = getenv("MKL_NUM_THREADS");
    if (!e || !*e) e = getenv("OMP_NUM_THREADS");
    if (!e || !*e) return 0;
    n = strtol(e, &end, 10); /* OMP_NUM_THREADS may be a list "4,2": its first level counts */
    if (end == e || n <= 0 || n > 4096) return 0;
    return (int)n;
}

static void init_handle(void) {
    int n;
    g_status = spgemm_create(&g_handle);
    if (g_status != SPGEMM_STATUS_SUCCESS) {
        snprintf(g_error, sizeof g_error, "libspgemm handle could not be created: %s",
                 spgemm_last_error(NULL));
        g_handle = NULL;
        return;
    }
    n = spgemm_mkl__env_threads();
    if (n > 0) (void)spgemm_set_num_threads(g_handle, n); /* a count above the library's cap keeps its default */
}

spgemm_handle_t *spgemm_mkl__handle(spgemm_status_t *status) {
    (void)pthread_once(&g_once, init_handle);
    if (status) *status = g_status;
    return g_handle;
}

const char *spgemm_mkl__init_error(void) { return g_error; }

void MKL_Get_Version(MKLVersion *ver) {
    static char product[] = "libspgemm_mkl";
    static char build[] = "libspgemm MKL inspector-executor compatibility layer";
    static char processor[] = "any (libspgemm selects its kernels at run time)";
#if defined(__x86_64__)
    static char platform[] = "x86_64";
#elif defined(__aarch64__)
    static char platform[] = "aarch64";
#else
    static char platform[] = "unknown";
#endif
    int32_t major = 0, minor = 0, patch = 0;
    if (!ver) return;
    (void)spgemm_version(&major, &minor, &patch);
    ver->MajorVersion = major;
    ver->MinorVersion = minor;
    ver->UpdateVersion = patch;
    ver->PatchVersion = 0;
    ver->ProductStatus = product;
    ver->Build = build;
    ver->Processor = processor;
    ver->Platform = platform;
}

int MKL_Get_Max_Threads(void) {
    int32_t n = 1;
    spgemm_handle_t *h = spgemm_mkl__handle(NULL);
    if (h && spgemm_get_num_threads(h, &n) != SPGEMM_STATUS_SUCCESS) n = 1;
    return n > 0 ? (int)n : 1;
}

void MKL_Set_Num_Threads(int nth) {
    spgemm_handle_t *h = spgemm_mkl__handle(NULL);
    if (!h) return;
    if (nth <= 0) nth = spgemm_mkl__env_threads(); /* 0: libspgemm's own default */
    (void)spgemm_set_num_threads(h, nth);
}

void *MKL_malloc(size_t size, int align) {
    void *p = NULL;
    size_t a = (size_t)align;
    /* MKL accepts any alignment and falls back to its default for unusable ones */
    if (align <= 0 || (a & (a - 1)) != 0) a = 64;
    if (a < sizeof(void *)) a = sizeof(void *);
    if (posix_memalign(&p, a, size ? size : 1) != 0) return NULL;
    return p;
}

void MKL_free(void *ptr) { free(ptr); }

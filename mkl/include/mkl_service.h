/*
 * mkl_service.h of libspgemm's MKL compatibility layer (libspgemm_mkl).
 *
 * This project's own header: the few MKL service functions that callers of the sparse
 * interface use next to it (the peer drivers in shared/anchors call all of them). Symbol
 * names are MKL's; the lower-case spellings are macros for them, as in MKL.
 */
#ifndef SPGEMM_MKL_SERVICE_H
#define SPGEMM_MKL_SERVICE_H

#include <stddef.h>

#include "mkl_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *ver with the layer's version and the strings that describe it. */
void MKL_Get_Version(MKLVersion *ver);
#define mkl_get_version MKL_Get_Version

/* Threads the next call of this thread may use; the layer's own setting. */
int MKL_Get_Max_Threads(void);
#define mkl_get_max_threads MKL_Get_Max_Threads

/* Sets that number for later calls (nth <= 0 restores the default). */
void MKL_Set_Num_Threads(int nth);
#define mkl_set_num_threads MKL_Set_Num_Threads

/* Aligned allocation (align a power of two) and its release; mkl_free(NULL) does nothing. */
void *MKL_malloc(size_t size, int align);
#define mkl_malloc MKL_malloc
void MKL_free(void *ptr);
#define mkl_free MKL_free

#ifdef __cplusplus
}
#endif

#endif /* SPGEMM_MKL_SERVICE_H */

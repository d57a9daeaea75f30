/*
 * mkl_types.h of libspgemm's MKL compatibility layer (libspgemm_mkl).
 *
 * This project's own header. It gives the basic types of Intel MKL's C interface the same
 * names, layouts and meanings as MKL gives them, so that a source written for MKL compiles
 * unchanged against libspgemm_mkl. Only the types the inspector-executor sparse interface
 * (mkl_spblas.h) and the service functions of mkl_service.h use are here.
 */
#ifndef SPGEMM_MKL_TYPES_H
#define SPGEMM_MKL_TYPES_H

/* MKL's integers are macros, not typedefs: callers may #define MKL_INT themselves or test
 * it with #ifdef, as they can with MKL. */
#if defined(_MSC_VER) && !defined(__INTEL_COMPILER)
#define MKL_INT64 __int64
#define MKL_UINT64 unsigned __int64
#else
#define MKL_INT64 long long int
#define MKL_UINT64 unsigned long long int
#endif

/* -DMKL_ILP64 selects 64-bit MKL_INT, as with MKL; see mkl_spblas.h for which entry points
 * the plain names then reach. */
#ifdef MKL_ILP64
#ifndef MKL_INT
#define MKL_INT MKL_INT64
#endif
#ifndef MKL_UINT
#define MKL_UINT MKL_UINT64
#endif
#define MKL_LONG MKL_INT64
#else
#ifndef MKL_INT
#define MKL_INT int
#endif
#ifndef MKL_UINT
#define MKL_UINT unsigned int
#endif
#define MKL_LONG long int
#endif

#ifndef MKL_INT32
#define MKL_INT32 int
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A caller may #define MKL_Complex8/16 to a layout-compatible type of its own (for example
 * std::complex<float>) before including, as MKL allows; otherwise these structs are used. */
#ifndef MKL_Complex8
typedef struct _MKL_Complex8 {
    float real;
    float imag;
} MKL_Complex8;
#endif

#ifndef MKL_Complex16
typedef struct _MKL_Complex16 {
    double real;
    double imag;
} MKL_Complex16;
#endif

/* Filled by mkl_get_version() (mkl_service.h); field order as in MKL 2025 and later. */
typedef struct {
    int MajorVersion;
    int MinorVersion;
    int UpdateVersion;
    int PatchVersion;
    char *ProductStatus;
    char *Build;
    char *Processor;
    char *Platform;
} MKLVersion;

#ifdef __cplusplus
}
#endif

#endif /* SPGEMM_MKL_TYPES_H */

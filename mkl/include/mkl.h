/*
 * mkl.h of libspgemm's MKL compatibility layer (libspgemm_mkl).
 *
 * This project's own header. MKL's mkl.h brings in every MKL domain; the layer implements
 * only the sparse inspector-executor functions and a few service functions, so this one
 * brings in just those (a source that needs BLAS or LAPACK from mkl.h still needs MKL).
 */
#ifndef SPGEMM_MKL_H
#define SPGEMM_MKL_H

#include "mkl_types.h"
#include "mkl_spblas.h"
#include "mkl_service.h"

#endif /* SPGEMM_MKL_H */

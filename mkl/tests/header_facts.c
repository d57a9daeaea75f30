/* Prints the enum values, type sizes and struct layouts that mkl_spblas.h/mkl_types.h
 * declare, so that the layer's headers and MKL's can be compared by diffing two runs
 * (scripts/mkl_real.sh does it, LP64 and ILP64). */
#include <stddef.h>
#include <stdio.h>

#include <mkl_spblas.h>

#define E(x) printf("%s %lld\n", #x, (long long)(x))
#define SZ(t) printf("sizeof(%s) %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("offsetof(%s,%s) %zu\n", #t, #f, offsetof(t, f))

int main(void) {
    E(SPARSE_STATUS_SUCCESS); E(SPARSE_STATUS_NOT_INITIALIZED); E(SPARSE_STATUS_ALLOC_FAILED);
    E(SPARSE_STATUS_INVALID_VALUE); E(SPARSE_STATUS_EXECUTION_FAILED);
    E(SPARSE_STATUS_INTERNAL_ERROR); E(SPARSE_STATUS_NOT_SUPPORTED);
    E(SPARSE_OPERATION_NON_TRANSPOSE); E(SPARSE_OPERATION_TRANSPOSE);
    E(SPARSE_OPERATION_CONJUGATE_TRANSPOSE);
    E(SPARSE_MATRIX_TYPE_GENERAL); E(SPARSE_MATRIX_TYPE_SYMMETRIC); E(SPARSE_MATRIX_TYPE_HERMITIAN);
    E(SPARSE_MATRIX_TYPE_TRIANGULAR); E(SPARSE_MATRIX_TYPE_DIAGONAL);
    E(SPARSE_MATRIX_TYPE_BLOCK_TRIANGULAR); E(SPARSE_MATRIX_TYPE_BLOCK_DIAGONAL);
    E(SPARSE_INDEX_BASE_ZERO); E(SPARSE_INDEX_BASE_ONE);
    E(SPARSE_FILL_MODE_LOWER); E(SPARSE_FILL_MODE_UPPER); E(SPARSE_FILL_MODE_FULL);
    E(SPARSE_DIAG_NON_UNIT); E(SPARSE_DIAG_UNIT);
    E(SPARSE_LAYOUT_ROW_MAJOR); E(SPARSE_LAYOUT_COLUMN_MAJOR);
    E(SPARSE_MEMORY_NONE); E(SPARSE_MEMORY_AGGRESSIVE);
    E(SPARSE_STAGE_FULL_MULT); E(SPARSE_STAGE_NNZ_COUNT); E(SPARSE_STAGE_FINALIZE_MULT);
    E(SPARSE_STAGE_FULL_MULT_NO_VAL); E(SPARSE_STAGE_FINALIZE_MULT_NO_VAL);
    SZ(sparse_status_t); SZ(sparse_operation_t); SZ(sparse_matrix_type_t); SZ(sparse_index_base_t);
    SZ(sparse_fill_mode_t); SZ(sparse_diag_type_t); SZ(sparse_layout_t);
    SZ(sparse_memory_usage_t); SZ(sparse_request_t); SZ(sparse_matrix_t);
    SZ(struct matrix_descr); OFF(struct matrix_descr, type); OFF(struct matrix_descr, mode);
    OFF(struct matrix_descr, diag);
    SZ(MKL_INT); SZ(MKL_UINT); SZ(MKL_INT64); SZ(MKL_UINT64); SZ(MKL_LONG);
    SZ(MKL_Complex8); OFF(MKL_Complex8, real); OFF(MKL_Complex8, imag);
    SZ(MKL_Complex16); OFF(MKL_Complex16, real); OFF(MKL_Complex16, imag);
    SZ(MKLVersion); OFF(MKLVersion, MajorVersion); OFF(MKLVersion, MinorVersion);
    OFF(MKLVersion, UpdateVersion); OFF(MKLVersion, ProductStatus); OFF(MKLVersion, Build);
    OFF(MKLVersion, Processor); OFF(MKLVersion, Platform);
    printf("MKL_INT signed %d\n", (MKL_INT)-1 < 0);
    printf("MKL_UINT max %llu\n", (unsigned long long)(MKL_UINT)-1);
    return 0;
}

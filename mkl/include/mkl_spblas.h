/*
 * mkl_spblas.h of libspgemm's MKL compatibility layer (libspgemm_mkl).
 *
 * This project's own header for the part of Intel MKL's inspector-executor sparse BLAS that
 * PETSc (aijmkl), KokkosKernels' MKL back end and plain callers use. Type names, struct
 * layouts, enum values and function signatures are MKL's, so a C or C++ source written for
 * MKL compiles unchanged against it. The behaviour each function must have (ownership,
 * stages, statuses), as observed with real MKL, is in mkl/tests/README.md.
 *
 * Integer width: without MKL_ILP64, MKL_INT is int and the plain names (mkl_sparse_d_mv, ...)
 * are the LP64 entry points. With -DMKL_ILP64, MKL_INT is 64-bit and every plain name below is
 * a macro for its _64 entry point, which takes MKL_INT64 whatever the build (MKL itself picks
 * ILP64 at link time instead; one libspgemm_mkl serves both). The _64 names are declared in
 * either case, as MKL 2023 and later declare them.
 */
#ifndef SPGEMM_MKL_SPBLAS_H
#define SPGEMM_MKL_SPBLAS_H

#include "mkl_types.h"

/* Lets a source tell the layer from MKL at compile time; MKL does not define it. */
#define SPGEMM_MKL_COMPAT 1

#ifdef __cplusplus
extern "C" {
#endif

/* Enum values are MKL's: callers store and compare them, and binaries pass them through. */
typedef enum {
    SPARSE_STATUS_SUCCESS = 0,
    SPARSE_STATUS_NOT_INITIALIZED = 1, /* NULL or empty handle, NULL array where one is needed */
    SPARSE_STATUS_ALLOC_FAILED = 2,
    SPARSE_STATUS_INVALID_VALUE = 3,   /* bad size, index, enum value or argument combination */
    SPARSE_STATUS_EXECUTION_FAILED = 4,
    SPARSE_STATUS_INTERNAL_ERROR = 5,
    SPARSE_STATUS_NOT_SUPPORTED = 6    /* valid request the implementation does not serve */
} sparse_status_t;

typedef enum {
    SPARSE_OPERATION_NON_TRANSPOSE = 10,
    SPARSE_OPERATION_TRANSPOSE = 11,
    SPARSE_OPERATION_CONJUGATE_TRANSPOSE = 12
} sparse_operation_t;

typedef enum {
    SPARSE_MATRIX_TYPE_GENERAL = 20,
    SPARSE_MATRIX_TYPE_SYMMETRIC = 21,
    SPARSE_MATRIX_TYPE_HERMITIAN = 22,
    SPARSE_MATRIX_TYPE_TRIANGULAR = 23,
    SPARSE_MATRIX_TYPE_DIAGONAL = 24,
    SPARSE_MATRIX_TYPE_BLOCK_TRIANGULAR = 25,
    SPARSE_MATRIX_TYPE_BLOCK_DIAGONAL = 26
} sparse_matrix_type_t;

typedef enum {
    SPARSE_INDEX_BASE_ZERO = 0,
    SPARSE_INDEX_BASE_ONE = 1
} sparse_index_base_t;

typedef enum {
    SPARSE_FILL_MODE_LOWER = 40,
    SPARSE_FILL_MODE_UPPER = 41,
    SPARSE_FILL_MODE_FULL = 42
} sparse_fill_mode_t;

typedef enum {
    SPARSE_DIAG_NON_UNIT = 50,
    SPARSE_DIAG_UNIT = 51
} sparse_diag_type_t;

typedef enum {
    SPARSE_LAYOUT_ROW_MAJOR = 101,
    SPARSE_LAYOUT_COLUMN_MAJOR = 102
} sparse_layout_t;

typedef enum {
    SPARSE_MEMORY_NONE = 80,
    SPARSE_MEMORY_AGGRESSIVE = 81
} sparse_memory_usage_t;

/* Stages of mkl_sparse_sp2m / mkl_sparse_sypr (what each does to C: mkl/tests/README.md). */
typedef enum {
    SPARSE_STAGE_FULL_MULT = 90,
    SPARSE_STAGE_NNZ_COUNT = 91,
    SPARSE_STAGE_FINALIZE_MULT = 92,
    SPARSE_STAGE_FULL_MULT_NO_VAL = 93,
    SPARSE_STAGE_FINALIZE_MULT_NO_VAL = 94
} sparse_request_t;

/* Handles are opaque pointers; the struct is never defined for callers. */
struct sparse_matrix;
typedef struct sparse_matrix *sparse_matrix_t;

/* Passed by value; mode and diag are read only for the types that use them. */
struct matrix_descr {
    sparse_matrix_type_t type;
    sparse_fill_mode_t mode;
    sparse_diag_type_t diag;
};

/* ---- _64 entry points: MKL_INT64 integers in every build ---- */
/* Handles over the caller's arrays (nothing copied; see mkl/tests/README.md) */
sparse_status_t mkl_sparse_s_create_csr_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 *rows_start,
                                           MKL_INT64 *rows_end, MKL_INT64 *col_indx, float *values);
sparse_status_t mkl_sparse_d_create_csr_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 *rows_start,
                                           MKL_INT64 *rows_end, MKL_INT64 *col_indx, double *values);
sparse_status_t mkl_sparse_c_create_csr_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 *rows_start,
                                           MKL_INT64 *rows_end, MKL_INT64 *col_indx,
                                           MKL_Complex8 *values);
sparse_status_t mkl_sparse_z_create_csr_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 *rows_start,
                                           MKL_INT64 *rows_end, MKL_INT64 *col_indx,
                                           MKL_Complex16 *values);
sparse_status_t mkl_sparse_s_create_csc_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 *cols_start,
                                           MKL_INT64 *cols_end, MKL_INT64 *row_indx, float *values);
sparse_status_t mkl_sparse_d_create_csc_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 *cols_start,
                                           MKL_INT64 *cols_end, MKL_INT64 *row_indx, double *values);
sparse_status_t mkl_sparse_c_create_csc_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 *cols_start,
                                           MKL_INT64 *cols_end, MKL_INT64 *row_indx,
                                           MKL_Complex8 *values);
sparse_status_t mkl_sparse_z_create_csc_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 *cols_start,
                                           MKL_INT64 *cols_end, MKL_INT64 *row_indx,
                                           MKL_Complex16 *values);
sparse_status_t mkl_sparse_s_create_coo_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 nnz,
                                           MKL_INT64 *row_indx, MKL_INT64 *col_indx, float *values);
sparse_status_t mkl_sparse_d_create_coo_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 nnz,
                                           MKL_INT64 *row_indx, MKL_INT64 *col_indx, double *values);
sparse_status_t mkl_sparse_c_create_coo_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 nnz,
                                           MKL_INT64 *row_indx, MKL_INT64 *col_indx,
                                           MKL_Complex8 *values);
sparse_status_t mkl_sparse_z_create_coo_64(sparse_matrix_t *A, sparse_index_base_t indexing,
                                           MKL_INT64 rows, MKL_INT64 cols, MKL_INT64 nnz,
                                           MKL_INT64 *row_indx, MKL_INT64 *col_indx,
                                           MKL_Complex16 *values);

/* Copies, conversion, export, destruction */
sparse_status_t mkl_sparse_copy_64(const sparse_matrix_t source, struct matrix_descr descr,
                                   sparse_matrix_t *dest);
sparse_status_t mkl_sparse_convert_csr_64(const sparse_matrix_t source, sparse_operation_t operation,
                                          sparse_matrix_t *dest);
sparse_status_t mkl_sparse_s_export_csr_64(const sparse_matrix_t source,
                                           sparse_index_base_t *indexing, MKL_INT64 *rows,
                                           MKL_INT64 *cols, MKL_INT64 **rows_start,
                                           MKL_INT64 **rows_end, MKL_INT64 **col_indx,
                                           float **values);
sparse_status_t mkl_sparse_d_export_csr_64(const sparse_matrix_t source,
                                           sparse_index_base_t *indexing, MKL_INT64 *rows,
                                           MKL_INT64 *cols, MKL_INT64 **rows_start,
                                           MKL_INT64 **rows_end, MKL_INT64 **col_indx,
                                           double **values);
sparse_status_t mkl_sparse_c_export_csr_64(const sparse_matrix_t source,
                                           sparse_index_base_t *indexing, MKL_INT64 *rows,
                                           MKL_INT64 *cols, MKL_INT64 **rows_start,
                                           MKL_INT64 **rows_end, MKL_INT64 **col_indx,
                                           MKL_Complex8 **values);
sparse_status_t mkl_sparse_z_export_csr_64(const sparse_matrix_t source,
                                           sparse_index_base_t *indexing, MKL_INT64 *rows,
                                           MKL_INT64 *cols, MKL_INT64 **rows_start,
                                           MKL_INT64 **rows_end, MKL_INT64 **col_indx,
                                           MKL_Complex16 **values);
sparse_status_t mkl_sparse_destroy_64(sparse_matrix_t A);

/* Hints and inspection */
sparse_status_t mkl_sparse_set_mv_hint_64(const sparse_matrix_t A, sparse_operation_t operation,
                                          struct matrix_descr descr, MKL_INT64 expected_calls);
sparse_status_t mkl_sparse_set_mm_hint_64(const sparse_matrix_t A, sparse_operation_t operation,
                                          struct matrix_descr descr, sparse_layout_t layout,
                                          MKL_INT64 dense_matrix_size, MKL_INT64 expected_calls);
sparse_status_t mkl_sparse_set_memory_hint_64(const sparse_matrix_t A, sparse_memory_usage_t policy);
sparse_status_t mkl_sparse_optimize_64(sparse_matrix_t A);
sparse_status_t mkl_sparse_order_64(const sparse_matrix_t A);

/* Sparse times dense: y = alpha*op(A)*x + beta*y */
sparse_status_t mkl_sparse_s_mv_64(sparse_operation_t operation, float alpha,
                                   const sparse_matrix_t A, struct matrix_descr descr,
                                   const float *x, float beta, float *y);
sparse_status_t mkl_sparse_d_mv_64(sparse_operation_t operation, double alpha,
                                   const sparse_matrix_t A, struct matrix_descr descr,
                                   const double *x, double beta, double *y);
sparse_status_t mkl_sparse_c_mv_64(sparse_operation_t operation, MKL_Complex8 alpha,
                                   const sparse_matrix_t A, struct matrix_descr descr,
                                   const MKL_Complex8 *x, MKL_Complex8 beta, MKL_Complex8 *y);
sparse_status_t mkl_sparse_z_mv_64(sparse_operation_t operation, MKL_Complex16 alpha,
                                   const sparse_matrix_t A, struct matrix_descr descr,
                                   const MKL_Complex16 *x, MKL_Complex16 beta, MKL_Complex16 *y);
sparse_status_t mkl_sparse_s_mm_64(sparse_operation_t operation, float alpha,
                                   const sparse_matrix_t A, struct matrix_descr descr,
                                   sparse_layout_t layout, const float *x, MKL_INT64 columns,
                                   MKL_INT64 ldx, float beta, float *y, MKL_INT64 ldy);
sparse_status_t mkl_sparse_d_mm_64(sparse_operation_t operation, double alpha,
                                   const sparse_matrix_t A, struct matrix_descr descr,
                                   sparse_layout_t layout, const double *x, MKL_INT64 columns,
                                   MKL_INT64 ldx, double beta, double *y, MKL_INT64 ldy);
sparse_status_t mkl_sparse_c_mm_64(sparse_operation_t operation, MKL_Complex8 alpha,
                                   const sparse_matrix_t A, struct matrix_descr descr,
                                   sparse_layout_t layout, const MKL_Complex8 *x, MKL_INT64 columns,
                                   MKL_INT64 ldx, MKL_Complex8 beta, MKL_Complex8 *y, MKL_INT64 ldy);
sparse_status_t mkl_sparse_z_mm_64(sparse_operation_t operation, MKL_Complex16 alpha,
                                   const sparse_matrix_t A, struct matrix_descr descr,
                                   sparse_layout_t layout, const MKL_Complex16 *x, MKL_INT64 columns,
                                   MKL_INT64 ldx, MKL_Complex16 beta, MKL_Complex16 *y,
                                   MKL_INT64 ldy);

/* Sparse times sparse */
sparse_status_t mkl_sparse_spmm_64(sparse_operation_t operation, const sparse_matrix_t A,
                                   const sparse_matrix_t B, sparse_matrix_t *C);
sparse_status_t mkl_sparse_sp2m_64(sparse_operation_t opA, struct matrix_descr descrA,
                                   const sparse_matrix_t A, sparse_operation_t opB,
                                   struct matrix_descr descrB, const sparse_matrix_t B,
                                   sparse_request_t request, sparse_matrix_t *C);
sparse_status_t mkl_sparse_sypr_64(sparse_operation_t opA, const sparse_matrix_t A,
                                   const sparse_matrix_t B, struct matrix_descr descrB,
                                   sparse_matrix_t *C, sparse_request_t request);
sparse_status_t mkl_sparse_s_spmmd_64(sparse_operation_t operation, const sparse_matrix_t A,
                                      const sparse_matrix_t B, sparse_layout_t layout, float *C,
                                      MKL_INT64 ldc);
sparse_status_t mkl_sparse_d_spmmd_64(sparse_operation_t operation, const sparse_matrix_t A,
                                      const sparse_matrix_t B, sparse_layout_t layout, double *C,
                                      MKL_INT64 ldc);
sparse_status_t mkl_sparse_c_spmmd_64(sparse_operation_t operation, const sparse_matrix_t A,
                                      const sparse_matrix_t B, sparse_layout_t layout,
                                      MKL_Complex8 *C, MKL_INT64 ldc);
sparse_status_t mkl_sparse_z_spmmd_64(sparse_operation_t operation, const sparse_matrix_t A,
                                      const sparse_matrix_t B, sparse_layout_t layout,
                                      MKL_Complex16 *C, MKL_INT64 ldc);
#ifndef MKL_ILP64
/* ---- LP64 entry points: MKL_INT is int ---- */
/* Handles over the caller's arrays (nothing copied; see mkl/tests/README.md) */
sparse_status_t mkl_sparse_s_create_csr(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT *rows_start,
                                        MKL_INT *rows_end, MKL_INT *col_indx, float *values);
sparse_status_t mkl_sparse_d_create_csr(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT *rows_start,
                                        MKL_INT *rows_end, MKL_INT *col_indx, double *values);
sparse_status_t mkl_sparse_c_create_csr(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT *rows_start,
                                        MKL_INT *rows_end, MKL_INT *col_indx, MKL_Complex8 *values);
sparse_status_t mkl_sparse_z_create_csr(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT *rows_start,
                                        MKL_INT *rows_end, MKL_INT *col_indx, MKL_Complex16 *values);
sparse_status_t mkl_sparse_s_create_csc(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT *cols_start,
                                        MKL_INT *cols_end, MKL_INT *row_indx, float *values);
sparse_status_t mkl_sparse_d_create_csc(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT *cols_start,
                                        MKL_INT *cols_end, MKL_INT *row_indx, double *values);
sparse_status_t mkl_sparse_c_create_csc(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT *cols_start,
                                        MKL_INT *cols_end, MKL_INT *row_indx, MKL_Complex8 *values);
sparse_status_t mkl_sparse_z_create_csc(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT *cols_start,
                                        MKL_INT *cols_end, MKL_INT *row_indx, MKL_Complex16 *values);
sparse_status_t mkl_sparse_s_create_coo(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT nnz, MKL_INT *row_indx,
                                        MKL_INT *col_indx, float *values);
sparse_status_t mkl_sparse_d_create_coo(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT nnz, MKL_INT *row_indx,
                                        MKL_INT *col_indx, double *values);
sparse_status_t mkl_sparse_c_create_coo(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT nnz, MKL_INT *row_indx,
                                        MKL_INT *col_indx, MKL_Complex8 *values);
sparse_status_t mkl_sparse_z_create_coo(sparse_matrix_t *A, sparse_index_base_t indexing,
                                        MKL_INT rows, MKL_INT cols, MKL_INT nnz, MKL_INT *row_indx,
                                        MKL_INT *col_indx, MKL_Complex16 *values);

/* Copies, conversion, export, destruction */
sparse_status_t mkl_sparse_copy(const sparse_matrix_t source, struct matrix_descr descr,
                                sparse_matrix_t *dest);
sparse_status_t mkl_sparse_convert_csr(const sparse_matrix_t source, sparse_operation_t operation,
                                       sparse_matrix_t *dest);
sparse_status_t mkl_sparse_s_export_csr(const sparse_matrix_t source, sparse_index_base_t *indexing,
                                        MKL_INT *rows, MKL_INT *cols, MKL_INT **rows_start,
                                        MKL_INT **rows_end, MKL_INT **col_indx, float **values);
sparse_status_t mkl_sparse_d_export_csr(const sparse_matrix_t source, sparse_index_base_t *indexing,
                                        MKL_INT *rows, MKL_INT *cols, MKL_INT **rows_start,
                                        MKL_INT **rows_end, MKL_INT **col_indx, double **values);
sparse_status_t mkl_sparse_c_export_csr(const sparse_matrix_t source, sparse_index_base_t *indexing,
                                        MKL_INT *rows, MKL_INT *cols, MKL_INT **rows_start,
                                        MKL_INT **rows_end, MKL_INT **col_indx,
                                        MKL_Complex8 **values);
sparse_status_t mkl_sparse_z_export_csr(const sparse_matrix_t source, sparse_index_base_t *indexing,
                                        MKL_INT *rows, MKL_INT *cols, MKL_INT **rows_start,
                                        MKL_INT **rows_end, MKL_INT **col_indx,
                                        MKL_Complex16 **values);
sparse_status_t mkl_sparse_destroy(sparse_matrix_t A);

/* Hints and inspection */
sparse_status_t mkl_sparse_set_mv_hint(const sparse_matrix_t A, sparse_operation_t operation,
                                       struct matrix_descr descr, MKL_INT expected_calls);
sparse_status_t mkl_sparse_set_mm_hint(const sparse_matrix_t A, sparse_operation_t operation,
                                       struct matrix_descr descr, sparse_layout_t layout,
                                       MKL_INT dense_matrix_size, MKL_INT expected_calls);
sparse_status_t mkl_sparse_set_memory_hint(const sparse_matrix_t A, sparse_memory_usage_t policy);
sparse_status_t mkl_sparse_optimize(sparse_matrix_t A);
sparse_status_t mkl_sparse_order(const sparse_matrix_t A);

/* Sparse times dense: y = alpha*op(A)*x + beta*y */
sparse_status_t mkl_sparse_s_mv(sparse_operation_t operation, float alpha, const sparse_matrix_t A,
                                struct matrix_descr descr, const float *x, float beta, float *y);
sparse_status_t mkl_sparse_d_mv(sparse_operation_t operation, double alpha, const sparse_matrix_t A,
                                struct matrix_descr descr, const double *x, double beta, double *y);
sparse_status_t mkl_sparse_c_mv(sparse_operation_t operation, MKL_Complex8 alpha,
                                const sparse_matrix_t A, struct matrix_descr descr,
                                const MKL_Complex8 *x, MKL_Complex8 beta, MKL_Complex8 *y);
sparse_status_t mkl_sparse_z_mv(sparse_operation_t operation, MKL_Complex16 alpha,
                                const sparse_matrix_t A, struct matrix_descr descr,
                                const MKL_Complex16 *x, MKL_Complex16 beta, MKL_Complex16 *y);
sparse_status_t mkl_sparse_s_mm(sparse_operation_t operation, float alpha, const sparse_matrix_t A,
                                struct matrix_descr descr, sparse_layout_t layout, const float *x,
                                MKL_INT columns, MKL_INT ldx, float beta, float *y, MKL_INT ldy);
sparse_status_t mkl_sparse_d_mm(sparse_operation_t operation, double alpha, const sparse_matrix_t A,
                                struct matrix_descr descr, sparse_layout_t layout, const double *x,
                                MKL_INT columns, MKL_INT ldx, double beta, double *y, MKL_INT ldy);
sparse_status_t mkl_sparse_c_mm(sparse_operation_t operation, MKL_Complex8 alpha,
                                const sparse_matrix_t A, struct matrix_descr descr,
                                sparse_layout_t layout, const MKL_Complex8 *x, MKL_INT columns,
                                MKL_INT ldx, MKL_Complex8 beta, MKL_Complex8 *y, MKL_INT ldy);
sparse_status_t mkl_sparse_z_mm(sparse_operation_t operation, MKL_Complex16 alpha,
                                const sparse_matrix_t A, struct matrix_descr descr,
                                sparse_layout_t layout, const MKL_Complex16 *x, MKL_INT columns,
                                MKL_INT ldx, MKL_Complex16 beta, MKL_Complex16 *y, MKL_INT ldy);

/* Sparse times sparse */
sparse_status_t mkl_sparse_spmm(sparse_operation_t operation, const sparse_matrix_t A,
                                const sparse_matrix_t B, sparse_matrix_t *C);
sparse_status_t mkl_sparse_sp2m(sparse_operation_t opA, struct matrix_descr descrA,
                                const sparse_matrix_t A, sparse_operation_t opB,
                                struct matrix_descr descrB, const sparse_matrix_t B,
                                sparse_request_t request, sparse_matrix_t *C);
sparse_status_t mkl_sparse_sypr(sparse_operation_t opA, const sparse_matrix_t A,
                                const sparse_matrix_t B, struct matrix_descr descrB,
                                sparse_matrix_t *C, sparse_request_t request);
sparse_status_t mkl_sparse_s_spmmd(sparse_operation_t operation, const sparse_matrix_t A,
                                   const sparse_matrix_t B, sparse_layout_t layout, float *C,
                                   MKL_INT ldc);
sparse_status_t mkl_sparse_d_spmmd(sparse_operation_t operation, const sparse_matrix_t A,
                                   const sparse_matrix_t B, sparse_layout_t layout, double *C,
                                   MKL_INT ldc);
sparse_status_t mkl_sparse_c_spmmd(sparse_operation_t operation, const sparse_matrix_t A,
                                   const sparse_matrix_t B, sparse_layout_t layout, MKL_Complex8 *C,
                                   MKL_INT ldc);
sparse_status_t mkl_sparse_z_spmmd(sparse_operation_t operation, const sparse_matrix_t A,
                                   const sparse_matrix_t B, sparse_layout_t layout, MKL_Complex16 *C,
                                   MKL_INT ldc);
#else
/* ILP64 build: the plain names reach the _64 entry points (same arguments, MKL_INT64). */
#define mkl_sparse_s_create_csr    mkl_sparse_s_create_csr_64
#define mkl_sparse_d_create_csr    mkl_sparse_d_create_csr_64
#define mkl_sparse_c_create_csr    mkl_sparse_c_create_csr_64
#define mkl_sparse_z_create_csr    mkl_sparse_z_create_csr_64
#define mkl_sparse_s_create_csc    mkl_sparse_s_create_csc_64
#define mkl_sparse_d_create_csc    mkl_sparse_d_create_csc_64
#define mkl_sparse_c_create_csc    mkl_sparse_c_create_csc_64
#define mkl_sparse_z_create_csc    mkl_sparse_z_create_csc_64
#define mkl_sparse_s_create_coo    mkl_sparse_s_create_coo_64
#define mkl_sparse_d_create_coo    mkl_sparse_d_create_coo_64
#define mkl_sparse_c_create_coo    mkl_sparse_c_create_coo_64
#define mkl_sparse_z_create_coo    mkl_sparse_z_create_coo_64
#define mkl_sparse_copy            mkl_sparse_copy_64
#define mkl_sparse_convert_csr     mkl_sparse_convert_csr_64
#define mkl_sparse_s_export_csr    mkl_sparse_s_export_csr_64
#define mkl_sparse_d_export_csr    mkl_sparse_d_export_csr_64
#define mkl_sparse_c_export_csr    mkl_sparse_c_export_csr_64
#define mkl_sparse_z_export_csr    mkl_sparse_z_export_csr_64
#define mkl_sparse_destroy         mkl_sparse_destroy_64
#define mkl_sparse_set_mv_hint     mkl_sparse_set_mv_hint_64
#define mkl_sparse_set_mm_hint     mkl_sparse_set_mm_hint_64
#define mkl_sparse_set_memory_hint mkl_sparse_set_memory_hint_64
#define mkl_sparse_optimize        mkl_sparse_optimize_64
#define mkl_sparse_order           mkl_sparse_order_64
#define mkl_sparse_s_mv            mkl_sparse_s_mv_64
#define mkl_sparse_d_mv            mkl_sparse_d_mv_64
#define mkl_sparse_c_mv            mkl_sparse_c_mv_64
#define mkl_sparse_z_mv            mkl_sparse_z_mv_64
#define mkl_sparse_s_mm            mkl_sparse_s_mm_64
#define mkl_sparse_d_mm            mkl_sparse_d_mm_64
#define mkl_sparse_c_mm            mkl_sparse_c_mm_64
#define mkl_sparse_z_mm            mkl_sparse_z_mm_64
#define mkl_sparse_spmm            mkl_sparse_spmm_64
#define mkl_sparse_sp2m            mkl_sparse_sp2m_64
#define mkl_sparse_sypr            mkl_sparse_sypr_64
#define mkl_sparse_s_spmmd         mkl_sparse_s_spmmd_64
#define mkl_sparse_d_spmmd         mkl_sparse_d_spmmd_64
#define mkl_sparse_c_spmmd         mkl_sparse_c_spmmd_64
#define mkl_sparse_z_spmmd         mkl_sparse_z_spmmd_64
#endif /* MKL_ILP64 */

/* Not in MKL: this layer's own addition. Text of the last error of a call made by the calling
 * thread ("" when none); the pointer stays valid until that thread's next call. */
const char *spgemm_mkl_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SPGEMM_MKL_SPBLAS_H */

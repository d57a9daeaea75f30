#ifndef SPGEMM_H
#define SPGEMM_H

#include <stdint.h>
#include <stddef.h>

/*
 * libspgemm: sparse matrix-matrix products C = A*B (SpGEMM) in two phases.
 *
 * Usage:
 *   spgemm_create(&h);
 *   spgemm_matrix_create_csr(&A, m, n, SPGEMM_INDEX_INT32, a_rowptr, SPGEMM_INDEX_INT32,
 *                            a_cols, SPGEMM_VALUE_FLOAT64, a_vals, SPGEMM_INDEX_BASE_ZERO);
 *   ... same for B ...
 *   spgemm_symbolic(h, A, B, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, 0, c_rowptr, &plan);
 *   spgemm_plan_get_nnz(plan, &nnz);            allocate c_cols[nnz], c_vals[nnz]
 *   spgemm_numeric(h, plan, A, B, c_cols, c_vals);
 *   ... change values of A and/or B, same structure ...
 *   spgemm_numeric(h, plan, A, B, c_cols, c_vals);   reuse: no symbolic work
 *   spgemm_plan_destroy(plan); spgemm_matrix_destroy(A); ...; spgemm_destroy(h);
 *
 * Conventions:
 * - Every function returns spgemm_status_t (SPGEMM_STATUS_SUCCESS = 0); outputs go through
 *   pointers. On failure spgemm_last_error(handle) (or spgemm_last_error(NULL) for calls
 *   without a handle) names the offending argument and index.
 * - Objects are opaque; each has create and destroy functions; destroy(NULL) is a no-op.
 * - Matrices describe caller memory; nothing is copied.
 * - Determinism: results are bitwise identical whatever the thread count and algorithm.
 * - Thread-safety: calls on one handle are serialised internally; use one handle per
 *   thread for concurrency. Matrices may be shared read-only between threads.
 * - No function panics, aborts or exits on bad input or allocation failure.
 */


// Library version as "MAJOR.MINOR.PATCH".
#define SPGEMM_VERSION_MAJOR 0

#define SPGEMM_VERSION_MINOR 1

#define SPGEMM_VERSION_PATCH 0

// SpGEMM algorithm choice (codes as in the C header's `SPGEMM_ALG_*`).
typedef struct Algorithm Algorithm;

// Opaque distributed matrix: this rank's rows (a descriptor of caller arrays, nothing
// copied) and a duplicate of the caller's communicator.
typedef struct spgemm_dist_matrix_t spgemm_dist_matrix_t;

// Opaque distributed SpMM plan (algorithm, grid, A's tiles on their ranks, buffers).
typedef struct spgemm_dist_plan_t spgemm_dist_plan_t;

// Opaque distributed SpGEMM plan: the rows each rank imports, the node plans, for R*A*P
// the intermediate A*P, and a duplicate of the communicator.
typedef struct spgemm_dist_spgemm_plan_t spgemm_dist_spgemm_plan_t;

// Opaque library context: worker threads, options and reusable workspace.
typedef struct spgemm_handle_t spgemm_handle_t;

// Opaque CSR matrix: a descriptor of caller arrays, or a result owned by the library.
typedef struct spgemm_matrix_t spgemm_matrix_t;

// Opaque result of the symbolic phase, reused by numeric calls.
typedef struct spgemm_plan_t spgemm_plan_t;

// Opaque precomputation for repeated SpMM with one matrix (MKL's `set_mm_hint` and
// `optimize`). Read-only once created: may be shared between threads and handles.
typedef struct spgemm_spmm_analysis_t spgemm_spmm_analysis_t;

// Status code returned by every function (0 = success). See `SPGEMM_STATUS_*`.
typedef int32_t spgemm_status_t;

// Integer type of row offsets or column indices. See `SPGEMM_INDEX_*`.
typedef int32_t spgemm_index_type_t;

// Type of values: real or complex floating point. See `SPGEMM_VALUE_*`.
typedef int32_t spgemm_value_type_t;

// Index base: 0 (C) or 1 (Fortran).
typedef int32_t spgemm_index_base_t;

// Storage order of the dense matrices X and Y. See `SPGEMM_LAYOUT_*`.
typedef int32_t spgemm_layout_t;

// Distributed SpMM algorithm. See `SPGEMM_DIST_ALG_*`.
typedef int32_t spgemm_dist_algorithm_t;

// op(A) in SpMM, op(A) and op(B) in SpGEMM. See `SPGEMM_OPERATION_*`.
typedef int32_t spgemm_operation_t;

// SpGEMM algorithm. See `SPGEMM_ALG_*`.
typedef int32_t spgemm_algorithm_t;

// Where products run. See `SPGEMM_BACKEND_*`.
typedef int32_t spgemm_backend_t;

// Where a matrix's arrays live. See `SPGEMM_MEMORY_*`.
typedef int32_t spgemm_memory_t;

// Binding of worker threads to cores. See `SPGEMM_BIND_*`.
typedef int32_t spgemm_bind_t;

// Use of high-bandwidth memory. See `SPGEMM_HBM_*`.
typedef int32_t spgemm_hbm_t;





// The call succeeded.
#define SPGEMM_STATUS_SUCCESS 0

// A required pointer argument was NULL.
#define SPGEMM_STATUS_NULL_POINTER 1

// An argument had an invalid value (negative size, unknown enum code, misaligned array,
// wrong array length, missing values).
#define SPGEMM_STATUS_INVALID_VALUE 2

// The number of columns of A differs from the number of rows of B.
#define SPGEMM_STATUS_DIMENSION_MISMATCH 3

// Row offsets do not start at the index base, decrease, or disagree with the entry count.
#define SPGEMM_STATUS_INVALID_STRUCTURE 4

// A column index lies outside [base, base + ncols).
#define SPGEMM_STATUS_INDEX_OUT_OF_RANGE 5

// A size, nnz(C) or a column index does not fit the requested integer type (for example
// nnz(C) > 2^31 - 1 with int32 row offsets). Detected before anything is written.
#define SPGEMM_STATUS_INDEX_OVERFLOW 6

// A and B have different index or value types, or a call's types differ from the plan's.
#define SPGEMM_STATUS_TYPE_MISMATCH 7

// The matrices given to a numeric call differ in shape or structure from the plan's.
#define SPGEMM_STATUS_PLAN_MISMATCH 8

// Memory could not be allocated (the request may exceed the machine's memory).
#define SPGEMM_STATUS_ALLOC_FAILED 9

// The requested combination is not supported.
#define SPGEMM_STATUS_NOT_SUPPORTED 10

// No usable GPU device.
#define SPGEMM_STATUS_NO_DEVICE 11

// Internal error: a bug in libspgemm (the message says where). Please report it.
#define SPGEMM_STATUS_INTERNAL 12

// 32-bit signed integers (`int32_t`, Fortran default `integer`).
#define SPGEMM_INDEX_INT32 0

// 64-bit signed integers (`int64_t`, Fortran `integer(c_int64_t)`).
#define SPGEMM_INDEX_INT64 1

// `size_t` (row offsets only, as in Tpetra).
#define SPGEMM_INDEX_SIZE_T 2

// `float`.
#define SPGEMM_VALUE_FLOAT32 0

// `double`.
#define SPGEMM_VALUE_FLOAT64 1

// `float _Complex` (C99; real part then imaginary part, aligned as `float`), which is also
// the layout of C++ `std::complex<float>` and Fortran `complex(c_float_complex)`.
#define SPGEMM_VALUE_COMPLEX_FLOAT 2

// `double _Complex` (C99), C++ `std::complex<double>`, Fortran `complex(c_double_complex)`.
#define SPGEMM_VALUE_COMPLEX_DOUBLE 3

// 0-based indices (C, C++).
#define SPGEMM_INDEX_BASE_ZERO 0

// 1-based indices (Fortran).
#define SPGEMM_INDEX_BASE_ONE 1

// Let the library choose per product and phase (default).
#define SPGEMM_ALG_AUTO 0

// Dense accumulator: a value and a marker per column of C in each thread (KKDENSE).
// Fast when C has few columns; needs ncols(C) < 2^32.
#define SPGEMM_ALG_KKDENSE 1

// Hash accumulator with linear probing, at most half full (KKLP). Memory independent of
// the number of columns of C.
#define SPGEMM_ALG_KKLP 2

// Two-level linked-list hash map (KKMEM): a small first level per thread that stays in
// cache, a second level sized by the largest row only for rows that overflow it. Memory
// independent of the number of columns of C.
#define SPGEMM_ALG_KKMEM 3

// Bind workers by a policy chosen from the machine (default): `SPGEMM_BIND_NONE` for fewer
// workers than cores when other processes may share them (the creating thread's CPU mask
// is the whole machine and no MPI launcher names the process's share: processes that each
// bound from the first cores would all run there, as under `OMP_PROC_BIND=true`); else
// `SPGEMM_BIND_SPREAD` when the machine has several NUMA domains or more cores than
// workers, else `SPGEMM_BIND_CLOSE`.
#define SPGEMM_BIND_AUTO 0

// Do not bind workers (the OS places them within the creating thread's CPU mask).
#define SPGEMM_BIND_NONE 1

// Bind worker i to the i-th core in topology order (workers share caches and a socket).
#define SPGEMM_BIND_CLOSE 2

// Bind workers to cores spread evenly over the machine (over sockets and NUMA nodes).
#define SPGEMM_BIND_SPREAD 3

// Use high-bandwidth memory (MCDRAM, HBM) for workspace when the machine has it (default).
#define SPGEMM_HBM_AUTO 0

// Never use high-bandwidth memory.
#define SPGEMM_HBM_OFF 1

// Use high-bandwidth memory; when there is none, normal memory (the topology info says so).
#define SPGEMM_HBM_ON 2

// GPU for large products when a usable CUDA device is present, else CPU (default).
#define SPGEMM_BACKEND_AUTO 0

// CPU only.
#define SPGEMM_BACKEND_CPU 1

// CUDA GPU (device 0). Symbolic calls fail with `SPGEMM_STATUS_NO_DEVICE` when no driver,
// no NVRTC library or no device is found, and with `SPGEMM_STATUS_NOT_SUPPORTED` when a
// size exceeds the GPU path's 32-bit device indices.
#define SPGEMM_BACKEND_CUDA 2

// The cost model picks the algorithm and the process grid (default).
#define SPGEMM_DIST_ALG_AUTO 0

// 1.5D A-stationary, bulk-synchronous (grid (p/c) x c: X replicated by an allgather over
// grid columns, partial Y summed by a reduce-scatter over grid rows).
#define SPGEMM_DIST_ALG_SA15D 1

// 2D A-stationary, bulk-synchronous (broadcasts of X, reductions of Y per stage).
#define SPGEMM_DIST_ALG_SA2D 2

// 2D C-stationary (SUMMA), bulk-synchronous (broadcasts of A and X per stage).
#define SPGEMM_DIST_ALG_SC2D 3

// 2D A-stationary, one-sided (MPI RMA gets of X tiles).
#define SPGEMM_DIST_ALG_SA2D_ASYNC 4

// 2D C-stationary, one-sided (MPI RMA gets of A and X tiles).
#define SPGEMM_DIST_ALG_SC2D_ASYNC 5

// 1D rows, sparsity-aware (PETSc MPIAIJ's halo): each rank receives only the rows of X
// its columns name, point to point from their owners (grid p x 1).
#define SPGEMM_DIST_ALG_HALO1D 6

// Host (CPU) memory: descriptors of `spgemm_matrix_create_csr` and results of
// `spgemm_multiply`.
#define SPGEMM_MEMORY_HOST 0

// GPU memory: descriptors of `spgemm_matrix_create_csr_device`.
#define SPGEMM_MEMORY_DEVICE 1

// Row-major: entry (i, j) at `i * ld + j`; `ld >= k`.
#define SPGEMM_LAYOUT_ROW_MAJOR 0

// Column-major (Fortran): entry (i, j) at `j * ld + i`; `ld >= max(1, rows)`.
#define SPGEMM_LAYOUT_COL_MAJOR 1

// op(A) = A.
#define SPGEMM_OPERATION_NON_TRANSPOSE 0

// op(A) = A^T (through a transposed copy of A's structure; cache it with an analysis, or
// in a plan for SpGEMM).
#define SPGEMM_OPERATION_TRANSPOSE 1

// op(A) = A^H, the conjugate transpose (A^T's structure, conjugated values; the same as
// `SPGEMM_OPERATION_TRANSPOSE` for real values).
#define SPGEMM_OPERATION_CONJUGATE_TRANSPOSE 2

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Returns a static, NUL-terminated description of `status` ("unknown status" for codes
// this version does not define). Never NULL. Thread-safe.
const char *spgemm_status_string(spgemm_status_t status);

// Writes the library version to the non-NULL pointers among `major`, `minor`, `patch`.
// Thread-safe.
//
// # Safety
// Each pointer is NULL or points to a writable `int32_t`.
spgemm_status_t spgemm_version(int32_t *major, int32_t *minor, int32_t *patch);

// Creates a distributed matrix from this rank's block of rows. Collective over `comm`.
//
// - `comm`: the communicator as a Fortran handle (`MPI_Fint`): C passes
//   `MPI_Comm_c2f(comm)`, Fortran its `integer` communicator (or `comm%MPI_VAL`), C++
//   likewise. The library duplicates it (the caller's is never freed; its traffic never
//   mixes with the library's) and never initialises or finalises MPI: a call before
//   `MPI_Init` or after `MPI_Finalize` gives `SPGEMM_STATUS_INVALID_VALUE`.
// - `global_rows` x `global_cols`: A's global sizes, the same on every rank.
// - `row_start`, `local_rows`: this rank owns rows `row_start .. row_start + local_rows`
//   (0-based, whatever `base`). The ranks' blocks follow each other in rank order and tile
//   the global rows (PETSc's ownership ranges, Tpetra's contiguous row maps); a rank may
//   own no rows.
// - `x_start`, `x_rows`: the rows of X this rank owns (its block of A's columns); pass
//   `x_start = -1` for the same range as its rows (square A). The ranks' X blocks also
//   follow each other in rank order and tile the global columns.
// - The local rows in CSR as `spgemm_matrix_create_csr` takes them (any offset/index/value
//   type, base 0 or 1), `local_rows` rows with GLOBAL column indices in
//   [base, base + global_cols), with values.
//
// Everything is checked here, on every rank: the arguments, each rank's rows (structure,
// column indices), and that the ranks' sizes and ranges fit together; a failure on any
// rank gives the same status on every rank (no rank waits, none crashes). The arrays are
// borrowed and must stay valid and unchanged in structure while the matrix is used.
// On success `*matrix` owns the matrix; release it with `spgemm_dist_matrix_destroy`.
//
// Errors (on every rank): `SPGEMM_STATUS_NOT_SUPPORTED` (libspgemm built without the `mpi`
// feature), `SPGEMM_STATUS_INVALID_VALUE` (MPI not initialised or finalised, a handle
// that names no communicator, negative sizes, codes, ranges that do not tile), and those of
// `spgemm_matrix_create_csr` and of validation (`SPGEMM_STATUS_NULL_POINTER`,
// `SPGEMM_STATUS_INVALID_STRUCTURE`, `SPGEMM_STATUS_INDEX_OUT_OF_RANGE`,
// `SPGEMM_STATUS_DIMENSION_MISMATCH` for global sizes that differ between ranks).
// A NULL `handle` or `matrix` is agreed too. Every rank of the communicator must call
// with a handle of that same communicator (as for any collective MPI call); an
// inter-communicator gives `SPGEMM_STATUS_NOT_SUPPORTED`.
//
// # Safety
// `handle` is NULL or live, `matrix` NULL or writable, the arrays valid as described.
spgemm_status_t spgemm_dist_matrix_create_csr(spgemm_handle_t *handle,
                                              int comm,
                                              int64_t global_rows,
                                              int64_t global_cols,
                                              int64_t row_start,
                                              int64_t local_rows,
                                              int64_t x_start,
                                              int64_t x_rows,
                                              spgemm_index_type_t offset_type,
                                              const void *row_offsets,
                                              spgemm_index_type_t index_type,
                                              const void *col_indices,
                                              spgemm_value_type_t value_type,
                                              const void *values,
                                              spgemm_index_base_t base,
                                              spgemm_dist_matrix_t **matrix);

// Releases a distributed matrix (frees its duplicate of the communicator; the caller's
// arrays are untouched). Collective over the matrix's communicator, like
// `MPI_Comm_free`. `NULL` is a no-op.
//
// # Safety
// `matrix` is NULL or a live matrix from `spgemm_dist_matrix_create_csr`, not used after.
spgemm_status_t spgemm_dist_matrix_destroy(spgemm_dist_matrix_t *matrix);

// What the cost model predicts for `Y = alpha A X + beta Y` with k columns, without
// building anything: the algorithm and grid it picks under the options (those of
// `spgemm_dist_spmm_plan`), the predicted seconds of one product, and the largest
// per-rank footprint of that choice in bytes. Each output pointer may be NULL.
// Collective over A's communicator; the same outputs and status on every rank.
// Errors: those of `spgemm_dist_spmm_plan`.
//
// # Safety
// `handle` NULL or live, `a` a live distributed matrix, outputs NULL or writable.
spgemm_status_t spgemm_dist_spmm_estimate(spgemm_handle_t *handle,
                                          const spgemm_dist_matrix_t *a,
                                          int64_t k,
                                          spgemm_layout_t layout,
                                          spgemm_dist_algorithm_t algorithm,
                                          int64_t grid_rows,
                                          int64_t grid_cols,
                                          int64_t memory_limit,
                                          spgemm_dist_algorithm_t *chosen_algorithm,
                                          int64_t *chosen_grid_rows,
                                          int64_t *chosen_grid_cols,
                                          double *predicted_seconds,
                                          int64_t *footprint_max_bytes);

// Plans `Y = alpha A X + beta Y` with k columns of X and Y in `layout`
// (`SPGEMM_LAYOUT_ROW_MAJOR` or `_COL_MAJOR`): picks the algorithm and process grid
// (`algorithm` = `SPGEMM_DIST_ALG_AUTO`: the cost model's choice, from the measured
// network and local SpMM rate; or the one given), moves A's tiles to their ranks and
// allocates the buffers, so that each `spgemm_dist_spmm` pays only for the product.
// `grid_rows` x `grid_cols` forces the process grid (both 0: chosen; for
// `SPGEMM_DIST_ALG_SA15D` the replication factor c is `grid_cols`). `memory_limit`:
// bytes a rank may hold for the plan (0: no limit); a plan over it on any rank is refused
// with `SPGEMM_STATUS_ALLOC_FAILED` on every rank before anything is allocated. The plan
// keeps no reference to A's arrays or its communicator (it has its own duplicate).
// Collective over A's communicator.
// Errors (on every rank): `SPGEMM_STATUS_NULL_POINTER` (handle, plan), `SPGEMM_STATUS_INVALID_VALUE`
// (negative k, unknown layout or algorithm code, a grid that is not p ranks, A without
// values), `SPGEMM_STATUS_ALLOC_FAILED`, `SPGEMM_STATUS_INDEX_OVERFLOW` (a message over
// the `int` counts of MPI), `SPGEMM_STATUS_NOT_SUPPORTED` (built without `mpi`).
// A NULL `a` returns at once on that rank: with no matrix there is no communicator to
// agree over, as with a wrong communicator the other ranks then wait.
//
// # Safety
// `handle` NULL or live, `a` a live distributed matrix, `plan` NULL or writable.
spgemm_status_t spgemm_dist_spmm_plan(spgemm_handle_t *handle,
                                      const spgemm_dist_matrix_t *a,
                                      int64_t k,
                                      spgemm_layout_t layout,
                                      spgemm_dist_algorithm_t algorithm,
                                      int64_t grid_rows,
                                      int64_t grid_cols,
                                      int64_t memory_limit,
                                      spgemm_dist_plan_t **plan);

// What the plan runs and holds on this rank: its algorithm (never AUTO), process grid,
// the bytes this rank holds for it, the model's payload bytes of one product over all
// ranks together, the value type (`SPGEMM_VALUE_*`), and the rows of X and of Y this rank
// passes to `spgemm_dist_spmm`. Each output pointer may be NULL. Local (no MPI call).
//
// # Safety
// `plan` NULL or live, outputs NULL or writable.
spgemm_status_t spgemm_dist_plan_get_info(spgemm_dist_plan_t *plan,
                                          spgemm_dist_algorithm_t *algorithm,
                                          int64_t *grid_rows,
                                          int64_t *grid_cols,
                                          int64_t *footprint_bytes,
                                          double *predicted_bytes_total,
                                          spgemm_value_type_t *value_type,
                                          int64_t *x_rows,
                                          int64_t *y_rows);

// Traffic and time of the plan's last `spgemm_dist_spmm` on this rank: payload bytes sent
// to and received from other ranks (one-sided gets count at the origin only), the bytes
// of the status agreement, seconds in local products and in the whole call. Each output
// pointer may be NULL. Local.
//
// # Safety
// `plan` NULL or live, outputs NULL or writable.
spgemm_status_t spgemm_dist_plan_get_stats(spgemm_dist_plan_t *plan,
                                           int64_t *bytes_sent,
                                           int64_t *bytes_received,
                                           int64_t *control_bytes,
                                           double *compute_seconds,
                                           double *total_seconds);

// New values of the plan's matrix: `a` describes the same structure and types as the
// matrix planned (checked by a digest: `SPGEMM_STATUS_PLAN_MISMATCH` otherwise), with new
// values (e.g. the caller's value array changed in place). Only values move.
// Collective over the plan's communicator; the same status on every rank.
//
// # Safety
// `handle` NULL or live, `plan` a live plan, `a` NULL or a live distributed matrix.
spgemm_status_t spgemm_dist_spmm_update_values(spgemm_handle_t *handle,
                                               spgemm_dist_plan_t *plan,
                                               const spgemm_dist_matrix_t *a);

// `Y = alpha * A * X + beta * Y` with the plan. `x`: this rank's rows of X (its block of
// A's columns, `x_rows` of `spgemm_dist_plan_get_info`), `y`: its rows of Y (`y_rows`),
// both k columns in the plan's layout with leading dimensions `ldx` and `ldy` (row-major:
// `ld >= k`; column-major: `ld >= max(1, rows)`), of A's value type, not overlapping.
// BLAS conventions: `beta == 0` does not read Y, `alpha == 0` reads neither A nor X (X
// may then be NULL). Every rank passes the same alpha and beta. The local products run on
// the handle's threads (its backend decides CPU or GPU). Repeat with new X and Y as often
// as needed. Collective over the plan's communicator: an argument error on any rank
// (NULL or misaligned X or Y, a leading dimension too small, alpha or beta differing
// between ranks) gives the same status on every rank, before anything is written. A NULL
// `handle` or `plan` returns at once on that rank (no communicator to agree over without
// the plan; the handle's absence cannot take part in the product's agreement).
//
// Result: each entry of Y equals the serial SpMM of the gathered matrices, bitwise for
// the algorithms that keep the serial summation order (sA-1.5D with c = 1, and every
// algorithm on one rank), else within rounding (docs/DISTRIBUTED.md states it per
// algorithm).
// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE`,
// `SPGEMM_STATUS_INDEX_OVERFLOW` (X or Y spans more than the address space).
//
// # Safety
// `handle` and `plan` live; `x` and `y` valid for the extents described above.
spgemm_status_t spgemm_dist_spmm(spgemm_handle_t *handle,
                                 spgemm_dist_plan_t *plan,
                                 double alpha,
                                 const void *x,
                                 int64_t ldx,
                                 double beta,
                                 void *y,
                                 int64_t ldy);

// Releases a plan (its communicators and, for the one-sided algorithms, its MPI windows).
// Collective over the plan's communicator. `NULL` is a no-op.
//
// # Safety
// `plan` NULL or a live plan, not used after.
spgemm_status_t spgemm_dist_plan_destroy(spgemm_dist_plan_t *plan);

// Symbolic phase of the distributed product C = op(A) * B, as PETSc's `MatMatMult`
// (op N) and `MatTransposeMatMult` (op T; `SPGEMM_OPERATION_CONJUGATE_TRANSPOSE` is the
// same for real values) on MPIAIJ matrices. Collective over A's communicator.
//
// - `a`, `b`: distributed matrices (`spgemm_dist_matrix_create_csr`) on one communicator,
//   with the same offset, index and value types (float or double). op(A)'s columns must
//   be B's rows (A's global columns for op N, its global rows for op T). B's row blocks
//   say where each row of B lives; A's column ranges (`x_start`) matter only for op T,
//   where they are the rows of A^T, hence of C, each rank owns.
// - C is distributed like op(A)'s rows: this rank gets rows `row_start .. + local_rows`
//   of A (op N) or its `x_start .. + x_rows` (op T), with GLOBAL column indices (B's
//   columns), stored as `c_offset_type` offsets, `c_index_type` indices, base `c_base`.
// - `c_row_offsets`: this rank's C row offsets (its rows + 1 entries) are written here;
//   `spgemm_dist_spgemm_plan_get_info` gives the local nnz to size C's other arrays.
//
// The symbolic phase fetches the structure of the rows of B (of A^T's entries for op T)
// that this rank needs from their owners and plans the local product; each numeric
// call moves only values. Every entry of C is summed in the order of op(A)'s row, as the
// serial product of the gathered matrices sums it: the values are bitwise the serial
// ones at any number of ranks.
//
// On success `*plan` owns the plan (`spgemm_dist_spgemm_plan_destroy`, collective).
// Errors, the same on every rank: those of `spgemm_symbolic` (`SPGEMM_STATUS_INDEX_OVERFLOW`
// when a rank's C does not fit `c_offset_type` / `c_index_type`), of validation (a rank's
// bad structure or index), `SPGEMM_STATUS_DIMENSION_MISMATCH` (inner dimensions differ),
// `SPGEMM_STATUS_INVALID_VALUE` (ranges that do not tile, matrices on different
// communicators, bad codes), `SPGEMM_STATUS_TYPE_MISMATCH` (operands of different types),
// `SPGEMM_STATUS_NOT_SUPPORTED` (complex values; a build without MPI). A NULL matrix is
// reported on its own rank only (there is no communicator to agree over): every rank
// must pass live matrices, as for any collective MPI call.
//
// # Safety
// `handle` NULL or live; `a`, `b` NULL or live; `c_row_offsets` with room for this rank's
// rows + 1 entries of `c_offset_type`; `plan` NULL or writable.
spgemm_status_t spgemm_dist_spgemm_symbolic(spgemm_handle_t *handle,
                                            spgemm_operation_t op_a,
                                            const spgemm_dist_matrix_t *a,
                                            const spgemm_dist_matrix_t *b,
                                            spgemm_index_type_t c_offset_type,
                                            spgemm_index_type_t c_index_type,
                                            spgemm_index_base_t c_base,
                                            void *c_row_offsets,
                                            spgemm_dist_spgemm_plan_t **plan);

// Symbolic phase of C = op(R) * A * P in one plan, the coarse operator of an AMG setup
// (PETSc's `MatMatMatMult` and `MatPtAP`): op N gives R*A*P; op T gives P^T*A*P (pass P
// as `r` too). A*P is formed first and kept in the plan; op(R) times it second. C is
// distributed like op(R)'s rows. Everything else as `spgemm_dist_spgemm_symbolic`.
// Collective over the matrices' communicator.
//
// # Safety
// As for `spgemm_dist_spgemm_symbolic`, with `r`, `a`, `p` NULL or live.
spgemm_status_t spgemm_dist_rap_symbolic(spgemm_handle_t *handle,
                                         spgemm_operation_t op_r,
                                         const spgemm_dist_matrix_t *r,
                                         const spgemm_dist_matrix_t *a,
                                         const spgemm_dist_matrix_t *p,
                                         spgemm_index_type_t c_offset_type,
                                         spgemm_index_type_t c_index_type,
                                         spgemm_index_base_t c_base,
                                         void *c_row_offsets,
                                         spgemm_dist_spgemm_plan_t **plan);

// Numeric phase: this rank's nnz column indices (global, the plan's type and base) and
// values of C, with the current values of the matrices of the symbolic call, passed in
// the same order (`m0`, `m1` = A, B with `m2` NULL; or R, A, P). Call it again whenever
// their values change (same structure): only values move between ranks. With validation
// on (the default), a rank whose matrix changed structure makes it
// `SPGEMM_STATUS_PLAN_MISMATCH` on every rank. Collective.
// Errors, the same on every rank: `SPGEMM_STATUS_PLAN_MISMATCH`,
// `SPGEMM_STATUS_NULL_POINTER` (an output array), `SPGEMM_STATUS_INVALID_VALUE` (operands
// other than the plan's count), those of validation. NULL `handle`, `plan` or matrices
// are reported on their rank only (as for the symbolic phase).
//
// # Safety
// `handle`, `plan` NULL or live; the matrices NULL or live; `c_col_indices` and
// `c_values` with room for the local nnz entries of their types.
spgemm_status_t spgemm_dist_spgemm_numeric(spgemm_handle_t *handle,
                                           spgemm_dist_spgemm_plan_t *plan,
                                           const spgemm_dist_matrix_t *m0,
                                           const spgemm_dist_matrix_t *m1,
                                           const spgemm_dist_matrix_t *m2,
                                           void *c_col_indices,
                                           void *c_values);

// What the plan gives this rank: its rows of C (first global row and count), C's global
// columns, the local and global nnz of C, and the operand count (2 or 3). Each output
// may be NULL. Local.
//
// # Safety
// `plan` NULL or live; outputs NULL or writable.
spgemm_status_t spgemm_dist_spgemm_plan_get_info(const spgemm_dist_spgemm_plan_t *plan,
                                                 int64_t *row_start,
                                                 int64_t *local_rows,
                                                 int64_t *global_cols,
                                                 int64_t *local_nnz,
                                                 int64_t *global_nnz,
                                                 int32_t *operands);

// Time and traffic on this rank: seconds of the symbolic phase and of the last numeric
// call (of which moving values), rows of B fetched from other ranks, bytes received from
// other ranks in the symbolic phase (structure) and in each numeric call (values), and
// the scalar multiplications of this rank's products. Each output may be NULL. Local.
//
// # Safety
// `plan` NULL or live; outputs NULL or writable.
spgemm_status_t spgemm_dist_spgemm_plan_get_stats(const spgemm_dist_spgemm_plan_t *plan,
                                                  double *symbolic_seconds,
                                                  double *numeric_seconds,
                                                  double *import_seconds,
                                                  int64_t *rows_imported,
                                                  int64_t *symbolic_bytes_received,
                                                  int64_t *numeric_bytes_received,
                                                  int64_t *flops);

// This rank's share of a distributed matrix: its rows and its rows of X (its block of
// columns: the rows of A^T it owns). Each output may be NULL. Local.
//
// # Safety
// `matrix` NULL or live; outputs NULL or writable.
spgemm_status_t spgemm_dist_matrix_get_local_sizes(const spgemm_dist_matrix_t *matrix,
                                                   int64_t *local_rows,
                                                   int64_t *x_rows);

// Releases a distributed SpGEMM plan (frees its duplicate of the communicator).
// Collective over the plan's communicator, like `MPI_Comm_free`. `NULL` is a no-op.
//
// # Safety
// `plan` NULL or a live plan, not used after.
spgemm_status_t spgemm_dist_spgemm_plan_destroy(spgemm_dist_spgemm_plan_t *plan);

// Creates a handle with the default number of threads (environment variable
// `SPGEMM_NUM_THREADS`, else all cores, at most `SPGEMM_MAX_THREADS`) and default
// options: algorithm `SPGEMM_ALG_AUTO`, sorted output, input validation on.
//
// On success `*handle` owns the new handle; release it with `spgemm_destroy`. No thread
// is started here: the workers start with the first call that splits its work (a small
// product runs on the calling thread and starts none); a call whose workers cannot be
// started returns `SPGEMM_STATUS_ALLOC_FAILED`.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle is NULL), `SPGEMM_STATUS_INVALID_VALUE`
// (`SPGEMM_NUM_THREADS` set but not a count from 1 to `SPGEMM_MAX_THREADS`). Thread-safe.
//
// # Safety
// `handle` is NULL or points to writable storage for a pointer.
spgemm_status_t spgemm_create(spgemm_handle_t **handle);

// Destroys a handle and its threads and workspace; returns once the worker threads have
// ended. `spgemm_destroy(NULL)` does nothing.
// Plans and matrices made with the handle stay valid. Must not run concurrently with
// another call on the same handle.
//
// # Safety
// `handle` is NULL or a live handle from `spgemm_create`.
spgemm_status_t spgemm_destroy(spgemm_handle_t *handle);

// Sets the number of worker threads (0 = the default of `spgemm_create`). If the number
// changes, the running workers end here and the new ones start with the next call that
// splits its work.
// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (negative, or above
// `SPGEMM_MAX_THREADS`). Calls on one handle are serialised.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_num_threads(spgemm_handle_t *handle, int32_t num_threads);

// Reads the number of worker threads into `*num_threads`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `num_threads` is NULL or writable.
spgemm_status_t spgemm_get_num_threads(spgemm_handle_t *handle, int32_t *num_threads);

// Chooses the SpGEMM algorithm for later symbolic calls (`SPGEMM_ALG_*`; default
// `SPGEMM_ALG_AUTO`). A plan keeps the algorithm it was made with.
// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (unknown code).
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_algorithm(spgemm_handle_t *handle, spgemm_algorithm_t algorithm);

// Reads the algorithm option into `*algorithm`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `algorithm` is NULL or writable.
spgemm_status_t spgemm_get_algorithm(spgemm_handle_t *handle, spgemm_algorithm_t *algorithm);

// Chooses where later symbolic calls run (`SPGEMM_BACKEND_*`; default
// `SPGEMM_BACKEND_AUTO`). A plan runs its numeric calls where it was made. Selecting
// `SPGEMM_BACKEND_CUDA` opens the GPU at once (kernels are compiled by NVRTC on first
// use and cached in the handle), so a missing device is reported here.
// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (unknown code),
// `SPGEMM_STATUS_NO_DEVICE` (CUDA asked for but no driver, NVRTC or device: the option is
// left unchanged, and the message says which is missing). Calls on one handle are
// serialised.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_backend(spgemm_handle_t *handle, spgemm_backend_t backend);

// Reads the backend option into `*backend`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `backend` is NULL or writable.
spgemm_status_t spgemm_get_backend(spgemm_handle_t *handle, spgemm_backend_t *backend);

// Chooses whether C's column indices are sorted within each row (non-zero, the default)
// or left in the accumulator's order (0: skips all sorting work). Applies to plans made
// afterwards. Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_sorted_output(spgemm_handle_t *handle, int32_t sorted);

// Reads the sorted-output option (1 or 0) into `*sorted`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `sorted` is NULL or writable.
spgemm_status_t spgemm_get_sorted_output(spgemm_handle_t *handle, int32_t *sorted);

// Turns the full O(nnz) input checks on (non-zero, the default) or off (0). With checks
// on, offsets must be non-decreasing, column indices in range, and a numeric call's inputs
// must have the structure the plan was made for. With checks off the caller guarantees
// this; violations may then give wrong results or `SPGEMM_STATUS_INTERNAL`, but O(1)
// checks (NULL pointers, sizes, first and last row offset) are always made.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_validation(spgemm_handle_t *handle, int32_t enabled);

// Reads the validation option (1 or 0) into `*enabled`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `enabled` is NULL or writable.
spgemm_status_t spgemm_get_validation(spgemm_handle_t *handle, int32_t *enabled);

// Bounds the memory the handle keeps for recycling the arrays of results it returned
// (`spgemm_multiply`): when such a matrix is destroyed its arrays (those of at least
// 1 MiB) are kept, up to `max_bytes` in all, oldest evicted first, and the next result
// of this handle takes a kept array of its type that fits instead of new memory, whose
// pages the system would have to clear on first write (for a C of tens of MiB a large
// part of the numeric phase). Default 1 GiB. 0 frees what is kept and turns recycling off. Arrays
// the caller passes (`spgemm_numeric`) are never kept. Kept arrays are freed when the
// handle and every matrix it returned are destroyed. Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_output_cache(spgemm_handle_t *handle, size_t max_bytes);

// Reads the recycling bound (`spgemm_set_output_cache`) into `*max_bytes` and the bytes
// kept now into `*held_bytes`; either pointer may be NULL.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle).
//
// # Safety
// `handle` is NULL or live; each output pointer is NULL or writable.
spgemm_status_t spgemm_get_output_cache(spgemm_handle_t *handle,
                                        size_t *max_bytes,
                                        size_t *held_bytes);

// Bounds the extra memory each later call on the handle may allocate, in bytes (0, the
// default: no bound). Before allocating, the symbolic phase, the numeric phase, the one-call
// products (C's arrays included), and `spgemm_spmm_analysis_create` estimate an upper bound
// of their peak host memory (workspace per thread times threads, C's row offsets, flop
// counts, compressed B, transposes, C's arrays the library allocates) and return
// `SPGEMM_STATUS_ALLOC_FAILED` when it exceeds the bound, with the estimate, its parts and
// the bound in `spgemm_last_error`; nothing is allocated then and the handle stays usable.
// The caller's arrays and matrices, GPU memory, and the handle's worker threads (started
// by the first call that splits its work, kept until the handle's thread count or binding
// changes) are not counted.
// Errors: `SPGEMM_STATUS_NULL_POINTER`. Calls on one handle are serialised.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_memory_limit(spgemm_handle_t *handle, size_t max_bytes);

// Reads the memory bound (`spgemm_set_memory_limit`; 0 = none) into `*max_bytes`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `max_bytes` is NULL or writable.
spgemm_status_t spgemm_get_memory_limit(spgemm_handle_t *handle, size_t *max_bytes);

// The message of the most recent call on `handle` if that call failed (it names the
// offending argument and index), or, when `handle` is NULL, of the calling thread's most
// recent call of any function that returns a status. Empty when that call succeeded.
// Never NULL. The text stays valid until the next call on the same handle (or by the same
// thread, for NULL); copy it if you need it longer.
//
// # Safety
// `handle` is NULL or a live handle.
const char *spgemm_last_error(const spgemm_handle_t *handle);

// Turns hybrid CPU+GPU products on (non-zero) or off (0, the default) for later symbolic
// calls. With a usable GPU (backend `SPGEMM_BACKEND_AUTO` or `SPGEMM_BACKEND_CUDA`), a
// hybrid plan computes the first rows of C on the CPU and the rest on the GPU at the same
// time: the split balances predicted times by flops, from CPU and GPU rates measured by
// earlier numeric calls on this handle (before any, the CPU takes 25% of the flops), or
// for band matrices A and B by the band rule. Without a usable GPU, or with
// `SPGEMM_BACKEND_CPU`, every row runs on the CPU and the plan says so
// (`spgemm_plan_info`, `spgemm_plan_get_split`). Hybrid plans take host arrays only.
// Errors: `SPGEMM_STATUS_NULL_POINTER`. Calls on one handle are serialised.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_hybrid(spgemm_handle_t *handle, int32_t enabled);

// Reads the hybrid option (1 or 0) into `*enabled`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `enabled` is NULL or writable.
spgemm_status_t spgemm_get_hybrid(spgemm_handle_t *handle, int32_t *enabled);

// Makes later numeric calls on the GPU give the same bits on every run (non-zero), or
// lets them sum each entry in the order threads arrive (0, the default, faster). With it
// on, each row of C is summed by one GPU thread in A's then B's order (as the CPU
// backend sums) and rows come out sorted. The CPU backend's results never depend on
// thread timing, so the option changes nothing there. Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_reproducible(spgemm_handle_t *handle, int32_t enabled);

// Reads the reproducible option (1 or 0) into `*enabled`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `enabled` is NULL or writable.
spgemm_status_t spgemm_get_reproducible(spgemm_handle_t *handle, int32_t *enabled);

// Sets the directory where compiled GPU kernels are kept across processes (process-wide;
// overrides the environment variable `SPGEMM_KERNEL_CACHE`). `dir` NULL or "" turns the
// disk cache off. Without either, the cache is `$XDG_CACHE_HOME/libspgemm`, else
// `$HOME/.cache/libspgemm`. An entry is keyed by the library and NVRTC versions, the
// kernel source, its value type and the device architecture; a corrupt or foreign entry
// is compiled again and rewritten. A directory that cannot be written only costs the
// compilation. Applies to kernels compiled afterwards (each handle compiles once).
// Errors: `SPGEMM_STATUS_INVALID_VALUE` (not UTF-8).
//
// # Safety
// `dir` is NULL or a NUL-terminated string.
spgemm_status_t spgemm_set_kernel_cache_dir(const char *dir);

// Creates a CSR descriptor over caller arrays; nothing is copied, and the arrays must stay
// valid (and unchanged in structure) while the descriptor is used.
//
// - `nrows`, `ncols` >= 0 (either may be 0).
// - `row_offsets`: `nrows + 1` entries of `offset_type` (`SPGEMM_INDEX_INT32`, `_INT64` or
//   `_SIZE_T`), starting at `base`; row i holds positions `row_offsets[i] - base` to
//   `row_offsets[i+1] - base - 1`.
// - `col_indices`: nnz = `row_offsets[nrows] - base` entries of `index_type`
//   (`SPGEMM_INDEX_INT32` or `_INT64`), each in [base, base + ncols). Rows may be unsorted
//   and may repeat a column (repeats are summed). May be NULL only when nnz = 0.
// - `values`: nnz entries of `value_type` (`SPGEMM_VALUE_FLOAT32`, `_FLOAT64`,
//   `_COMPLEX_FLOAT` or `_COMPLEX_DOUBLE`: C99 `float _Complex` / `double _Complex`, aligned
//   as their real parts), or NULL for a pattern-only matrix (structure-only products).
// - `base`: `SPGEMM_INDEX_BASE_ZERO` or `SPGEMM_INDEX_BASE_ONE` (Fortran).
//
// Contents are checked when the matrix is used (see `spgemm_set_validation`); callers who
// know the length of their arrays should prefer `spgemm_matrix_create_csr_nnz`, which
// checks the last row offset against it. On success `*matrix` owns the descriptor;
// release it with `spgemm_matrix_destroy`.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix, or row_offsets), `SPGEMM_STATUS_INVALID_VALUE`
// (negative size, unknown type or base code, misaligned array), `SPGEMM_STATUS_INDEX_OVERFLOW`.
// Thread-safe.
//
// # Safety
// `matrix` is NULL or writable; the arrays are valid as described above.
spgemm_status_t spgemm_matrix_create_csr(spgemm_matrix_t **matrix,
                                         int64_t nrows,
                                         int64_t ncols,
                                         spgemm_index_type_t offset_type,
                                         const void *row_offsets,
                                         spgemm_index_type_t index_type,
                                         const void *col_indices,
                                         spgemm_value_type_t value_type,
                                         const void *values,
                                         spgemm_index_base_t base);

// Creates a CSR descriptor over caller arrays whose length the caller knows, as
// cuSPARSE's `cusparseCreateCsr` takes it: arguments as `spgemm_matrix_create_csr` plus
// `nnz`, the number of entries of `col_indices` and `values`. The last row offset is read
// here: `row_offsets[nrows] - base` must equal `nnz`, else `SPGEMM_STATUS_INVALID_VALUE`
// (offsets claiming more entries than the arrays hold are caught before any call reads
// past them). Every later use checks it again (the caller may have changed the offsets).
// Errors: those of `spgemm_matrix_create_csr`; `SPGEMM_STATUS_INVALID_VALUE` (nnz
// negative or not `row_offsets[nrows] - base`), `SPGEMM_STATUS_NULL_POINTER`
// (`col_indices` NULL while nnz > 0). Thread-safe.
//
// # Safety
// `matrix` is NULL or writable; `row_offsets` holds `nrows + 1` readable entries,
// `col_indices` and `values` (NULL: pattern-only) `nnz` each.
spgemm_status_t spgemm_matrix_create_csr_nnz(spgemm_matrix_t **matrix,
                                             int64_t nrows,
                                             int64_t ncols,
                                             int64_t nnz,
                                             spgemm_index_type_t offset_type,
                                             const void *row_offsets,
                                             spgemm_index_type_t index_type,
                                             const void *col_indices,
                                             spgemm_value_type_t value_type,
                                             const void *values,
                                             spgemm_index_base_t base);

// Creates a CSR descriptor over arrays in GPU memory (device 0, allocated in its primary
// context, as `cudaMalloc` of the CUDA runtime does), so codes whose matrices already
// live on the GPU avoid copying them to the host and back. Nothing is copied or read
// here; the arrays must stay valid while the descriptor is used, and any work writing
// them must be complete (e.g. `cudaStreamSynchronize`) before a call uses them.
//
// Arguments are those of `spgemm_matrix_create_csr` plus `nnz`, the number of entries
// (`row_offsets[nrows] - base`), which the library cannot read from device memory; the
// GPU checks it against the offsets. `row_offsets` holds `nrows + 1` entries;
// `col_indices` and `values` hold `nnz` each (NULL allowed when nnz = 0; `values` NULL
// means pattern-only).
//
// Use: as A and B of `spgemm_symbolic` (both must be device matrices), then of
// `spgemm_numeric`, `spgemm_numeric_structure` (C to host arrays) or
// `spgemm_numeric_device` (C to device arrays). The symbolic call runs on the GPU
// whatever the backend option says, except `SPGEMM_BACKEND_CPU`, which gives
// `SPGEMM_STATUS_NOT_SUPPORTED`; without a usable GPU it gives
// `SPGEMM_STATUS_NO_DEVICE`. Every other function that reads a matrix's entries
// (`spgemm_multiply`, `spgemm_spmm`, `spgemm_spmm_analysis_create`) gives
// `SPGEMM_STATUS_NOT_SUPPORTED` for a device matrix. `spgemm_matrix_get_info` reports
// the given sizes and types, `spgemm_matrix_export_csr` the device pointers.
// On the GPU the structure is checked on the device (validation of offsets and column
// indices, whatever `spgemm_set_validation` says) before any kernel uses it; sizes of
// 2^31 - 1 or more (rows, columns, nnz) give `SPGEMM_STATUS_NOT_SUPPORTED` there.
// Complex value types may be described, but the GPU has no complex kernels: products with
// such matrices give `SPGEMM_STATUS_NOT_SUPPORTED` (before any device is looked for).
//
// On success `*matrix` owns the descriptor; release it with `spgemm_matrix_destroy`
// (the device arrays are untouched).
// Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix; row_offsets when nrows + 1 entries are
// needed; col_indices when nnz > 0), `SPGEMM_STATUS_INVALID_VALUE` (negative size, unknown
// type or base code, misaligned array), `SPGEMM_STATUS_INDEX_OVERFLOW`. Thread-safe.
//
// # Safety
// `matrix` is NULL or writable; the device arrays are valid as described above (they
// are never dereferenced on the host).
spgemm_status_t spgemm_matrix_create_csr_device(spgemm_matrix_t **matrix,
                                                int64_t nrows,
                                                int64_t ncols,
                                                int64_t nnz,
                                                spgemm_index_type_t offset_type,
                                                const void *row_offsets,
                                                spgemm_index_type_t index_type,
                                                const void *col_indices,
                                                spgemm_value_type_t value_type,
                                                const void *values,
                                                spgemm_index_base_t base);

// Reads where a matrix's arrays live (`SPGEMM_MEMORY_HOST` or `SPGEMM_MEMORY_DEVICE`)
// into `*memory`. Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix, memory). Thread-safe.
//
// # Safety
// `matrix` is NULL or live; `memory` is NULL or writable.
spgemm_status_t spgemm_matrix_get_memory(const spgemm_matrix_t *matrix, spgemm_memory_t *memory);

// Destroys a matrix. For a descriptor the caller's arrays are untouched; for a result of
// `spgemm_multiply` its arrays are freed. `spgemm_matrix_destroy(NULL)` does nothing.
//
// # Safety
// `matrix` is NULL or a live matrix not in use by another call.
spgemm_status_t spgemm_matrix_destroy(spgemm_matrix_t *matrix);

// Reads a matrix's shape and types into the non-NULL pointers among the outputs. `nnz` is
// `row_offsets[nrows] - base`. Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix),
// `SPGEMM_STATUS_INVALID_STRUCTURE` (last row offset below the base). Thread-safe.
//
// # Safety
// `matrix` is NULL or live; each output pointer is NULL or writable.
spgemm_status_t spgemm_matrix_get_info(const spgemm_matrix_t *matrix,
                                       int64_t *nrows,
                                       int64_t *ncols,
                                       int64_t *nnz,
                                       spgemm_index_type_t *offset_type,
                                       spgemm_index_type_t *index_type,
                                       spgemm_value_type_t *value_type,
                                       spgemm_index_base_t *base);

// Gives read access to a matrix's arrays (types and sizes from `spgemm_matrix_get_info`):
// for a result of `spgemm_multiply` the library's arrays, valid until the matrix is
// destroyed; for a descriptor the caller's own pointers (device pointers for a device
// descriptor). `*values` is NULL for a
// pattern-only matrix. Any output pointer may be NULL.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix). Thread-safe.
//
// # Safety
// `matrix` is NULL or live; each output pointer is NULL or writable.
spgemm_status_t spgemm_matrix_export_csr(const spgemm_matrix_t *matrix,
                                         const void **row_offsets,
                                         const void **col_indices,
                                         const void **values);

// Symbolic phase of C = A*B: computes the structure size of C and the work partition.
//
// A is m x n, B is n x k (both may be empty); A and B must use the same offset, index and
// value types (their index bases may differ). C's storage is chosen here: `c_offset_type`
// (`SPGEMM_INDEX_INT32`, `_INT64` or `_SIZE_T`), `c_index_type` (`_INT32` or `_INT64`) and
// `c_base` (0 or 1). If `c_row_offsets` is not NULL, C's m + 1 row offsets are written to
// it (they can also be fetched later with `spgemm_plan_row_offsets`).
//
// On success `*plan` owns a plan (release with `spgemm_plan_destroy`); query nnz(C) with
// `spgemm_plan_get_nnz`, then allocate C's column indices and values and call
// `spgemm_numeric`. The plan records the algorithm, sortedness and C format in force.
//
// A and B may both be device matrices (`spgemm_matrix_create_csr_device`): the plan is
// then made on the GPU (`SPGEMM_STATUS_NO_DEVICE` without a usable one,
// `SPGEMM_STATUS_NOT_SUPPORTED` with `SPGEMM_BACKEND_CPU`, with one host and one device
// matrix, or with sizes beyond the GPU's 32-bit indices); `c_row_offsets` stays a host
// array. With `spgemm_set_hybrid` on and a usable GPU, host inputs give a hybrid plan.
//
// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (type codes, base),
// `SPGEMM_STATUS_DIMENSION_MISMATCH`, `SPGEMM_STATUS_TYPE_MISMATCH` (A and B types differ),
// `SPGEMM_STATUS_INVALID_STRUCTURE`, `SPGEMM_STATUS_INDEX_OUT_OF_RANGE` (bad input, found
// by validation), `SPGEMM_STATUS_INDEX_OVERFLOW` (nnz(C) or k does not fit C's types;
// nothing is written then), `SPGEMM_STATUS_ALLOC_FAILED` (also when the estimate exceeds
// `spgemm_set_memory_limit`; nothing is written then).
// Calls on one handle are serialised; different handles run concurrently.
//
// # Safety
// `handle`, `a`, `b` are NULL or live; `c_row_offsets` is NULL or has m + 1 writable
// entries of `c_offset_type`; `plan` is NULL or writable.
spgemm_status_t spgemm_symbolic(spgemm_handle_t *handle,
                                const spgemm_matrix_t *a,
                                const spgemm_matrix_t *b,
                                spgemm_index_type_t c_offset_type,
                                spgemm_index_type_t c_index_type,
                                spgemm_index_base_t c_base,
                                void *c_row_offsets,
                                spgemm_plan_t **plan);

// Symbolic phase of C = op_a(A) * op_b(B), each op `SPGEMM_OPERATION_NON_TRANSPOSE` (A),
// `SPGEMM_OPERATION_TRANSPOSE` (A^T) or `SPGEMM_OPERATION_CONJUGATE_TRANSPOSE` (A^H, the
// same as A^T for real values), as MKL's `mkl_sparse_sp2m` takes them. Everything else is
// as for `spgemm_symbolic`: op(A) is m x n, op(B) is n x k, C is m x k with the storage
// chosen here, `*plan` reusable by `spgemm_numeric` and `spgemm_numeric_structure` with
// new values of A and B (the same A and B as here, not their transposes).
//
// The plan keeps, for each transposed operand, its transposed structure in the operand's
// own offset and index types with the position of each entry in the operand (about
// nnz * (8 + index size) bytes); each numeric call first gathers the operand's current
// values into a buffer the plan keeps (nnz values, conjugated for A^H), then multiplies
// as for any plan: the cost of new values is one O(nnz) gather per transposed operand.
// Validation, the structure checks of reused plans and the error messages concern A and B
// as given. Results are bitwise identical for every thread count and algorithm: row j of
// A^T lists its entries in increasing row of A (repeats in storage order).
//
// Transposed operands are computed on the CPU: `SPGEMM_BACKEND_AUTO` (and hybrid
// products) take the CPU for them; `SPGEMM_BACKEND_CUDA` gives
// `SPGEMM_STATUS_NOT_SUPPORTED` whether or not a GPU is present, as do device matrices
// (`spgemm_matrix_create_csr_device`) with a transposed operand.
//
// Errors: those of `spgemm_symbolic`; `SPGEMM_STATUS_INVALID_VALUE` (op_a or op_b not an
// `SPGEMM_OPERATION_*` code), `SPGEMM_STATUS_DIMENSION_MISMATCH` (op(A)'s columns differ
// from op(B)'s rows), `SPGEMM_STATUS_INDEX_OVERFLOW` (a transposed operand's rows do not
// fit its column index type), `SPGEMM_STATUS_NOT_SUPPORTED` (see above).
// Calls on one handle are serialised; different handles run concurrently.
//
// # Safety
// As for `spgemm_symbolic`.
spgemm_status_t spgemm_symbolic_op(spgemm_handle_t *handle,
                                   spgemm_operation_t op_a,
                                   const spgemm_matrix_t *a,
                                   spgemm_operation_t op_b,
                                   const spgemm_matrix_t *b,
                                   spgemm_index_type_t c_offset_type,
                                   spgemm_index_type_t c_index_type,
                                   spgemm_index_base_t c_base,
                                   void *c_row_offsets,
                                   spgemm_plan_t **plan);

// Writes C's m + 1 row offsets, in the type and base chosen at symbolic time.
// Errors: `SPGEMM_STATUS_NULL_POINTER`. Thread-safe.
//
// # Safety
// `plan` is NULL or live; `c_row_offsets` is NULL or has m + 1 writable entries.
spgemm_status_t spgemm_plan_row_offsets(const spgemm_plan_t *plan, void *c_row_offsets);

// Reads nnz(C) (entries that cancel to zero are kept) into `*nnz`.
// Errors: `SPGEMM_STATUS_NULL_POINTER`. Thread-safe.
//
// # Safety
// `plan` is NULL or live; `nnz` is NULL or writable.
spgemm_status_t spgemm_plan_get_nnz(const spgemm_plan_t *plan, int64_t *nnz);

// Reads C's shape (m x k) and the number of scalar multiplications of the product
// (f_m; GFLOP/s = 2 f_m / seconds / 1e9) into the non-NULL outputs.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (plan). Thread-safe.
//
// # Safety
// `plan` is NULL or live; outputs are NULL or writable.
spgemm_status_t spgemm_plan_get_info(const spgemm_plan_t *plan,
                                     int64_t *nrows,
                                     int64_t *ncols,
                                     int64_t *multiplications);

// Reads the algorithm (`SPGEMM_ALG_*`, never AUTO) each phase runs with.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (plan). Thread-safe.
//
// # Safety
// `plan` is NULL or live; outputs are NULL or writable.
spgemm_status_t spgemm_plan_get_algorithm(const spgemm_plan_t *plan,
                                          spgemm_algorithm_t *symbolic,
                                          spgemm_algorithm_t *numeric);

// Destroys a plan. `spgemm_plan_destroy(NULL)` does nothing.
//
// # Safety
// `plan` is NULL or a live plan not in use by another call.
spgemm_status_t spgemm_plan_destroy(spgemm_plan_t *plan);

// Numeric phase: fills C's nnz(C) column indices (type and base of the plan) and values
// (the value type of A and B). Call it again whenever the values of A and/or B change
// with the same structure: no symbolic work is repeated. Passing the same C arrays again
// is fastest: with validation on, from the third call on a plan keeps a digest of C's
// column indices (8 bytes per block of rows, not a copy of them) and, when
// `c_col_indices` is the array the previous call on the plan filled and its indices
// still match the digest, only recomputes the values. Any other array is not read: it is
// filled in full.
//
// A and B may be device matrices when the plan was made on the GPU: C is written to
// these host arrays (`SPGEMM_STATUS_NO_DEVICE` without a usable GPU; see
// `spgemm_numeric_device` for C in device memory).
//
// Values are bitwise identical whatever the number of threads and algorithm: each entry
// of C is the sum of its products in the order A's row and B's rows are stored. Entries
// that cancel to 0.0 stay in the structure; NaN and Inf propagate.
//
// Errors: `SPGEMM_STATUS_NULL_POINTER` (including arrays NULL while nnz(C) > 0),
// `SPGEMM_STATUS_INVALID_VALUE` (A or B without values), `SPGEMM_STATUS_TYPE_MISMATCH`
// (types differ from the plan's), `SPGEMM_STATUS_PLAN_MISMATCH` (shape differs, or, with
// validation on, structure differs), `SPGEMM_STATUS_ALLOC_FAILED` (also when the estimate
// exceeds `spgemm_set_memory_limit`; nothing is written then). `spgemm_numeric_sized`
// takes the types and lengths of C's arrays and checks them first.
// Calls on one handle are serialised; a plan must not be used by two calls at once (they
// are serialised too).
//
// # Safety
// Pointers are NULL or live; `c_col_indices` and `c_values` have nnz(C) writable entries.
spgemm_status_t spgemm_numeric(spgemm_handle_t *handle,
                               spgemm_plan_t *plan,
                               const spgemm_matrix_t *a,
                               const spgemm_matrix_t *b,
                               void *c_col_indices,
                               void *c_values);

// Structure-only numeric phase (graph codes): fills C's column indices; values of A and B
// are not read and may be absent (pattern-only descriptors).
// Errors: as `spgemm_numeric`, without the value checks.
//
// # Safety
// Pointers are NULL or live; `c_col_indices` has nnz(C) writable entries.
spgemm_status_t spgemm_numeric_structure(spgemm_handle_t *handle,
                                         spgemm_plan_t *plan,
                                         const spgemm_matrix_t *a,
                                         const spgemm_matrix_t *b,
                                         void *c_col_indices);

// Numeric phase for callers that know their arrays' types and lengths (the C++ and
// Fortran layers use it): as `spgemm_numeric`, and, first, every array given is checked
// against the plan before anything is written: its type code (`c_offset_type`,
// `c_index_type`, `c_value_type`; else `SPGEMM_STATUS_TYPE_MISMATCH`) and its length in
// entries (`c_row_offsets_len` at least m + 1, `c_col_capacity` and `c_values_capacity`
// at least nnz(C); else `SPGEMM_STATUS_INVALID_VALUE`, negative lengths too). Longer
// arrays are fine: only their first entries are written.
//
// - `c_row_offsets`: NULL, or C's m + 1 row offsets are written there (as
//   `spgemm_plan_row_offsets` does) after the numeric phase succeeded.
// - `c_col_indices`: C's nnz(C) column indices (NULL only when nnz(C) = 0).
// - `c_values`: C's values, or NULL for the structure-only numeric phase
//   (`spgemm_numeric_structure`: A and B may then be pattern-only).
//
// Errors: those of `spgemm_numeric` and above. Calls on one handle are serialised.
//
// # Safety
// Pointers are NULL or live; each C array has at least the given number of writable
// entries of the given type.
spgemm_status_t spgemm_numeric_sized(spgemm_handle_t *handle,
                                     spgemm_plan_t *plan,
                                     const spgemm_matrix_t *a,
                                     const spgemm_matrix_t *b,
                                     spgemm_index_type_t c_offset_type,
                                     void *c_row_offsets,
                                     int64_t c_row_offsets_len,
                                     spgemm_index_type_t c_index_type,
                                     void *c_col_indices,
                                     int64_t c_col_capacity,
                                     spgemm_value_type_t c_value_type,
                                     void *c_values,
                                     int64_t c_values_capacity);

// One-call product C = A*B for callers that multiply once: symbolic and numeric phases
// into arrays owned by the library. `*c` receives a new matrix (read it with
// `spgemm_matrix_get_info` and `spgemm_matrix_export_csr`; free it with
// `spgemm_matrix_destroy`). If A or B has no values, C is pattern-only.
// Errors: those of `spgemm_symbolic` and `spgemm_numeric`.
//
// # Safety
// `handle`, `a`, `b` are NULL or live; `c` is NULL or writable.
spgemm_status_t spgemm_multiply(spgemm_handle_t *handle,
                                const spgemm_matrix_t *a,
                                const spgemm_matrix_t *b,
                                spgemm_index_type_t c_offset_type,
                                spgemm_index_type_t c_index_type,
                                spgemm_index_base_t c_base,
                                spgemm_matrix_t **c);

// One-call product C = op_a(A) * op_b(B) (ops as in `spgemm_symbolic_op`) into arrays
// owned by the library, as `spgemm_multiply` (MKL's `mkl_sparse_spmm` and
// `mkl_sparse_sp2m` with `SPARSE_STAGE_FULL_MULT` take ops the same way). The transposes
// are made for this product and freed with its plan before the call returns.
// Errors: those of `spgemm_symbolic_op` and `spgemm_numeric`.
// Calls on one handle are serialised; different handles run concurrently.
//
// # Safety
// `handle`, `a`, `b` are NULL or live; `c` is NULL or writable.
spgemm_status_t spgemm_multiply_op(spgemm_handle_t *handle,
                                   spgemm_operation_t op_a,
                                   const spgemm_matrix_t *a,
                                   spgemm_operation_t op_b,
                                   const spgemm_matrix_t *b,
                                   spgemm_index_type_t c_offset_type,
                                   spgemm_index_type_t c_index_type,
                                   spgemm_index_base_t c_base,
                                   spgemm_matrix_t **c);

// Numeric phase with C in device memory: fills C's m + 1 row offsets (when
// `c_row_offsets` is not NULL), nnz(C) column indices and, when `c_values` is not NULL,
// nnz(C) values, all in GPU memory (device 0, primary context: `cudaMalloc` of the CUDA
// runtime), in the plan's types and base. A and B are device matrices
// (`spgemm_matrix_create_csr_device`) or host matrices. The plan must have been made on
// the GPU (`spgemm_symbolic` with device matrices, or with `SPGEMM_BACKEND_CUDA`); C's
// arrays are written by the GPU only, never on the host, and are complete when the call
// returns. Call it again with new values as `spgemm_numeric`.
//
// Errors: `SPGEMM_STATUS_NO_DEVICE` (no usable GPU: checked before anything else
// after the arguments; nothing is written), `SPGEMM_STATUS_NOT_SUPPORTED` (the handle's
// backend is `SPGEMM_BACKEND_CPU`, the plan was made on the CPU, or A and B are one host
// and one device matrix), `SPGEMM_STATUS_NULL_POINTER` (handle, plan, A, B;
// `c_col_indices` when nnz(C) > 0), `SPGEMM_STATUS_INVALID_VALUE` (misaligned array, A
// or B without values while `c_values` is given), `SPGEMM_STATUS_TYPE_MISMATCH`,
// `SPGEMM_STATUS_PLAN_MISMATCH` (shape, or with host inputs and validation, structure,
// differs from the plan's), `SPGEMM_STATUS_ALLOC_FAILED` (device memory).
// Calls on one handle are serialised.
//
// # Safety
// `handle`, `plan`, `a`, `b` are NULL or live; the C arrays are NULL or device arrays
// with the entries described above (never dereferenced on the host).
spgemm_status_t spgemm_numeric_device(spgemm_handle_t *handle,
                                      spgemm_plan_t *plan,
                                      const spgemm_matrix_t *a,
                                      const spgemm_matrix_t *b,
                                      void *c_row_offsets,
                                      void *c_col_indices,
                                      void *c_values);

// Reads how many rows of C the plan computes on the CPU (`*cpu_rows`, rows 0 to
// cpu_rows - 1) and on the GPU (`*gpu_rows`, the rest) into the non-NULL outputs. A CPU
// plan has all rows on the CPU, a GPU plan all on the GPU, a hybrid plan its split.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (plan). Thread-safe.
//
// # Safety
// `plan` is NULL or live; outputs are NULL or writable.
spgemm_status_t spgemm_plan_get_split(const spgemm_plan_t *plan,
                                      int64_t *cpu_rows,
                                      int64_t *gpu_rows);

// Writes a text description of the plan: one `key: value` line each for where it runs
// (`backend: cpu`, `gpu` or `hybrid`), rows, nnz and multiplications, and when hybrid
// execution was asked for a `hybrid:` line with the split and how it was chosen, or
// `hybrid: all N rows on the CPU: no GPU (reason)`.
//
// Two-call pattern as `spgemm_topology_info`: `*needed` (required) receives the size in
// bytes including the terminating NUL; with `buf` NULL and `len` 0 only `*needed` is
// written; if `len >= *needed` the text is copied (NUL-terminated); if
// `0 < len < *needed`, `buf[0]` is set to NUL and `SPGEMM_STATUS_INVALID_VALUE` returned.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (plan, needed, or buf NULL with len > 0),
// `SPGEMM_STATUS_INVALID_VALUE` (buffer too small). Thread-safe.
//
// # Safety
// `plan` is NULL or live; `buf` is NULL or points to `len` writable bytes; `needed` is
// NULL or writable.
spgemm_status_t spgemm_plan_info(const spgemm_plan_t *plan, void *buf, size_t len, size_t *needed);

// Y = alpha * op(A) * X + beta * Y (SpMM; SpMV when k = 1).
//
// - `a`: the CSR matrix A (any offset/index/value type and base), m x n, with values.
//   op(A) is A (`SPGEMM_OPERATION_NON_TRANSPOSE`, X is n x k, Y is m x k), A^T
//   (`SPGEMM_OPERATION_TRANSPOSE`, X is m x k, Y is n x k) or A^H
//   (`SPGEMM_OPERATION_CONJUGATE_TRANSPOSE`, shaped as A^T; A^T for real A).
// - `x`, `y`: the dense arrays X and Y, of A's value type (`float`, `double`,
//   `float _Complex` or `double _Complex`), both in `layout`
//   (`SPGEMM_LAYOUT_ROW_MAJOR`: entry (i, j) at `i * ld + j`, `ld >= k`;
//   `SPGEMM_LAYOUT_COL_MAJOR`: entry (i, j) at `j * ld + i`, `ld >= max(1, rows)`), with
//   leading dimensions `ldx`, `ldy`. They must not overlap. Entries between rows (or
//   columns) beyond the leading dimension's used part are neither read nor written.
// - `alpha`, `beta`: scalars (converted to `float` for float matrices; for complex ones
//   they are the real parts, see `spgemm_spmm_scaled` for complex scalars); any value,
//   NaN included. BLAS conventions: `beta == 0` means Y is not read (NaN or garbage in Y
//   is overwritten); `alpha == 0` means A and X are not read (X may then be NULL).
// - `k >= 0` columns (k = 0 does nothing; k = 1 is SpMV).
// - `analysis`: NULL, or an analysis of A from `spgemm_spmm_analysis_create`; used when
//   its op has `op`'s structure (A; or A^T and A^H, which share one): its row partition,
//   for a transpose its transposed structure, and for an SpMV of A (k = 1, analysed with
//   a k hint of 0 or 1) A's row groups (runs of rows with one column list, read once for
//   the run; same results bit for bit). A's values may change between calls; its
//   structure must be the one analysed.
//
// Determinism: each entry of Y is computed by one thread as `alpha * s + beta * y`, where
// `s` sums its row of op(A) in an order fixed by the row alone (storage order; for k = 1,
// and for row-major blocks of one vector on AVX-512, a fixed interleaving of partial
// sums), so results are bitwise identical whatever the thread count and with or without
// an analysis (they may differ between machines: FMA and vector kernels are used where the
// CPU has them).
//
// Memory: column-major products whose reads of X are scattered (random sparsity) pack 8
// or 16 columns of X at a time into a buffer kept by the handle (16 values per row of X,
// allocated on first use, reused, freed with the handle); if it cannot be allocated the
// product runs without it.
//
// Backend (`spgemm_set_backend`): `SPGEMM_BACKEND_CUDA` computes op(A) = A for real values
// on the GPU (A, X and Y are copied to the device and Y back; the analysis is not used
// there; a transposed op or complex values give `SPGEMM_STATUS_NOT_SUPPORTED`, whether or
// not a GPU is present); `SPGEMM_BACKEND_AUTO` uses the GPU when one is usable, the values
// are real, op(A) = A and A has at least 2^20 entries, else the CPU (always the CPU
// without a GPU); `SPGEMM_BACKEND_CPU` the CPU. GPU sums may differ
// in the last bits from the CPU's (other order). A device matrix
// (`spgemm_matrix_create_csr_device`) gives `SPGEMM_STATUS_NOT_SUPPORTED`.
//
// Validation (see `spgemm_set_validation`): when on, A is checked fully on each call
// without an analysis, and compared with the analysed structure (digest) with one; when
// off, the kernels check each block of A (row offsets, column indices) just before
// reading it, and a bad structure gives `SPGEMM_STATUS_INTERNAL` with a message naming
// the row or position (Y may then be partly written), never an access outside A, X or Y.
//
// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle, A, X when alpha != 0 and X has entries,
// Y when it has entries), `SPGEMM_STATUS_INVALID_VALUE` (op or layout code, negative k or
// leading dimension, `ldx`/`ldy` smaller than the row length (row-major) or the number of
// rows (column-major), X and Y overlapping, A without values, misaligned X or Y),
// `SPGEMM_STATUS_INDEX_OVERFLOW` (X or Y spans more than the address space),
// `SPGEMM_STATUS_PLAN_MISMATCH` (analysis made for another matrix),
// `SPGEMM_STATUS_INVALID_STRUCTURE`, `SPGEMM_STATUS_INDEX_OUT_OF_RANGE` (bad A),
// `SPGEMM_STATUS_ALLOC_FAILED` (A^T without an analysis needs a temporary transpose),
// `SPGEMM_STATUS_NOT_SUPPORTED` (see Backend), `SPGEMM_STATUS_NO_DEVICE` (backend CUDA
// without a usable GPU). Y is unchanged when an error is reported before the product starts (all of the above).
// Calls on one handle are serialised; different handles run concurrently.
//
// # Safety
// Pointers are NULL or valid for the extents described above; `analysis` is NULL or live.
spgemm_status_t spgemm_spmm(spgemm_handle_t *handle,
                            spgemm_operation_t op,
                            double alpha,
                            const spgemm_matrix_t *a,
                            const spgemm_spmm_analysis_t *analysis,
                            spgemm_layout_t layout,
                            int64_t k,
                            const void *x,
                            int64_t ldx,
                            double beta,
                            void *y,
                            int64_t ldy);

// Y = alpha * op(A) * X + beta * Y as `spgemm_spmm`, with `alpha` and `beta` pointing to
// one value each of A's value type (`float`, `double`, `float _Complex` or
// `double _Complex`), as MKL's `mkl_sparse_?_mm` takes them; for complex A, op may be
// `SPGEMM_OPERATION_CONJUGATE_TRANSPOSE` (A^H; for real A it is A^T). Every convention of
// `spgemm_spmm` holds: `*beta == 0` (both parts) means Y is not read, `*alpha == 0` means
// A and X are not read; results are bitwise identical whatever the thread count (complex
// values use one row kernel: each entry of Y sums its row of op(A) in storage order, from
// zero, with the textbook complex product, no fused operations). The analysis of an op
// serves the other transposed op too (A^T and A^H share A^T's structure).
//
// Backend: complex values and transposed ops are computed on the CPU;
// `SPGEMM_BACKEND_CUDA` gives `SPGEMM_STATUS_NOT_SUPPORTED` for them whether or not a GPU is
// present, `SPGEMM_BACKEND_AUTO` takes the CPU.
//
// Errors: those of `spgemm_spmm`, and `SPGEMM_STATUS_NULL_POINTER` (alpha or beta NULL).
// Calls on one handle are serialised; different handles run concurrently.
//
// # Safety
// As for `spgemm_spmm`; `alpha` and `beta` are NULL or point to a readable value of A's
// value type.
spgemm_status_t spgemm_spmm_scaled(spgemm_handle_t *handle,
                                   spgemm_operation_t op,
                                   const void *alpha,
                                   const spgemm_matrix_t *a,
                                   const spgemm_spmm_analysis_t *analysis,
                                   spgemm_layout_t layout,
                                   int64_t k,
                                   const void *x,
                                   int64_t ldx,
                                   const void *beta,
                                   void *y,
                                   int64_t ldy);

// Analyses A for repeated `spgemm_spmm` calls with `op` (as MKL's `mkl_sparse_set_mm_hint`
// and `mkl_sparse_optimize` do): validates A fully once, stores a row partition balanced by
// nonzeros for the handle's thread count and a digest of A's structure, and for
// `SPGEMM_OPERATION_TRANSPOSE` or `_CONJUGATE_TRANSPOSE` the structure of A^T (about 16
// bytes per entry; it serves both transposed ops), so the transposed product needs no
// temporary. `layout` and `k_hint` (expected number of
// columns, 0 = unknown) describe the expected use. Optional: `spgemm_spmm` works without.
//
// On success `*analysis` owns the object; release it with `spgemm_spmm_analysis_destroy`.
// It stays valid while A's structure is unchanged (values may change), and may be used
// with any handle and from several threads at once.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle, A, analysis), `SPGEMM_STATUS_INVALID_VALUE`
// (op or layout code, negative k_hint), `SPGEMM_STATUS_INVALID_STRUCTURE`,
// `SPGEMM_STATUS_INDEX_OUT_OF_RANGE`, `SPGEMM_STATUS_ALLOC_FAILED` (also when the estimate
// exceeds `spgemm_set_memory_limit`).
// Calls on one handle are serialised.
//
// # Safety
// `handle` and `A` are NULL or live; `analysis` is NULL or writable.
spgemm_status_t spgemm_spmm_analysis_create(spgemm_handle_t *handle,
                                            spgemm_operation_t op,
                                            const spgemm_matrix_t *a,
                                            spgemm_layout_t layout,
                                            int64_t k_hint,
                                            spgemm_spmm_analysis_t **analysis);

// Destroys an analysis. `spgemm_spmm_analysis_destroy(NULL)` does nothing. Must not run
// concurrently with a call using the analysis.
//
// # Safety
// `analysis` is NULL or a live analysis.
spgemm_status_t spgemm_spmm_analysis_destroy(spgemm_spmm_analysis_t *analysis);

// Chooses how the handle's worker threads are bound to cores (`SPGEMM_BIND_*`; default
// `SPGEMM_BIND_AUTO`). When their cores change the running workers end and the new ones
// start with the next call that splits its work; the per-thread workspace is then rebuilt
// on first use. The environment variable `SPGEMM_PROC_BIND`
// (spread, close, none, auto), when set to a valid value, overrides this option, so a
// program's choice can be changed at run time as with `OMP_PROC_BIND`.
// A binding the OS refuses is not an error: the worker runs unbound and
// `spgemm_topology_info` reports why.
// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (unknown code).
// Calls on one handle are serialised.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_thread_binding(spgemm_handle_t *handle, spgemm_bind_t binding);

// Reads the binding policy in force into `*binding`: `SPGEMM_BIND_NONE`,
// `SPGEMM_BIND_CLOSE` or `SPGEMM_BIND_SPREAD` (`SPGEMM_BIND_AUTO` resolved to what it
// chose on this machine for the current number of threads).
// Errors: `SPGEMM_STATUS_NULL_POINTER`.
//
// # Safety
// `handle` is NULL or live; `binding` is NULL or writable.
spgemm_status_t spgemm_get_thread_binding(spgemm_handle_t *handle, spgemm_bind_t *binding);

// Chooses whether per-thread workspace and temporary arrays are placed on
// high-bandwidth memory (MCDRAM, HBM) local to each worker (`SPGEMM_HBM_*`; default
// `SPGEMM_HBM_AUTO`: when the topology shows such memory). Normal memory is used when
// there is none or it is full. Errors: `SPGEMM_STATUS_NULL_POINTER`,
// `SPGEMM_STATUS_INVALID_VALUE` (unknown code). Calls on one handle are serialised.
//
// # Safety
// `handle` is NULL or a live handle.
spgemm_status_t spgemm_set_hbm(spgemm_handle_t *handle, spgemm_hbm_t mode);

// Reads the high-bandwidth memory mode (`SPGEMM_HBM_*`, as set) into `*mode`, and into
// `*present` (if not NULL) 1 when the topology shows high-bandwidth memory, else 0.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle or mode NULL).
//
// # Safety
// `handle` is NULL or live; `mode` is NULL or writable; `present` is NULL or writable.
spgemm_status_t spgemm_get_hbm(spgemm_handle_t *handle, spgemm_hbm_t *mode, int32_t *present);

// Writes a JSON description of what the library sees and chose for `handle`: source of
// the topology, cores (PU OS indices), NUMA nodes (capacity, subtype, bandwidth in MiB/s
// when the platform reports it, whether high-bandwidth), the binding policy asked for,
// where it came from and what it resolved to, per worker its core, PUs, NUMA node,
// memory node for its workspace and binding outcome, per worker the accumulator chunk as
// allocated (planned node, bytes, bytes bound and on high-bandwidth memory, nodes asked
// for and nodes the kernel reported for its pages, state `empty`/`verified`/`bound`/
// `partial`/`ordinary`/`elsewhere`, fallback reasons), and notes (fallbacks). Starts the
// workers if they are not running, so that their binding outcomes are known.
//
// Two-call pattern: `*needed` (required) receives the size in bytes including the
// terminating NUL. With `buf` NULL and `len` 0 only `*needed` is written (success). If
// `len >= *needed` the text is copied to `buf` (NUL-terminated). If `0 < len < *needed`,
// `buf[0]` is set to NUL and `SPGEMM_STATUS_INVALID_VALUE` is returned.
// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle or needed NULL, or buf NULL with len > 0),
// `SPGEMM_STATUS_INVALID_VALUE` (buffer too small). Calls on one handle are serialised.
//
// # Safety
// `handle` is NULL or live; `buf` is NULL or points to `len` writable bytes; `needed` is
// NULL or writable.
spgemm_status_t spgemm_topology_info(spgemm_handle_t *handle,
                                     void *buf,
                                     size_t len,
                                     size_t *needed);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* SPGEMM_H */

// spgemm.hpp: header-only C++17 layer over the libspgemm C API (spgemm.h).
//
// - spgemm::handle, spgemm::matrix and spgemm::plan own their C object uniquely (movable,
//   not copyable) and destroy it when they go out of scope.
// - A failing call throws spgemm::error, which carries the status code and the library's
//   message naming the offending argument and index.
// - Array types are deduced: int32_t / int64_t / size_t offsets, int32_t / int64_t column
//   indices, float / double / std::complex<float> / std::complex<double> values (the
//   complex ones have the layout of C99 float _Complex / double _Complex). Nothing is
//   copied: a matrix describes caller memory, which must outlive it.
// - Lengths are checked where the caller's containers know them: matrix::csr and
//   plan::numeric take any contiguous container (std::vector, std::array, ...) and pass its
//   size to the library (spgemm_matrix_create_csr_nnz, spgemm_numeric_sized), which also
//   checks C's element types against the plan (an int64_t column array for an int32 plan
//   throws SPGEMM_STATUS_TYPE_MISMATCH instead of being filled with int32 entries).
// - handle::set_memory_limit bounds the extra memory of each call (spgemm_set_memory_limit):
//   a call over it throws spgemm::error with SPGEMM_STATUS_ALLOC_FAILED and the estimate.
// - Products take op(A) and op(B) (spgemm::operation: A, A^T or A^H); spgemm::spmm
//   computes Y = alpha * op(A) * X + beta * Y with alpha and beta of the matrix's type.
//
// Link as for the C API (pkg-config --libs spgemm, or CMake target spgemm::spgemm).
#ifndef SPGEMM_HPP
#define SPGEMM_HPP

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "spgemm.h"

namespace spgemm {

// A libspgemm call failed: status() is the SPGEMM_STATUS_* code, what() the message.
class error : public std::runtime_error {
public:
    error(spgemm_status_t status, const std::string &message)
        : std::runtime_error(message), status_(status) {}
    spgemm_status_t status() const noexcept { return status_; }

private:
    spgemm_status_t status_;
};

enum class index_base : spgemm_index_base_t {
    zero = SPGEMM_INDEX_BASE_ZERO,  // C, C++
    one = SPGEMM_INDEX_BASE_ONE,    // Fortran
};

// op(A) of a product: A, its transpose, or its conjugate transpose (A^T for real values).
enum class operation : spgemm_operation_t {
    non_transpose = SPGEMM_OPERATION_NON_TRANSPOSE,
    transpose = SPGEMM_OPERATION_TRANSPOSE,
    conjugate_transpose = SPGEMM_OPERATION_CONJUGATE_TRANSPOSE,
};

// Storage order of the dense X and Y of spgemm::spmm.
enum class layout : spgemm_layout_t {
    row_major = SPGEMM_LAYOUT_ROW_MAJOR,  // entry (i, j) at i * ld + j
    col_major = SPGEMM_LAYOUT_COL_MAJOR,  // entry (i, j) at j * ld + i
};

namespace detail {

// Throws if `status` is a failure. `h` is the handle the call used (nullptr for calls
// without one: the message is then the calling thread's).
inline void check(spgemm_status_t status, const spgemm_handle_t *h, const char *call) {
    if (status != SPGEMM_STATUS_SUCCESS) {
        // The library's message already starts with the status text; fall back to that
        // text alone if no message was recorded.
        std::string message = spgemm_last_error(h);
        if (message.empty()) message = spgemm_status_string(status);
        throw error(status, std::string(call) + ": " + message);
    }
}

template <class T> struct always_false : std::false_type {};

// Whether T is a contiguous container: std::data and std::size apply to it.
template <class T, class = void> struct is_container : std::false_type {};
template <class T>
struct is_container<T, std::void_t<decltype(std::data(std::declval<T &>())),
                                   decltype(std::size(std::declval<T &>()))>>
    : std::true_type {};
template <class T>
using if_container = std::enable_if_t<is_container<std::remove_reference_t<T>>::value, int>;

// Element type of a contiguous container.
template <class C>
using element_t = std::remove_pointer_t<decltype(std::data(std::declval<C &>()))>;

template <class C> std::int64_t length(const C &c) {
    return static_cast<std::int64_t>(std::size(c));
}

// SPGEMM_INDEX_* code of an integer array element type.
template <class T> constexpr spgemm_index_type_t index_code() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, std::int32_t>) {
        return SPGEMM_INDEX_INT32;
    } else if constexpr (std::is_same_v<U, std::int64_t>) {
        return SPGEMM_INDEX_INT64;
    } else if constexpr (std::is_same_v<U, std::size_t>) {
        return SPGEMM_INDEX_SIZE_T;
    } else {
        static_assert(always_false<T>::value, "indices must be int32_t, int64_t or size_t");
        return -1;
    }
}

// SPGEMM_VALUE_* code of a value array element type.
template <class T> constexpr spgemm_value_type_t value_code() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, float>) {
        return SPGEMM_VALUE_FLOAT32;
    } else if constexpr (std::is_same_v<U, double>) {
        return SPGEMM_VALUE_FLOAT64;
    } else if constexpr (std::is_same_v<U, std::complex<float>>) {
        return SPGEMM_VALUE_COMPLEX_FLOAT;
    } else if constexpr (std::is_same_v<U, std::complex<double>>) {
        return SPGEMM_VALUE_COMPLEX_DOUBLE;
    } else {
        static_assert(always_false<T>::value,
                      "values must be float, double, std::complex<float> or std::complex<double>");
        return -1;
    }
}

struct handle_deleter {
    void operator()(spgemm_handle_t *p) const noexcept { spgemm_destroy(p); }
};
struct matrix_deleter {
    void operator()(spgemm_matrix_t *p) const noexcept { spgemm_matrix_destroy(p); }
};
struct plan_deleter {
    void operator()(spgemm_plan_t *p) const noexcept { spgemm_plan_destroy(p); }
};
struct dist_matrix_deleter {
    void operator()(spgemm_dist_matrix_t *p) const noexcept { spgemm_dist_matrix_destroy(p); }
};
struct dist_plan_deleter {
    void operator()(spgemm_dist_plan_t *p) const noexcept { spgemm_dist_plan_destroy(p); }
};
struct dist_spgemm_plan_deleter {
    void operator()(spgemm_dist_spgemm_plan_t *p) const noexcept {
        spgemm_dist_spgemm_plan_destroy(p);
    }
};

}  // namespace detail

// Library context (worker threads, options, workspace). One per thread for concurrency.
class handle {
public:
    handle() {
        spgemm_handle_t *h = nullptr;
        detail::check(spgemm_create(&h), nullptr, "spgemm_create");
        p_.reset(h);
    }
    explicit handle(int num_threads) : handle() { set_num_threads(num_threads); }

    void set_num_threads(int n) {
        detail::check(spgemm_set_num_threads(get(), n), get(), "spgemm_set_num_threads");
    }
    int num_threads() const {
        std::int32_t n = 0;
        detail::check(spgemm_get_num_threads(get(), &n), get(), "spgemm_get_num_threads");
        return n;
    }
    void set_algorithm(spgemm_algorithm_t alg) {
        detail::check(spgemm_set_algorithm(get(), alg), get(), "spgemm_set_algorithm");
    }
    void set_sorted_output(bool sorted) {
        detail::check(spgemm_set_sorted_output(get(), sorted ? 1 : 0), get(),
                      "spgemm_set_sorted_output");
    }
    void set_validation(bool enabled) {
        detail::check(spgemm_set_validation(get(), enabled ? 1 : 0), get(),
                      "spgemm_set_validation");
    }
    void set_reproducible(bool enabled) {
        detail::check(spgemm_set_reproducible(get(), enabled ? 1 : 0), get(),
                      "spgemm_set_reproducible");
    }
    // Bound in bytes on the extra memory of each later call (0: none); a call whose
    // estimate exceeds it throws spgemm::error (SPGEMM_STATUS_ALLOC_FAILED).
    void set_memory_limit(std::size_t max_bytes) {
        detail::check(spgemm_set_memory_limit(get(), max_bytes), get(),
                      "spgemm_set_memory_limit");
    }
    std::size_t memory_limit() const {
        std::size_t n = 0;
        detail::check(spgemm_get_memory_limit(get(), &n), get(), "spgemm_get_memory_limit");
        return n;
    }
    spgemm_handle_t *get() const noexcept { return p_.get(); }

private:
    std::unique_ptr<spgemm_handle_t, detail::handle_deleter> p_;
};

// Shape and types of a matrix (spgemm_matrix_get_info).
struct matrix_info {
    std::int64_t nrows = 0, ncols = 0, nnz = 0;
    spgemm_index_type_t offset_type = 0, index_type = 0;
    spgemm_value_type_t value_type = 0;
    spgemm_index_base_t base = 0;
};

// CSR descriptor over caller arrays (no copy), or a library-owned result.
class matrix {
public:
    // nrows x ncols CSR matrix: nrows + 1 row offsets, nnz column indices and values.
    template <class Offset, class Index, class Value>
    static matrix csr(std::int64_t nrows, std::int64_t ncols, const Offset *row_offsets,
                      const Index *col_indices, const Value *values,
                      index_base base = index_base::zero) {
        spgemm_matrix_t *m = nullptr;
        detail::check(spgemm_matrix_create_csr(
                          &m, nrows, ncols, detail::index_code<Offset>(), row_offsets,
                          detail::index_code<Index>(), col_indices, detail::value_code<Value>(),
                          values, static_cast<spgemm_index_base_t>(base)),
                      nullptr, "spgemm_matrix_create_csr");
        return matrix(m);
    }
    // nrows x ncols CSR matrix whose arrays hold nnz column indices and values: the last
    // row offset minus the base must equal nnz (else spgemm::error, INVALID_VALUE).
    template <class Offset, class Index, class Value>
    static matrix csr(std::int64_t nrows, std::int64_t ncols, std::int64_t nnz,
                      const Offset *row_offsets, const Index *col_indices, const Value *values,
                      index_base base = index_base::zero) {
        spgemm_matrix_t *m = nullptr;
        detail::check(spgemm_matrix_create_csr_nnz(
                          &m, nrows, ncols, nnz, detail::index_code<Offset>(), row_offsets,
                          detail::index_code<Index>(), col_indices, detail::value_code<Value>(),
                          values, static_cast<spgemm_index_base_t>(base)),
                      nullptr, "spgemm_matrix_create_csr_nnz");
        return matrix(m);
    }
    // CSR matrix over containers (std::vector, ...), which must outlive the matrix: their
    // lengths are checked (nrows + 1 offsets, as many values as column indices, the last
    // offset minus the base equal to that count) before anything reads them.
    template <class Offsets, class Indices, class Values, detail::if_container<Offsets> = 0,
              detail::if_container<Indices> = 0, detail::if_container<Values> = 0>
    static matrix csr(std::int64_t nrows, std::int64_t ncols, const Offsets &row_offsets,
                      const Indices &col_indices, const Values &values,
                      index_base base = index_base::zero) {
        if (detail::length(row_offsets) != nrows + 1) {
            throw error(SPGEMM_STATUS_INVALID_VALUE,
                        "spgemm::matrix::csr: row_offsets has " +
                            std::to_string(detail::length(row_offsets)) + " entries, nrows + 1 = " +
                            std::to_string(nrows + 1));
        }
        if (detail::length(values) != detail::length(col_indices)) {
            throw error(SPGEMM_STATUS_INVALID_VALUE,
                        "spgemm::matrix::csr: " + std::to_string(detail::length(values)) +
                            " values for " + std::to_string(detail::length(col_indices)) +
                            " column indices");
        }
        return csr(nrows, ncols, detail::length(col_indices), std::data(row_offsets),
                   std::data(col_indices), std::data(values), base);
    }
    // Pattern-only matrix (no values), for structure-only products.
    template <class Offset, class Index>
    static matrix csr_pattern(std::int64_t nrows, std::int64_t ncols, const Offset *row_offsets,
                              const Index *col_indices, index_base base = index_base::zero) {
        return csr(nrows, ncols, row_offsets, col_indices, static_cast<const double *>(nullptr),
                   base);
    }

    matrix_info info() const {
        matrix_info i;
        detail::check(spgemm_matrix_get_info(get(), &i.nrows, &i.ncols, &i.nnz, &i.offset_type,
                                             &i.index_type, &i.value_type, &i.base),
                      nullptr, "spgemm_matrix_get_info");
        return i;
    }
    // The arrays behind the matrix, typed; throws spgemm::error (TYPE_MISMATCH) if the
    // requested types are not the matrix's.
    template <class Offset, class Index, class Value>
    void arrays(const Offset **row_offsets, const Index **col_indices,
                const Value **values) const {
        matrix_info i = info();
        if (i.offset_type != detail::index_code<Offset>() ||
            i.index_type != detail::index_code<Index>() ||
            i.value_type != detail::value_code<Value>()) {
            throw error(SPGEMM_STATUS_TYPE_MISMATCH,
                        "spgemm::matrix::arrays: requested types differ from the matrix's");
        }
        const void *r = nullptr, *c = nullptr, *v = nullptr;
        detail::check(spgemm_matrix_export_csr(get(), &r, &c, &v), nullptr,
                      "spgemm_matrix_export_csr");
        *row_offsets = static_cast<const Offset *>(r);
        *col_indices = static_cast<const Index *>(c);
        *values = static_cast<const Value *>(v);
    }
    spgemm_matrix_t *get() const noexcept { return p_.get(); }

    // One-call product C = A*B into library-owned arrays of the given types.
    template <class COffset, class CIndex>
    static matrix multiply(handle &h, const matrix &a, const matrix &b,
                           index_base c_base = index_base::zero) {
        spgemm_matrix_t *c = nullptr;
        detail::check(spgemm_multiply(h.get(), a.get(), b.get(), detail::index_code<COffset>(),
                                      detail::index_code<CIndex>(),
                                      static_cast<spgemm_index_base_t>(c_base), &c),
                      h.get(), "spgemm_multiply");
        return matrix(c);
    }
    // One-call product C = op_a(A) * op_b(B) into library-owned arrays.
    template <class COffset, class CIndex>
    static matrix multiply(handle &h, operation op_a, const matrix &a, operation op_b,
                           const matrix &b, index_base c_base = index_base::zero) {
        spgemm_matrix_t *c = nullptr;
        detail::check(spgemm_multiply_op(h.get(), static_cast<spgemm_operation_t>(op_a), a.get(),
                                         static_cast<spgemm_operation_t>(op_b), b.get(),
                                         detail::index_code<COffset>(),
                                         detail::index_code<CIndex>(),
                                         static_cast<spgemm_index_base_t>(c_base), &c),
                      h.get(), "spgemm_multiply_op");
        return matrix(c);
    }

private:
    explicit matrix(spgemm_matrix_t *m) : p_(m) {}
    std::unique_ptr<spgemm_matrix_t, detail::matrix_deleter> p_;
};

// Result of the symbolic phase of C = A*B; numeric() may be called again and again after
// the values of A and B change (same structure).
class plan {
public:
    // Symbolic phase; writes C's nrows(A) + 1 row offsets (type deduced) to c_row_offsets.
    // C's column indices will have type CIndex.
    template <class CIndex, class COffset>
    static plan symbolic(handle &h, const matrix &a, const matrix &b, COffset *c_row_offsets,
                         index_base c_base = index_base::zero) {
        spgemm_plan_t *p = nullptr;
        detail::check(spgemm_symbolic(h.get(), a.get(), b.get(), detail::index_code<COffset>(),
                                      detail::index_code<CIndex>(),
                                      static_cast<spgemm_index_base_t>(c_base), c_row_offsets,
                                      &p),
                      h.get(), "spgemm_symbolic");
        return plan(p);
    }
    // Symbolic phase of C = op_a(A) * op_b(B) (the plan keeps the transposes; numeric()
    // takes the same A and B, with new values when they change).
    template <class CIndex, class COffset>
    static plan symbolic(handle &h, operation op_a, const matrix &a, operation op_b,
                         const matrix &b, COffset *c_row_offsets,
                         index_base c_base = index_base::zero) {
        spgemm_plan_t *p = nullptr;
        detail::check(spgemm_symbolic_op(h.get(), static_cast<spgemm_operation_t>(op_a), a.get(),
                                         static_cast<spgemm_operation_t>(op_b), b.get(),
                                         detail::index_code<COffset>(),
                                         detail::index_code<CIndex>(),
                                         static_cast<spgemm_index_base_t>(c_base),
                                         c_row_offsets, &p),
                      h.get(), "spgemm_symbolic_op");
        return plan(p);
    }

    // nnz(C): the length of the column-index and value arrays to give numeric().
    std::int64_t nnz() const {
        std::int64_t n = 0;
        detail::check(spgemm_plan_get_nnz(get(), &n), nullptr, "spgemm_plan_get_nnz");
        return n;
    }
    // Number of scalar multiplications of the product (flops = 2 * multiplications()).
    std::int64_t multiplications() const {
        std::int64_t f = 0;
        detail::check(spgemm_plan_get_info(get(), nullptr, nullptr, &f), nullptr,
                      "spgemm_plan_get_info");
        return f;
    }

    // Numeric phase: fills nnz() column indices and values of C. Their element types are
    // checked against the plan (spgemm::error, TYPE_MISMATCH); the arrays hold nnz() each.
    template <class CIndex, class Value>
    void numeric(handle &h, const matrix &a, const matrix &b, CIndex *c_col_indices,
                 Value *c_values) {
        static_assert(!std::is_const_v<CIndex> && !std::is_const_v<Value>);
        const std::int64_t n = nnz();
        sized(h, a, b, static_cast<std::int32_t *>(nullptr), 0, c_col_indices, n, c_values, n);
    }
    // Numeric phase into containers (resized by the caller to nnz()): their lengths and
    // element types are checked before anything is written.
    template <class CIndices, class Values, detail::if_container<CIndices> = 0,
              detail::if_container<Values> = 0>
    void numeric(handle &h, const matrix &a, const matrix &b, CIndices &c_col_indices,
                 Values &c_values) {
        sized(h, a, b, static_cast<std::int32_t *>(nullptr), 0, std::data(c_col_indices),
              detail::length(c_col_indices), std::data(c_values), detail::length(c_values));
    }
    // Numeric phase that also writes C's row offsets (nrows(C) + 1 of them) into a
    // container; every length and element type is checked first.
    template <class COffsets, class CIndices, class Values, detail::if_container<COffsets> = 0,
              detail::if_container<CIndices> = 0, detail::if_container<Values> = 0>
    void numeric(handle &h, const matrix &a, const matrix &b, COffsets &c_row_offsets,
                 CIndices &c_col_indices, Values &c_values) {
        sized(h, a, b, std::data(c_row_offsets), detail::length(c_row_offsets),
              std::data(c_col_indices), detail::length(c_col_indices), std::data(c_values),
              detail::length(c_values));
    }
    // Structure-only numeric phase: fills nnz() column indices (type checked).
    template <class CIndex>
    void numeric_structure(handle &h, const matrix &a, const matrix &b, CIndex *c_col_indices) {
        sized(h, a, b, static_cast<std::int32_t *>(nullptr), 0, c_col_indices, nnz(),
              static_cast<double *>(nullptr), 0);
    }
    // Structure-only numeric phase into a container (length and type checked).
    template <class CIndices, detail::if_container<CIndices> = 0>
    void numeric_structure(handle &h, const matrix &a, const matrix &b, CIndices &c_col_indices) {
        sized(h, a, b, static_cast<std::int32_t *>(nullptr), 0, std::data(c_col_indices),
              detail::length(c_col_indices), static_cast<double *>(nullptr), 0);
    }
    spgemm_plan_t *get() const noexcept { return p_.get(); }

private:
    // spgemm_numeric_sized with each array's element type and length.
    template <class COffset, class CIndex, class Value>
    void sized(handle &h, const matrix &a, const matrix &b, COffset *rows, std::int64_t nrows,
               CIndex *cols, std::int64_t ncols, Value *vals, std::int64_t nvals) {
        static_assert(!std::is_const_v<COffset> && !std::is_const_v<CIndex> &&
                      !std::is_const_v<Value>);
        detail::check(spgemm_numeric_sized(h.get(), get(), a.get(), b.get(),
                                           detail::index_code<COffset>(), rows, nrows,
                                           detail::index_code<CIndex>(), cols, ncols,
                                           detail::value_code<Value>(), vals, nvals),
                      h.get(), "spgemm_numeric_sized");
    }
    explicit plan(spgemm_plan_t *p) : p_(p) {}
    std::unique_ptr<spgemm_plan_t, detail::plan_deleter> p_;
};

// Y = alpha * op(A) * X + beta * Y (spgemm_spmm_scaled): X and Y dense in `order` with
// leading dimensions ldx and ldy, k columns; Value must be the matrix's value type (else
// spgemm::error with SPGEMM_STATUS_TYPE_MISMATCH). beta == 0 means Y is not read.
template <class Value>
void spmm(handle &h, operation op, Value alpha, const matrix &a, layout order, std::int64_t k,
          const Value *x, std::int64_t ldx, Value beta, Value *y, std::int64_t ldy) {
    if (a.info().value_type != detail::value_code<Value>()) {
        throw error(SPGEMM_STATUS_TYPE_MISMATCH,
                    "spgemm::spmm: alpha, beta, X and Y must have the matrix's value type");
    }
    detail::check(spgemm_spmm_scaled(h.get(), static_cast<spgemm_operation_t>(op), &alpha,
                                     a.get(), nullptr, static_cast<spgemm_layout_t>(order), k, x,
                                     ldx, &beta, y, ldy),
                  h.get(), "spgemm_spmm_scaled");
}

// ---- Distributed SpMM over MPI (library built with the `mpi` feature) ----
// The communicator is passed as its Fortran handle, MPI_Comm_c2f(comm), so this header
// does not include mpi.h. Every call (constructors and destructors included) is collective
// over that communicator and throws the same spgemm::error on every rank.

// This rank's rows of a row-distributed CSR matrix (GLOBAL column indices; no copy).
class dist_matrix {
public:
    // Rows [row_start, row_start + local_rows) of a global_rows x global_cols matrix; this
    // rank owns rows [x_start, x_start + x_rows) of X (x_start = -1: the same as its rows).
    template <class Offset, class Index, class Value>
    static dist_matrix csr(handle &h, int comm_f, std::int64_t global_rows,
                           std::int64_t global_cols, std::int64_t row_start,
                           std::int64_t local_rows, const Offset *row_offsets,
                           const Index *col_indices, const Value *values,
                           index_base base = index_base::zero, std::int64_t x_start = -1,
                           std::int64_t x_rows = 0) {
        spgemm_dist_matrix_t *m = nullptr;
        detail::check(spgemm_dist_matrix_create_csr(
                          h.get(), comm_f, global_rows, global_cols, row_start, local_rows,
                          x_start, x_rows, detail::index_code<Offset>(), row_offsets,
                          detail::index_code<Index>(), col_indices, detail::value_code<Value>(),
                          values, static_cast<spgemm_index_base_t>(base), &m),
                      h.get(), "spgemm_dist_matrix_create_csr");
        return dist_matrix(m);
    }
    spgemm_dist_matrix_t *get() const noexcept { return p_.get(); }

private:
    explicit dist_matrix(spgemm_dist_matrix_t *m) : p_(m) {}
    std::unique_ptr<spgemm_dist_matrix_t, detail::dist_matrix_deleter> p_;
};

// What a distributed plan runs (spgemm_dist_plan_get_info).
struct dist_plan_info {
    spgemm_dist_algorithm_t algorithm = 0;
    std::int64_t grid_rows = 0, grid_cols = 0, footprint_bytes = 0;
    double predicted_bytes_total = 0;
    spgemm_value_type_t value_type = 0;
    std::int64_t x_rows = 0, y_rows = 0;
};

// Traffic and time of the last product (spgemm_dist_plan_get_stats).
struct dist_stats {
    std::int64_t bytes_sent = 0, bytes_received = 0, control_bytes = 0;
    double compute_seconds = 0, total_seconds = 0;
};

// A distributed SpMM plan: Y = alpha * A * X + beta * Y with k columns, reused.
class dist_plan {
public:
    // grid_rows x grid_cols: a forced process grid (0 x 0: chosen); memory_limit: bytes a
    // rank may hold (0: no limit).
    static dist_plan create(handle &h, const dist_matrix &a, std::int64_t k,
                            spgemm_layout_t layout = SPGEMM_LAYOUT_ROW_MAJOR,
                            spgemm_dist_algorithm_t algorithm = SPGEMM_DIST_ALG_AUTO,
                            std::int64_t grid_rows = 0, std::int64_t grid_cols = 0,
                            std::int64_t memory_limit = 0) {
        spgemm_dist_plan_t *p = nullptr;
        detail::check(spgemm_dist_spmm_plan(h.get(), a.get(), k, layout, algorithm, grid_rows,
                                            grid_cols, memory_limit, &p),
                      h.get(), "spgemm_dist_spmm_plan");
        return dist_plan(p);
    }
    dist_plan_info info() const {
        dist_plan_info i;
        detail::check(spgemm_dist_plan_get_info(get(), &i.algorithm, &i.grid_rows, &i.grid_cols,
                                                &i.footprint_bytes, &i.predicted_bytes_total,
                                                &i.value_type, &i.x_rows, &i.y_rows),
                      nullptr, "spgemm_dist_plan_get_info");
        return i;
    }
    dist_stats last_stats() const {
        dist_stats s;
        detail::check(spgemm_dist_plan_get_stats(get(), &s.bytes_sent, &s.bytes_received,
                                                 &s.control_bytes, &s.compute_seconds,
                                                 &s.total_seconds),
                      nullptr, "spgemm_dist_plan_get_stats");
        return s;
    }
    // This rank's rows of X and Y, in the plan's layout, of A's value type.
    template <class Value>
    void spmm(handle &h, double alpha, const Value *x, std::int64_t ldx, double beta, Value *y,
              std::int64_t ldy) {
        static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>);
        detail::check(spgemm_dist_spmm(h.get(), get(), alpha, x, ldx, beta, y, ldy), h.get(),
                      "spgemm_dist_spmm");
    }
    // A's values changed (same structure).
    void update_values(handle &h, const dist_matrix &a) {
        detail::check(spgemm_dist_spmm_update_values(h.get(), get(), a.get()), h.get(),
                      "spgemm_dist_spmm_update_values");
    }
    spgemm_dist_plan_t *get() const noexcept { return p_.get(); }

private:
    explicit dist_plan(spgemm_dist_plan_t *p) : p_(p) {}
    std::unique_ptr<spgemm_dist_plan_t, detail::dist_plan_deleter> p_;
};

// What a distributed SpGEMM plan gives this rank (spgemm_dist_spgemm_plan_get_info).
struct dist_spgemm_info {
    std::int64_t row_start = 0, local_rows = 0, global_cols = 0, local_nnz = 0, global_nnz = 0;
    std::int32_t operands = 0;
};

// This rank's rows of a distributed product C: row offsets from the symbolic phase,
// global column indices and values from each numeric call (int64 offsets and indices).
template <class Value>
struct dist_csr {
    std::int64_t row_start = 0;
    std::int64_t global_cols = 0;
    std::vector<std::int64_t> row_offsets, col_indices;
    std::vector<Value> values;
};

// A distributed SpGEMM plan: C = op(A) * B, or op(R) * A * P (AMG's R*A*P and P^T*A*P),
// symbolic once, numeric again whenever values change. C is held in `out` (resized here).
template <class Value>
class dist_spgemm_plan {
public:
    static dist_spgemm_plan product(handle &h, const dist_matrix &a, const dist_matrix &b,
                                    dist_csr<Value> &out, operation op = operation::non_transpose,
                                    index_base c_base = index_base::zero) {
        return make(h, op, {a.get(), b.get(), nullptr}, out, c_base);
    }
    static dist_spgemm_plan rap(handle &h, const dist_matrix &r, const dist_matrix &a,
                                const dist_matrix &p, dist_csr<Value> &out,
                                operation op = operation::non_transpose,
                                index_base c_base = index_base::zero) {
        return make(h, op, {r.get(), a.get(), p.get()}, out, c_base);
    }
    // New values of the matrices of the symbolic call (same order, same structure).
    void numeric(handle &h, const dist_matrix &m0, const dist_matrix &m1,
                 dist_csr<Value> &out) {
        run(h, m0.get(), m1.get(), nullptr, out);
    }
    void numeric(handle &h, const dist_matrix &m0, const dist_matrix &m1,
                 const dist_matrix &m2, dist_csr<Value> &out) {
        run(h, m0.get(), m1.get(), m2.get(), out);
    }
    dist_spgemm_info info() const {
        dist_spgemm_info i;
        detail::check(spgemm_dist_spgemm_plan_get_info(get(), &i.row_start, &i.local_rows,
                                                       &i.global_cols, &i.local_nnz,
                                                       &i.global_nnz, &i.operands),
                      nullptr, "spgemm_dist_spgemm_plan_get_info");
        return i;
    }
    spgemm_dist_spgemm_plan_t *get() const noexcept { return p_.get(); }

private:
    explicit dist_spgemm_plan(spgemm_dist_spgemm_plan_t *p) : p_(p) {}
    static dist_spgemm_plan make(handle &h, operation op,
                                 std::array<spgemm_dist_matrix_t *, 3> m,
                                 dist_csr<Value> &out, index_base c_base) {
        static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>);
        // Rows of C here: op(first)'s (its rows, or its block of columns for a transpose).
        spgemm_dist_spgemm_plan_t *p = nullptr;
        std::vector<std::int64_t> offs(static_cast<std::size_t>(probe_rows(m[0], op)) + 1);
        spgemm_status_t s =
            m[2] ? spgemm_dist_rap_symbolic(h.get(), static_cast<spgemm_operation_t>(op), m[0],
                                            m[1], m[2], SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                            static_cast<spgemm_index_base_t>(c_base),
                                            offs.data(), &p)
                 : spgemm_dist_spgemm_symbolic(h.get(), static_cast<spgemm_operation_t>(op), m[0],
                                               m[1], SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT64,
                                               static_cast<spgemm_index_base_t>(c_base),
                                               offs.data(), &p);
        detail::check(s, h.get(), m[2] ? "spgemm_dist_rap_symbolic" : "spgemm_dist_spgemm_symbolic");
        dist_spgemm_plan plan(p);
        dist_spgemm_info i = plan.info();
        out.row_start = i.row_start;
        out.global_cols = i.global_cols;
        offs.resize(static_cast<std::size_t>(i.local_rows) + 1);
        out.row_offsets = std::move(offs);
        out.col_indices.assign(static_cast<std::size_t>(i.local_nnz), 0);
        out.values.assign(static_cast<std::size_t>(i.local_nnz), Value(0));
        return plan;
    }
    // The rows of op(M) this rank owns, read from the matrix's own facts.
    static std::int64_t probe_rows(spgemm_dist_matrix_t *m, operation op) {
        std::int64_t rows = 0, x_rows = 0;
        detail::check(spgemm_dist_matrix_get_local_sizes(m, &rows, &x_rows), nullptr,
                      "spgemm_dist_matrix_get_local_sizes");
        return op == operation::non_transpose ? rows : x_rows;
    }
    void run(handle &h, spgemm_dist_matrix_t *m0, spgemm_dist_matrix_t *m1,
             spgemm_dist_matrix_t *m2, dist_csr<Value> &out) {
        detail::check(spgemm_dist_spgemm_numeric(h.get(), get(), m0, m1, m2,
                                                 out.col_indices.data(), out.values.data()),
                      h.get(), "spgemm_dist_spgemm_numeric");
    }
    std::unique_ptr<spgemm_dist_spgemm_plan_t, detail::dist_spgemm_plan_deleter> p_;
};

}  // namespace spgemm

#endif  // SPGEMM_HPP

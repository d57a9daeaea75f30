// The header from C++17 (built with -Wall -Wextra -Werror): RAII wrappers over the opaque
// objects, std::vector storage, one two-phase product and one spgemm_multiply, both checked
// against a dense product computed here. Prints "N passed, M failed" like the C tests.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "spgemm.h"

namespace {

int passed = 0;
int failed = 0;

void check(bool cond, const char* what, int line) {
    if (cond) {
        ++passed;
    } else {
        ++failed;
        std::fprintf(stderr, "FAIL header_cxx.cpp:%d: %s (last error: %s)\n", line, what,
                     spgemm_last_error(nullptr));
    }
}
#define CHECK(c) check((c), #c, __LINE__)

struct HandleDeleter {
    void operator()(spgemm_handle_t* h) const { spgemm_destroy(h); }
};
struct MatrixDeleter {
    void operator()(spgemm_matrix_t* m) const { spgemm_matrix_destroy(m); }
};
struct PlanDeleter {
    void operator()(spgemm_plan_t* p) const { spgemm_plan_destroy(p); }
};
using Handle = std::unique_ptr<spgemm_handle_t, HandleDeleter>;
using Matrix = std::unique_ptr<spgemm_matrix_t, MatrixDeleter>;
using Plan = std::unique_ptr<spgemm_plan_t, PlanDeleter>;

// A 0-based CSR matrix with int64 offsets and int32 indices, built from a dense one.
struct Csr {
    std::int64_t rows = 0, cols = 0;
    std::vector<std::int64_t> rp{0};
    std::vector<std::int32_t> ci;
    std::vector<double> v;
};

Csr from_dense(std::int64_t rows, std::int64_t cols, const std::vector<double>& d) {
    Csr m;
    m.rows = rows;
    m.cols = cols;
    for (std::int64_t i = 0; i < rows; ++i) {
        for (std::int64_t j = 0; j < cols; ++j) {
            if (d[static_cast<std::size_t>(i * cols + j)] != 0.0) {
                m.ci.push_back(static_cast<std::int32_t>(j));
                m.v.push_back(d[static_cast<std::size_t>(i * cols + j)]);
            }
        }
        m.rp.push_back(static_cast<std::int64_t>(m.ci.size()));
    }
    return m;
}

Matrix describe(const Csr& m) {
    spgemm_matrix_t* raw = nullptr;
    spgemm_status_t s = spgemm_matrix_create_csr(&raw, m.rows, m.cols, SPGEMM_INDEX_INT64,
                                                 m.rp.data(), SPGEMM_INDEX_INT32, m.ci.data(),
                                                 SPGEMM_VALUE_FLOAT64, m.v.data(),
                                                 SPGEMM_INDEX_BASE_ZERO);
    CHECK(s == SPGEMM_STATUS_SUCCESS);
    return Matrix(raw);
}

// Dense C = A*B, then the entries of C a sparse product has (every product contributes a
// structural entry, so structural zeros of the dense result are not in C).
std::vector<double> dense_product(const std::vector<double>& a, const std::vector<double>& b,
                                  std::int64_t m, std::int64_t n, std::int64_t k) {
    std::vector<double> c(static_cast<std::size_t>(m * k), 0.0);
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t l = 0; l < n; ++l)
            for (std::int64_t j = 0; j < k; ++j)
                c[static_cast<std::size_t>(i * k + j)] +=
                    a[static_cast<std::size_t>(i * n + l)] * b[static_cast<std::size_t>(l * k + j)];
    return c;
}

}  // namespace

int main() {
    // A (3x4), B (4x3) with small integers: exact products. C(1, :) cancels to zero at (1,1).
    const std::int64_t m = 3, n = 4, k = 3;
    const std::vector<double> da = {1, 0, 2, 0,  //
                                    0, 1, 0, -1,  //
                                    0, 0, 0, 0};
    const std::vector<double> db = {1, 0, 3,  //
                                    0, 2, 0,  //
                                    4, 0, 0,  //
                                    0, 2, 1};
    const Csr a = from_dense(m, n, da), b = from_dense(n, k, db);
    const std::vector<double> dc = dense_product(da, db, m, n, k);

    spgemm_handle_t* raw_h = nullptr;
    CHECK(spgemm_create(&raw_h) == SPGEMM_STATUS_SUCCESS);
    Handle h(raw_h);
    Matrix A = describe(a), B = describe(b);

    // Two-phase product into std::vector storage (int32 offsets and indices, 0-based).
    std::vector<std::int32_t> crp(static_cast<std::size_t>(m + 1), -1);
    spgemm_plan_t* raw_p = nullptr;
    CHECK(spgemm_symbolic(h.get(), A.get(), B.get(), SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                          SPGEMM_INDEX_BASE_ZERO, crp.data(), &raw_p) == SPGEMM_STATUS_SUCCESS);
    Plan plan(raw_p);
    std::int64_t nnz = -1;
    CHECK(spgemm_plan_get_nnz(plan.get(), &nnz) == SPGEMM_STATUS_SUCCESS);
    // row 0: cols 0, 2 (from B rows 0 and 2); row 1: cols 1 (2 - 2 = 0 kept), 2; row 2: none
    CHECK(nnz == 4);
    std::vector<std::int32_t> cci(static_cast<std::size_t>(nnz > 0 ? nnz : 0));
    std::vector<double> cv(cci.size());
    CHECK(spgemm_numeric(h.get(), plan.get(), A.get(), B.get(), cci.data(), cv.data()) ==
          SPGEMM_STATUS_SUCCESS);
    CHECK((crp == std::vector<std::int32_t>{0, 2, 4, 4}));
    CHECK((cci == std::vector<std::int32_t>{0, 2, 1, 2}));
    bool values_ok = cv.size() == 4;
    for (std::int64_t i = 0; values_ok && i < m; ++i)
        for (std::int32_t p = crp[static_cast<std::size_t>(i)];
             p < crp[static_cast<std::size_t>(i + 1)]; ++p)
            values_ok = values_ok && cv[static_cast<std::size_t>(p)] ==
                                         dc[static_cast<std::size_t>(
                                             i * k + cci[static_cast<std::size_t>(p)])];
    CHECK(values_ok);
    CHECK(cv.size() == 4 && cv[2] == 0.0 && !std::signbit(cv[2]));

    // One-call product owned by the library, read through get_info / export_csr.
    spgemm_matrix_t* raw_c = nullptr;
    CHECK(spgemm_multiply(h.get(), A.get(), B.get(), SPGEMM_INDEX_SIZE_T, SPGEMM_INDEX_INT64,
                          SPGEMM_INDEX_BASE_ONE, &raw_c) == SPGEMM_STATUS_SUCCESS);
    Matrix C(raw_c);
    std::int64_t rows = 0, cols = 0, cnnz = 0;
    spgemm_index_type_t ot = -1, it = -1;
    spgemm_value_type_t vt = -1;
    spgemm_index_base_t base = -1;
    CHECK(spgemm_matrix_get_info(C.get(), &rows, &cols, &cnnz, &ot, &it, &vt, &base) ==
          SPGEMM_STATUS_SUCCESS);
    CHECK(rows == m && cols == k && cnnz == 4 && ot == SPGEMM_INDEX_SIZE_T &&
          it == SPGEMM_INDEX_INT64 && vt == SPGEMM_VALUE_FLOAT64 && base == 1);
    const void *vrp = nullptr, *vci = nullptr, *vv = nullptr;
    CHECK(spgemm_matrix_export_csr(C.get(), &vrp, &vci, &vv) == SPGEMM_STATUS_SUCCESS);
    if (vrp != nullptr && vci != nullptr && vv != nullptr && cnnz == 4) {
        const auto* rp1 = static_cast<const std::size_t*>(vrp);
        const auto* ci1 = static_cast<const std::int64_t*>(vci);
        const auto* v1 = static_cast<const double*>(vv);
        for (std::size_t i = 0; i <= static_cast<std::size_t>(m); ++i)
            CHECK(rp1[i] == static_cast<std::size_t>(crp[i]) + 1);
        for (std::size_t p = 0; p < 4; ++p) {
            CHECK(ci1[p] == cci[p] + 1);
            CHECK(v1[p] == cv[p]);
        }
    }

    // An error from C++: the message names the argument.
    spgemm_plan_t* none = nullptr;
    CHECK(spgemm_symbolic(h.get(), A.get(), A.get(), SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32,
                          SPGEMM_INDEX_BASE_ZERO, nullptr,
                          &none) == SPGEMM_STATUS_DIMENSION_MISMATCH);
    CHECK(none == nullptr);
    CHECK(spgemm_last_error(h.get())[0] != '\0');

    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

// spgemm.hpp with lengths and limits (issue 27): matrices over std::vector (lengths checked,
// spgemm_matrix_create_csr_nnz), numeric into std::vector (spgemm_numeric_sized: lengths and
// element types checked against the plan; an int64_t column array for an int32 plan throws
// TYPE_MISMATCH), and handle::set_memory_limit (ALLOC_FAILED as spgemm::error, the handle
// usable afterwards). Prints "N passed, M failed" like the C tests.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "spgemm.hpp"

namespace {

int passed = 0;
int failed = 0;

void check(bool cond, const char *what, int line) {
    if (cond) {
        ++passed;
    } else {
        ++failed;
        std::fprintf(stderr, "FAIL limits_cxx.cpp:%d: %s\n", line, what);
    }
}
#define CHECK(c) check((c), #c, __LINE__)

// Runs f, which must throw spgemm::error with `status` and a message containing `word`.
template <class F> void expect_error(F f, spgemm_status_t status, const char *word, int line) {
    try {
        f();
        check(false, "no exception", line);
    } catch (const spgemm::error &e) {
        check(e.status() == status, "status", line);
        check(std::string(e.what()).find(word) != std::string::npos, word, line);
    }
}
#define EXPECT_ERROR(f, status, word) expect_error([&] { f; }, (status), (word), __LINE__)

// A = tridiag(-1, 2, -1), n x n, 0-based.
struct Tri {
    std::vector<std::int32_t> rp{0};
    std::vector<std::int32_t> ci;
    std::vector<double> v;
    explicit Tri(int n) {
        for (int i = 0; i < n; ++i) {
            for (int j = i - 1; j <= i + 1; ++j) {
                if (j < 0 || j >= n) continue;
                ci.push_back(j);
                v.push_back(j == i ? 2.0 : -1.0);
            }
            rp.push_back(static_cast<std::int32_t>(ci.size()));
        }
    }
};

void lengths() {
    const int n = 50;
    Tri t(n);
    spgemm::handle h(2);
    auto a = spgemm::matrix::csr(n, n, t.rp, t.ci, t.v);
    std::vector<std::int32_t> rp(n + 1);
    auto p = spgemm::plan::symbolic<std::int32_t>(h, a, a, rp.data());
    const auto nnz = static_cast<std::size_t>(p.nnz());
    CHECK(nnz == 5 * n - 6);

    // Containers of the right length and types: C, with its row offsets.
    std::vector<std::int32_t> rp2(n + 1), cols(nnz);
    std::vector<double> vals(nnz);
    p.numeric(h, a, a, rp2, cols, vals);
    CHECK(rp2 == rp);
    CHECK(vals[0] == 5.0 && cols[0] == 0);  // (A*A)(0,0) = 2*2 + (-1)*(-1)
    std::vector<std::int32_t> cols2(nnz);
    p.numeric_structure(h, a, a, cols2);
    CHECK(cols2 == cols);

    // Too short: nothing written.
    std::vector<std::int32_t> short_cols(nnz - 1, -3);
    EXPECT_ERROR(p.numeric(h, a, a, short_cols, vals), SPGEMM_STATUS_INVALID_VALUE,
                 "c_col_indices");
    CHECK(short_cols[0] == -3);
    std::vector<double> short_vals(2);
    EXPECT_ERROR(p.numeric(h, a, a, cols, short_vals), SPGEMM_STATUS_INVALID_VALUE, "c_values");
    std::vector<std::int32_t> short_rp(n);
    EXPECT_ERROR(p.numeric(h, a, a, short_rp, cols, vals), SPGEMM_STATUS_INVALID_VALUE,
                 "c_row_offsets");

    // Element types other than the plan's (issue 27: int64 columns for an int32 plan were
    // filled with int32 entries and read back as garbage).
    std::vector<std::int64_t> cols64(nnz, -1);
    EXPECT_ERROR(p.numeric(h, a, a, cols64, vals), SPGEMM_STATUS_TYPE_MISMATCH, "int64");
    EXPECT_ERROR(p.numeric(h, a, a, cols64.data(), vals.data()), SPGEMM_STATUS_TYPE_MISMATCH,
                 "int64");
    CHECK(cols64[0] == -1);
    std::vector<float> vals32(nnz);
    EXPECT_ERROR(p.numeric(h, a, a, cols, vals32), SPGEMM_STATUS_TYPE_MISMATCH, "float");
    std::vector<std::int64_t> rp64(n + 1);
    EXPECT_ERROR(p.numeric(h, a, a, rp64, cols, vals), SPGEMM_STATUS_TYPE_MISMATCH, "int64");
    // The pointer form with the right types still works.
    std::vector<std::int32_t> cols3(nnz);
    std::vector<double> vals3(nnz);
    p.numeric(h, a, a, cols3.data(), vals3.data());
    CHECK(cols3 == cols && vals3 == vals);

    // Matrices over containers whose lengths disagree.
    std::vector<std::int32_t> rp_short(t.rp.begin(), t.rp.end() - 1);
    EXPECT_ERROR(spgemm::matrix::csr(n, n, rp_short, t.ci, t.v), SPGEMM_STATUS_INVALID_VALUE,
                 "row_offsets");
    std::vector<double> v_short(t.v.begin(), t.v.end() - 1);
    EXPECT_ERROR(spgemm::matrix::csr(n, n, t.rp, t.ci, v_short), SPGEMM_STATUS_INVALID_VALUE,
                 "values");
    // Offsets that claim more entries than the arrays hold.
    std::vector<std::int32_t> rp_long = t.rp;
    rp_long.back() += 4;
    EXPECT_ERROR(spgemm::matrix::csr(n, n, rp_long, t.ci, t.v), SPGEMM_STATUS_INVALID_VALUE,
                 "nnz");
    EXPECT_ERROR(spgemm::matrix::csr(n, n, static_cast<std::int64_t>(t.ci.size()) - 1,
                                     t.rp.data(), t.ci.data(), t.v.data()),
                 SPGEMM_STATUS_INVALID_VALUE, "nnz");
}

void memory_limit() {
    const int n = 400;
    Tri t(n);
    spgemm::handle h(2);
    CHECK(h.memory_limit() == 0);
    auto a = spgemm::matrix::csr(n, n, t.rp, t.ci, t.v);
    std::vector<std::int32_t> rp(n + 1);
    h.set_memory_limit(64);
    CHECK(h.memory_limit() == 64);
    EXPECT_ERROR(spgemm::plan::symbolic<std::int32_t>(h, a, a, rp.data()),
                 SPGEMM_STATUS_ALLOC_FAILED, "spgemm_set_memory_limit");
    EXPECT_ERROR((spgemm::matrix::multiply<std::int32_t, std::int32_t>(h, a, a)),
                 SPGEMM_STATUS_ALLOC_FAILED, "estimated");
    h.set_memory_limit(0);
    auto p = spgemm::plan::symbolic<std::int32_t>(h, a, a, rp.data());
    std::vector<std::int32_t> cols(static_cast<std::size_t>(p.nnz()));
    std::vector<double> vals(cols.size());
    h.set_memory_limit(64);
    EXPECT_ERROR(p.numeric(h, a, a, cols, vals), SPGEMM_STATUS_ALLOC_FAILED, "numeric");
    h.set_memory_limit(std::size_t(1) << 30);
    p.numeric(h, a, a, cols, vals);
    CHECK(vals[0] == 5.0);
}

}  // namespace

int main() {
    try {
        lengths();
        memory_limit();
    } catch (const spgemm::error &e) {
        ++failed;
        std::fprintf(stderr, "FAIL limits_cxx.cpp: unexpected spgemm::error: %s\n", e.what());
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

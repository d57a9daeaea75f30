// libspgemm from C++17 with the RAII layer spgemm.hpp: C = A*B in two phases, numeric
// reuse after A's values change, and an error turned into an exception. Exit status 1 on a
// wrong answer.
//
// Build (after `make install PREFIX=$HOME/opt/spgemm`):
//   export PKG_CONFIG_PATH=$HOME/opt/spgemm/lib/pkgconfig
//   c++ -std=c++17 cpp_quickstart.cpp $(pkg-config --cflags --libs spgemm)
//       -Wl,-rpath,$(pkg-config --variable=libdir spgemm) -o cpp_quickstart   (one line)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "spgemm.hpp"

namespace {

// Dense m x n copy of a 0-based CSR matrix (duplicates summed).
template <class O, class I>
std::vector<double> dense(int m, int n, const O *rp, const I *ci, const double *v) {
    std::vector<double> d(static_cast<std::size_t>(m) * n, 0.0);
    for (int i = 0; i < m; ++i)
        for (O k = rp[i]; k < rp[i + 1]; ++k) d[static_cast<std::size_t>(i) * n + ci[k]] += v[k];
    return d;
}

bool same_as_dense_product(int m, int k, int n, const std::vector<double> &a,
                           const std::vector<double> &b, const std::vector<double> &c) {
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int l = 0; l < k; ++l) s += a[i * k + l] * b[l * n + j];
            if (std::fabs(s - c[i * n + j]) > 1e-12 * (1.0 + std::fabs(s))) return false;
        }
    return true;
}

}  // namespace

int main() {
    // A: 3 x 4, B: 4 x 2, int32 offsets and indices, 0-based.
    std::vector<std::int32_t> a_rp{0, 2, 3, 5}, a_ci{0, 3, 1, 0, 2};
    std::vector<double> a_v{1.0, 2.0, 3.0, 4.0, 5.0};
    std::vector<std::int32_t> b_rp{0, 1, 3, 4, 5}, b_ci{1, 0, 1, 0, 1};
    std::vector<double> b_v{1.0, -1.0, 2.0, 0.5, 3.0};
    try {
        spgemm::handle h;
        auto a = spgemm::matrix::csr(3, 4, a_rp.data(), a_ci.data(), a_v.data());
        auto b = spgemm::matrix::csr(4, 2, b_rp.data(), b_ci.data(), b_v.data());

        // C with int64 offsets and int32 column indices.
        std::vector<std::int64_t> c_rp(4);
        auto plan = spgemm::plan::symbolic<std::int32_t>(h, a, b, c_rp.data());
        std::vector<std::int32_t> c_ci(static_cast<std::size_t>(plan.nnz()));
        std::vector<double> c_v(c_ci.size());
        for (int round = 0; round < 2; ++round) {
            plan.numeric(h, a, b, c_ci.data(), c_v.data());
            bool ok = same_as_dense_product(3, 4, 2, dense(3, 4, a_rp.data(), a_ci.data(), a_v.data()),
                                            dense(4, 2, b_rp.data(), b_ci.data(), b_v.data()),
                                            dense(3, 2, c_rp.data(), c_ci.data(), c_v.data()));
            if (!ok) {
                std::fprintf(stderr, "cpp_quickstart: round %d: C differs from the dense product\n",
                             round);
                return 1;
            }
            for (double &x : a_v) x *= 2.0;  // new values, same structure: reuse the plan
        }
        std::printf("cpp_quickstart: C = A*B has %lld entries, matches the dense product\n",
                    static_cast<long long>(plan.nnz()));

        // One-call product into library-owned arrays (int64 offsets and indices), read back
        // with their types checked; A's values back to those of the last numeric phase.
        for (double &x : a_v) x *= 0.5;
        auto c1 = spgemm::matrix::multiply<std::int64_t, std::int64_t>(h, a, b);
        const std::int64_t *c1_rp = nullptr, *c1_ci = nullptr;
        const double *c1_v = nullptr;
        c1.arrays(&c1_rp, &c1_ci, &c1_v);
        if (dense(3, 2, c1_rp, c1_ci, c1_v) != dense(3, 2, c_rp.data(), c_ci.data(), c_v.data())) {
            std::fprintf(stderr, "cpp_quickstart: one-call product differs from the two-phase one\n");
            return 1;
        }

        // Structure-only product of pattern matrices (no values): same structure as C.
        auto ap = spgemm::matrix::csr_pattern(3, 4, a_rp.data(), a_ci.data());
        auto bp = spgemm::matrix::csr_pattern(4, 2, b_rp.data(), b_ci.data());
        std::vector<std::int64_t> s_rp(4);
        auto sp = spgemm::plan::symbolic<std::int32_t>(h, ap, bp, s_rp.data());
        std::vector<std::int32_t> s_ci(static_cast<std::size_t>(sp.nnz()));
        sp.numeric_structure(h, ap, bp, s_ci.data());
        if (s_rp != c_rp || s_ci != c_ci) {
            std::fprintf(stderr, "cpp_quickstart: structure-only product differs\n");
            return 1;
        }
        std::printf("cpp_quickstart: one-call and structure-only products agree\n");

        // Errors become exceptions with the library's message: B has 4 rows, not 3.
        try {
            auto wrong = spgemm::matrix::csr(3, 2, a_rp.data(), a_ci.data(), a_v.data());
            (void)spgemm::plan::symbolic<std::int32_t>(h, a, wrong, c_rp.data());
            std::fprintf(stderr, "cpp_quickstart: a dimension mismatch was not reported\n");
            return 1;
        } catch (const spgemm::error &e) {
            if (e.status() != SPGEMM_STATUS_DIMENSION_MISMATCH) {
                std::fprintf(stderr, "cpp_quickstart: unexpected error: %s\n", e.what());
                return 1;
            }
            std::printf("cpp_quickstart: expected error caught: %s\n", e.what());
        }
    } catch (const spgemm::error &e) {
        std::fprintf(stderr, "cpp_quickstart: %s\n", e.what());
        return 1;
    }
    return 0;
}

// The C++ layer (spgemm.hpp) with std::complex values and transposed operands: a
// two-phase product op(A)*op(B) for every op pair with std::complex<double> and
// std::complex<float> against a dense product computed here, numeric reuse after new
// values, the one-call product with ops, spgemm::spmm with complex alpha and beta, and
// errors as spgemm::error (shapes, value types, the GPU backend). Values are small
// integers and halves, so every sum is exact and results compare with ==. Prints
// "N passed, M failed" like the C tests.
#include <complex>
#include <cstdint>
#include <cstdio>
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
        std::fprintf(stderr, "FAIL complex_cxx.cpp:%d: %s\n", line, what);
    }
}
#define CHECK(c) check((c), #c, __LINE__)

using spgemm::operation;

template <class T>
struct Dense {
    int rows = 0, cols = 0;
    std::vector<std::complex<T>> v;
    std::complex<T> at(int i, int j) const { return v[static_cast<std::size_t>(i * cols + j)]; }
};

// op(A)(i, j).
template <class T>
std::complex<T> op_at(const Dense<T> &a, operation op, int i, int j) {
    switch (op) {
    case operation::non_transpose: return a.at(i, j);
    case operation::transpose: return a.at(j, i);
    default: return std::conj(a.at(j, i));
    }
}
template <class T>
int op_rows(const Dense<T> &a, operation op) {
    return op == operation::non_transpose ? a.rows : a.cols;
}
template <class T>
int op_cols(const Dense<T> &a, operation op) {
    return op == operation::non_transpose ? a.cols : a.rows;
}

// A sparse pattern (about 40% of the entries, every third row empty) with values from
// `seed`; `round` > 0 gives other values on the same pattern.
template <class T>
Dense<T> pattern(int rows, int cols, int seed, int round) {
    Dense<T> d;
    d.rows = rows;
    d.cols = cols;
    d.v.assign(static_cast<std::size_t>(rows * cols), std::complex<T>(0, 0));
    for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) {
            if ((i * 5 + j * 3 + seed) % 5 < 2 && i % 3 != 2) {
                T re = static_cast<T>((i + j + seed + round) % 5) - 2;
                T im = static_cast<T>((2 * i + j * round + seed) % 4) * T(0.5) - 1;
                d.v[static_cast<std::size_t>(i * cols + j)] = std::complex<T>(re, im);
            }
        }
    }
    return d;
}

// CSR arrays (int64 offsets, int32 indices) of the pattern of `seed` (entries may be 0).
template <class T>
struct Csr {
    std::vector<std::int64_t> rp{0};
    std::vector<std::int32_t> ci;
    std::vector<std::complex<T>> v;
};

template <class T>
Csr<T> csr_of(const Dense<T> &d, int seed) {
    Csr<T> c;
    for (int i = 0; i < d.rows; ++i) {
        for (int j = 0; j < d.cols; ++j) {
            if ((i * 5 + j * 3 + seed) % 5 < 2 && i % 3 != 2) {
                c.ci.push_back(j);
                c.v.push_back(d.at(i, j));
            }
        }
        c.rp.push_back(static_cast<std::int64_t>(c.ci.size()));
    }
    return c;
}

// Whether sparse C (sorted rows) equals the dense op(A)*op(B).
template <class T>
bool matches(const Dense<T> &a, operation oa, const Dense<T> &b, operation ob,
             const std::int64_t *rp, const std::int32_t *ci, const std::complex<T> *v) {
    for (int i = 0; i < op_rows(a, oa); ++i) {
        for (int j = 0; j < op_cols(b, ob); ++j) {
            std::complex<T> want(0, 0), got(0, 0);
            for (int t = 0; t < op_cols(a, oa); ++t) want += op_at(a, oa, i, t) * op_at(b, ob, t, j);
            for (std::int64_t p = rp[i]; p < rp[i + 1]; ++p) {
                if (ci[p] == j) got = v[p];
            }
            if (got != want) return false;
        }
    }
    return true;
}

template <class T>
void two_phase(spgemm::handle &h, operation oa, operation ob) {
    Dense<T> a = pattern<T>(6, 4, 1, 0);
    int inner = op_cols(a, oa);
    Dense<T> b = ob == operation::non_transpose ? pattern<T>(inner, 5, 2, 0)
                                                : pattern<T>(5, inner, 2, 0);
    Csr<T> ac = csr_of(a, 1), bc = csr_of(b, 2);
    auto am = spgemm::matrix::csr(a.rows, a.cols, ac.rp.data(), ac.ci.data(), ac.v.data());
    auto bm = spgemm::matrix::csr(b.rows, b.cols, bc.rp.data(), bc.ci.data(), bc.v.data());
    std::vector<std::int64_t> rp(static_cast<std::size_t>(op_rows(a, oa) + 1));
    auto p = spgemm::plan::symbolic<std::int32_t>(h, oa, am, ob, bm, rp.data());
    std::vector<std::int32_t> ci(static_cast<std::size_t>(p.nnz()));
    std::vector<std::complex<T>> v(ci.size());
    for (int round = 0; round < 2; ++round) {
        if (round == 1) {
            // New values, same structure: the plan picks them up through its transposes.
            a = pattern<T>(a.rows, a.cols, 1, 3);
            b = pattern<T>(b.rows, b.cols, 2, 3);
            ac.v = csr_of(a, 1).v;
            bc.v = csr_of(b, 2).v;
            am = spgemm::matrix::csr(a.rows, a.cols, ac.rp.data(), ac.ci.data(), ac.v.data());
            bm = spgemm::matrix::csr(b.rows, b.cols, bc.rp.data(), bc.ci.data(), bc.v.data());
        }
        p.numeric(h, am, bm, ci.data(), v.data());
        CHECK(matches(a, oa, b, ob, rp.data(), ci.data(), v.data()));
    }
    auto c = spgemm::matrix::multiply<std::int64_t, std::int32_t>(h, oa, am, ob, bm);
    const std::int64_t *crp = nullptr;
    const std::int32_t *cci = nullptr;
    const std::complex<T> *cv = nullptr;
    c.arrays(&crp, &cci, &cv);
    CHECK(matches(a, oa, b, ob, crp, cci, cv));
}

template <class T>
void spmm_case(spgemm::handle &h, operation op, spgemm::layout order) {
    Dense<T> a = pattern<T>(5, 3, 4, 0);
    Csr<T> ac = csr_of(a, 4);
    auto am = spgemm::matrix::csr(a.rows, a.cols, ac.rp.data(), ac.ci.data(), ac.v.data());
    const int k = 3, xr = op_cols(a, op), yr = op_rows(a, op);
    const bool row = order == spgemm::layout::row_major;
    const std::int64_t ldx = row ? k : xr, ldy = row ? k : yr;
    std::vector<std::complex<T>> x(static_cast<std::size_t>(xr * k)), y(static_cast<std::size_t>(yr * k));
    for (std::size_t t = 0; t < x.size(); ++t) x[t] = {T(t % 5) - 2, T(t % 3) * T(0.5)};
    for (std::size_t t = 0; t < y.size(); ++t) y[t] = {T(t % 4), -T(1)};
    std::vector<std::complex<T>> y0 = y;
    const std::complex<T> alpha(T(0.5), T(-1)), beta(T(2), T(0.5));
    spgemm::spmm(h, op, alpha, am, order, k, x.data(), ldx, beta, y.data(), ldy);
    bool ok = true;
    for (int i = 0; i < yr; ++i) {
        for (int j = 0; j < k; ++j) {
            std::complex<T> s(0, 0);
            for (int t = 0; t < xr; ++t) {
                s += op_at(a, op, i, t) * x[static_cast<std::size_t>(row ? t * ldx + j : j * ldx + t)];
            }
            auto at = static_cast<std::size_t>(row ? i * ldy + j : j * ldy + i);
            ok = ok && y[at] == alpha * s + beta * y0[at];
        }
    }
    CHECK(ok);
}

void errors(spgemm::handle &h) {
    Dense<double> a = pattern<double>(6, 4, 1, 0);
    Csr<double> ac = csr_of(a, 1);
    auto am = spgemm::matrix::csr(a.rows, a.cols, ac.rp.data(), ac.ci.data(), ac.v.data());
    std::vector<std::int64_t> rp(8);
    // A*A with A 6 x 4 is not defined.
    try {
        spgemm::plan::symbolic<std::int32_t>(h, operation::non_transpose, am,
                                             operation::non_transpose, am, rp.data());
        CHECK(false);
    } catch (const spgemm::error &e) {
        CHECK(e.status() == SPGEMM_STATUS_DIMENSION_MISMATCH);
    }
    // Scalars of another type than the matrix's.
    std::vector<double> x(24, 1.0), y(24, 0.0);
    try {
        spgemm::spmm(h, operation::transpose, 1.0, am, spgemm::layout::row_major, 1, x.data(), 1,
                     0.0, y.data(), 1);
        CHECK(false);
    } catch (const spgemm::error &e) {
        CHECK(e.status() == SPGEMM_STATUS_TYPE_MISMATCH);
    }
    // The GPU backend has no complex kernels: NOT_SUPPORTED before any device work. It can
    // only be selected where a GPU is usable (else NO_DEVICE and the option is unchanged).
    spgemm::handle g;
    spgemm_status_t st = spgemm_set_backend(g.get(), SPGEMM_BACKEND_CUDA);
    CHECK(st == SPGEMM_STATUS_SUCCESS || st == SPGEMM_STATUS_NO_DEVICE);
    if (st == SPGEMM_STATUS_SUCCESS) {
        try {
            spgemm::matrix::multiply<std::int32_t, std::int32_t>(
                g, operation::conjugate_transpose, am, operation::non_transpose, am);
            CHECK(false);
        } catch (const spgemm::error &e) {
            CHECK(e.status() == SPGEMM_STATUS_NOT_SUPPORTED);
        }
    } else {
        std::printf("SKIPPED complex_cxx.cpp SPGEMM_BACKEND_CUDA refusal: no usable GPU\n");
    }
    // Under AUTO the same product runs on the CPU.
    spgemm::matrix c = spgemm::matrix::multiply<std::int32_t, std::int32_t>(
        g, operation::conjugate_transpose, am, operation::non_transpose, am);
    CHECK(c.info().nrows == a.cols && c.info().ncols == a.cols);
}

}  // namespace

int main() {
    try {
        spgemm::handle h(2);
        const operation ops[3] = {operation::non_transpose, operation::transpose,
                                  operation::conjugate_transpose};
        for (operation oa : ops) {
            for (operation ob : ops) {
                two_phase<double>(h, oa, ob);
                two_phase<float>(h, oa, ob);
            }
        }
        for (operation op : ops) {
            for (auto order : {spgemm::layout::row_major, spgemm::layout::col_major}) {
                spmm_case<double>(h, op, order);
                spmm_case<float>(h, op, order);
            }
        }
        errors(h);
        // The reproducible option changes nothing on the CPU: the same products again.
        h.set_reproducible(true);
        two_phase<double>(h, operation::non_transpose, operation::non_transpose);
        h.set_reproducible(false);
    } catch (const spgemm::error &e) {
        ++failed;
        std::fprintf(stderr, "FAIL complex_cxx.cpp: unexpected spgemm::error %d: %s\n",
                     static_cast<int>(e.status()), e.what());
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

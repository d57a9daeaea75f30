// The C++ layer's distributed classes under mpirun (any rank count): spgemm::dist_matrix,
// spgemm::dist_plan (RAII, collective destructors), a product checked against the exact
// result, plan info and stats, a values update, and an error thrown alike on every rank;
// spgemm::dist_spgemm_plan (C = A*A with reuse, P^T*A*P) against the exact results.
// The C API of MPI only (Open MPI's and MPICH's old C++ bindings do not build warning-free).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "spgemm.hpp"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = 0, np = 1, failed = 0, all_failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    {
        const std::int64_t n = 300, k = 5;
        std::int64_t first = me * n / np, nloc = (me + 1) * n / np - first;
        // A = 3 I (diagonal): Y = 3 X.
        std::vector<std::int32_t> rowptr(nloc + 1), cols(nloc);
        std::vector<double> vals(nloc, 3.0), x(nloc * k + 1), y(nloc * k + 1);
        for (std::int64_t i = 0; i < nloc; i++) {
            rowptr[i + 1] = static_cast<std::int32_t>(i + 1);
            cols[i] = static_cast<std::int32_t>(first + i);
            for (std::int64_t j = 0; j < k; j++) x[i * k + j] = double(first + i) + 0.5 * j;
        }
        spgemm::handle h(1);
        int comm = static_cast<int>(MPI_Comm_c2f(MPI_COMM_WORLD));
        auto a = spgemm::dist_matrix::csr(h, comm, n, n, first, nloc, rowptr.data(), cols.data(),
                                          vals.data());
        auto plan = spgemm::dist_plan::create(h, a, k, SPGEMM_LAYOUT_ROW_MAJOR,
                                              SPGEMM_DIST_ALG_SC2D);
        for (int round = 1; round <= 2; round++) {
            plan.spmm(h, 1.0, x.data(), k, 0.0, y.data(), k);
            for (std::int64_t i = 0; i < nloc * k; i++)
                if (std::fabs(y[i] - 3.0 * round * x[i]) > 1e-12) failed++;
            for (auto &v : vals) v *= 2.0;
            plan.update_values(h, a);
        }
        spgemm::dist_plan_info info = plan.info();
        spgemm::dist_stats stats = plan.last_stats();
        if (info.algorithm != SPGEMM_DIST_ALG_SC2D || info.grid_rows * info.grid_cols != np ||
            info.y_rows != nloc || stats.control_bytes <= 0)
            failed++;
        // k = -1 on the last rank only: every rank throws the same status.
        try {
            spgemm::dist_plan::create(h, a, me == np - 1 ? -1 : k);
            failed++;
        } catch (const spgemm::error &e) {
            if (e.status() != SPGEMM_STATUS_INVALID_VALUE) failed++;
        }
        // SpGEMM: C = A*A = 9 I, then with A's values doubled (the plan reused): 36 I.
        for (auto &v : vals) v = 3.0;
        spgemm::dist_csr<double> c;
        auto prod = spgemm::dist_spgemm_plan<double>::product(h, a, a, c);
        for (int round = 1; round <= 2; round++) {
            prod.numeric(h, a, a, c);
            double want = round == 1 ? 9.0 : 36.0;
            if (c.row_start != first || c.row_offsets.size() != std::size_t(nloc + 1)) failed++;
            for (std::int64_t i = 0; i < nloc; i++)
                if (c.row_offsets[i + 1] - c.row_offsets[i] != 1 ||
                    c.col_indices[c.row_offsets[i]] != first + i ||
                    c.values[c.row_offsets[i]] != want)
                    failed++;
            for (auto &v : vals) v *= 2.0;
        }
        if (prod.info().global_nnz != n || prod.info().operands != 2) failed++;
        // P^T A P with P = A (square): 27 I... of the current values (12 I): 1728 I.
        spgemm::dist_csr<double> rap;
        auto ptap = spgemm::dist_spgemm_plan<double>::rap(h, a, a, a, rap,
                                                         spgemm::operation::transpose);
        ptap.numeric(h, a, a, a, rap);
        for (std::int64_t i = 0; i < nloc; i++)
            if (rap.values.size() != std::size_t(nloc) || rap.values[i] != 1728.0) failed++;
    }  // destructors: collective, in the same order on every rank
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) std::printf("dist_cxx on %d ranks: %s\n", np, all_failed ? "FAILED" : "ok");
    MPI_Finalize();
    return all_failed ? 1 : 0;
}

#!/usr/bin/env bash
# The distributed SpMM checks (src/dist) under mpirun: builds with the `mpi` feature and
# runs tests/dist_mpi.rs, which launches spgemm-dist-check at 1, 2, 3 and 4 ranks and at 4
# ranks on a 2 x 2 grid; each run compares every algorithm with the serial SpMM and checks
# that bad input gives the same status on every rank.
#   scripts/dist_check.sh            (needs Open MPI: openmpi-bin, libopenmpi-dev, and
#                                      libclang-dev for the bindings)
# MPI settings, each overridable from the environment:
#   - as root (CI), mpirun needs --allow-run-as-root (the test adds it when uid is 0);
#   - --oversubscribe: more ranks than cores;
#   - OMPI_MCA_osc=^ucx: Open MPI picks its UCX one-sided component first, and without a
#     UCX network (containers, laptops) MPI_Win_create then fails; the RDMA component
#     over shared memory works;
#   - OMPI_MCA_btl_vader_single_copy_mechanism=none: the shared-memory transport's
#     single-copy mode (CMA) needs ptrace rights that containers often lack.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE"
if ! command -v mpirun >/dev/null; then
    echo "dist_check: mpirun not found (apt-get install openmpi-bin libopenmpi-dev libclang-dev)" >&2
    exit 1
fi
export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
# Its own target directory (as `make dist-check`): the library built with the feature and
# the one built without it do not replace each other.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/mpi}
cargo test --release --features mpi --test dist_mpi -- --nocapture

#!/usr/bin/env bash
# Distributed SpMM Y = A*X: libspgemm (spgemm-bench dist-spmm, every algorithm and AUTO)
# against PETSc 3.18's MatMatMult of an MPIAIJ and an MPIDENSE matrix (build/petsc_dist spmm,
# make petsc-driver) in one run, on the same inputs, distributions and X, interleaved per
# configuration so that machine noise hits both; plus the serial `spgemm-bench spmm` of each
# input for the sums. Appends JSON lines to OUT, then prints the comparison
# (scripts/dist_spmm_report.py).
#   scripts/bench_dist_spmm.sh [OUT.jsonl]   (default perf-results/dist-spmm-<date>.jsonl)
# Environment: MATDIR (.mtx inputs, default /work/data/dist-matrices, written by
# `spgemm-bench gen MATDIR --only sa_poisson,sa_elast`), INPUTS (stems in MATDIR or GENDIR,
# "sa_poisson_A sa_elast_A rmat_16"; one missing from both is generated into GENDIR with
# `spgemm-bench gen GENDIR --only NAME`), GENDIR (build/dist-spmm-inputs), NPS ("1 2 4"),
# KS ("1,8,64"), ALGOS ("auto 1.5d 1.5d-c1 2d-a 2d-c 2d-a-async 2d-c-async 1d-halo"; 1.5d lets
# the model pick c, 1.5d-cN forces c = N: c = 1 is the 1D row algorithm), LAYOUT (col: PETSc's
# MATDENSE is column-major), REPS (5), TRIALS (2, alternating the libraries; best kept),
# BENCH (target/mpi/release/spgemm-bench, built with --features mpi), DRIVER.
# One thread per rank for both, OMPI_MCA_mpi_yield_when_idle=1 (waiting ranks do not spin
# on the cores the others compute on).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-perf-results/dist-spmm-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
MATDIR=${MATDIR:-/work/data/dist-matrices}
GENDIR=${GENDIR:-build/dist-spmm-inputs}
INPUTS=${INPUTS:-"sa_poisson_A sa_elast_A rmat_16"}
NPS=${NPS:-"1 2 4"}
KS=${KS:-"1,8,64"}
ALGOS=${ALGOS:-"auto 1.5d 1.5d-c1 2d-a 2d-c 2d-a-async 2d-c-async 1d-halo"}
LAYOUT=${LAYOUT:-col}
REPS=${REPS:-5}
TRIALS=${TRIALS:-2}
BENCH=${BENCH:-target/mpi/release/spgemm-bench}
DRIVER=${DRIVER:-build/petsc_dist}
[ -x "$BENCH" ] || { echo "build $BENCH: CARGO_TARGET_DIR=target/mpi cargo build --release --features mpi --bin spgemm-bench" >&2; exit 1; }
[ -x "$DRIVER" ] || nice -n 10 make --no-print-directory petsc-driver >&2 || exit 1
mkdir -p "$(dirname "$OUT")" "$GENDIR"
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMP_NUM_THREADS=1
MPIRUN=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
tag() { sed "s/^{/{\"trial\":$1,\"load1\":$(cut -d' ' -f1 /proc/loadavg),/"; }
echo "# $(date -u +%FT%TZ) inputs=[$INPUTS] nps=[$NPS] ks=$KS algos=[$ALGOS] layout=$LAYOUT reps=$REPS trials=$TRIALS load=$(cut -d' ' -f1 /proc/loadavg)" >&2
for name in $INPUTS; do
  f="$MATDIR/$name.mtx"
  [ -f "$f" ] || f="$GENDIR/$name.mtx"
  [ -f "$f" ] || "$BENCH" gen "$GENDIR" --only "$name" >&2 || exit 1
  # The serial SpMM of the same X: the sums every distributed line is compared with.
  "$BENCH" spmm --a "$f" --k "$KS" --layout "$LAYOUT" --alg mm --threads 1 --reps 1 \
    | grep '^{' | sed 's/^{/{"mode":"serial-spmm",/' | tag 0 >>"$OUT"
  for np in $NPS; do
    for t in $(seq 1 "$TRIALS"); do
      for k in ${KS//,/ }; do
        timeout 900 "${MPIRUN[@]}" -np "$np" "$DRIVER" spmm "$f" "$k" --reps "$REPS" 2>/dev/null \
          | grep '^{' | tag "$t" >>"$OUT"
      done
      for a in $ALGOS; do
        # NAME[-async|-cC]: --async, or sA-1.5D with the replication factor C forced.
        case $a in
          *-async) args=(--algo "${a%-async}" --async) ;;
          1.5d-c*) args=(--algo 1.5d --c "${a#1.5d-c}") ;;
          *) args=(--algo "$a") ;;
        esac
        timeout 900 "${MPIRUN[@]}" -np "$np" "$BENCH" dist-spmm --a "$f" --k "$KS" "${args[@]}" \
          --layout "$LAYOUT" --reps "$REPS" --threads 1 2>/dev/null | grep '^{' | tag "$t" >>"$OUT"
      done
    done
    echo "  $name np=$np done" >&2
  done
done
python3 scripts/dist_spmm_report.py "$OUT"

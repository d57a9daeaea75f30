#!/usr/bin/env bash
# Distributed SpGEMM: libspgemm (spgemm-bench dist-spgemm) against PETSc 3.18's MatMatMult /
# MatPtAP / MatMatMatMult (build/petsc_dist, make petsc-driver) in one run, on the same
# inputs and distributions, interleaved per configuration so that machine noise hits both;
# appends JSON lines to OUT, then prints the comparison (scripts/dist_spgemm_report.py).
#   scripts/bench_dist_spgemm.sh [OUT.jsonl]   (default perf-results/dist-spgemm-<date>.jsonl)
# Environment: MATDIR (the .mtx inputs, written by `spgemm-bench gen MATDIR --only
# sa_poisson,sa_elast`; default /work/data/dist-matrices), NPS ("1 2 4"), ALGS (PETSc's,
# "default scalable"), REPS (5), TRIALS (2: each configuration's runs repeated, alternating
# the libraries), BENCH (target/mpi/release/spgemm-bench, built with --features mpi).
# Both libraries run one thread per rank with OMPI_MCA_mpi_yield_when_idle=1 (ranks that
# wait do not spin on the cores the others compute on).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-perf-results/dist-spgemm-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
MATDIR=${MATDIR:-/work/data/dist-matrices}
NPS=${NPS:-"1 2 4"}
ALGS=${ALGS:-"default scalable"}
REPS=${REPS:-5}
TRIALS=${TRIALS:-2}
BENCH=${BENCH:-target/mpi/release/spgemm-bench}
DRIVER=${DRIVER:-build/petsc_dist}
[ -x "$BENCH" ] || { echo "build $BENCH: CARGO_TARGET_DIR=target/mpi cargo build --release --features mpi --bin spgemm-bench" >&2; exit 1; }
[ -x "$DRIVER" ] || nice -n 10 make --no-print-directory petsc-driver >&2 || exit 1
mkdir -p "$(dirname "$OUT")"
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMP_NUM_THREADS=1
MPIRUN=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
m() { echo "$MATDIR/$1.mtx"; }
# mode  petsc-args  ours-args
CASES=(
  "mm|mm $(m sa_poisson_A) $(m sa_poisson_P)|--a $(m sa_poisson_A) --b $(m sa_poisson_P)"
  "ptap|ptap $(m sa_poisson_A) $(m sa_poisson_P)|--ptap $(m sa_poisson_A),$(m sa_poisson_P)"
  "rap|rap $(m sa_poisson_R) $(m sa_poisson_A) $(m sa_poisson_P)|--rap $(m sa_poisson_R),$(m sa_poisson_A),$(m sa_poisson_P)"
  "mm|mm $(m sa_elast_A) $(m sa_elast_P)|--a $(m sa_elast_A) --b $(m sa_elast_P)"
  "ptap|ptap $(m sa_elast_A) $(m sa_elast_P)|--ptap $(m sa_elast_A),$(m sa_elast_P)"
  "rap|rap $(m sa_elast_R) $(m sa_elast_A) $(m sa_elast_P)|--rap $(m sa_elast_R),$(m sa_elast_A),$(m sa_elast_P)"
)
echo "# $(date -u +%FT%TZ) nps=[$NPS] algs=[$ALGS] reps=$REPS trials=$TRIALS load=$(cut -d' ' -f1 /proc/loadavg)" >&2
for c in "${CASES[@]}"; do
  IFS='|' read -r mode pargs oargs <<<"$c"
  for np in $NPS; do
    for t in $(seq 1 "$TRIALS"); do
      # shellcheck disable=SC2086
      timeout 900 "${MPIRUN[@]}" -np "$np" "$BENCH" dist-spgemm $oargs --reps "$REPS" 2>/dev/null \
        | grep '^{' | sed "s/^{/{\"trial\":$t,\"load1\":$(cut -d' ' -f1 /proc/loadavg),/" >>"$OUT"
      for alg in $ALGS; do
        # shellcheck disable=SC2086
        timeout 900 "${MPIRUN[@]}" -np "$np" "$DRIVER" $pargs --reps "$REPS" --alg "$alg" 2>/dev/null \
          | grep '^{' | sed "s/^{/{\"trial\":$t,\"load1\":$(cut -d' ' -f1 /proc/loadavg),/" >>"$OUT"
      done
    done
    echo "  $mode np=$np done" >&2
  done
done
python3 scripts/dist_spgemm_report.py "$OUT"

#!/usr/bin/env bash
# PETSc peer of the distributed benchmarks (spgemm-bench dist-spgemm / dist-spmm): runs
# build/petsc_dist (make petsc-driver) over inputs x rank counts x algorithms and APPENDS one
# JSON line per run to OUT.
#   scripts/bench_dist_petsc.sh [OUT.jsonl]      (default perf-results/dist_petsc.jsonl)
# Environment:
#   MATDIR   folder of the .mtx inputs (/work/data/dist-matrices; written by
#            `target/release/spgemm-bench gen MATDIR --only sa_poisson,sa_elast`)
#   CASES    space-separated MODE:IN[,IN...] (IN: a stem in MATDIR, a path, or A for B = A);
#            spmm cases run once per K of KLIST. Default: C = A*P, P^T*A*P, R*A*P and
#            A*X on sa_poisson and sa_elast.
#   NPS      rank counts ("1 2 4"); np above the core count runs oversubscribed
#   ALGS     MatProduct algorithms for mm/ptap/rap/atb ("default scalable")
#   KLIST    dense widths for spmm ("8 32")
#   REPS     repetitions per timing, medians reported (5)
#   TIMEOUT  seconds per run (1200): a run past it is killed and recorded as an error line
#   MPIRUN_FLAGS  extra mpirun flags ("--bind-to none": on a shared machine no rank is
#            pinned to a core someone else is using)
#   DRIVER   the driver (build/petsc_dist; built with `make petsc-driver` when missing)
# OMPI_MCA_* variables pass through to mpirun. On a loaded machine, ranks at np <= cores
# busy-poll and starve each other: OMPI_MCA_mpi_yield_when_idle=1 (the setting OpenMPI takes
# by itself when oversubscribed) made np 2 two to three times faster at load 6-8 on 2 cores;
# give the libspgemm runs the same setting when comparing. The value is on each line
# (ompi_yield_when_idle: "default" when unset).
# Each line gets load1_before, the 1-minute load average when the run started.
# Errors of a run become a line {"lib":"petsc","error":...} with the run's mode, np, alg
# and inputs, and the script goes on with the next run.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-perf-results/dist_petsc.jsonl}
MATDIR=${MATDIR:-/work/data/dist-matrices}
NPS=${NPS:-"1 2 4"}
ALGS=${ALGS:-"default scalable"}
KLIST=${KLIST:-"8 32"}
REPS=${REPS:-5}
TIMEOUT=${TIMEOUT:-1200}
MPIRUN_FLAGS=${MPIRUN_FLAGS:-"--bind-to none"}
DRIVER=${DRIVER:-build/petsc_dist}
CASES=${CASES:-"mm:sa_poisson_A,sa_poisson_P ptap:sa_poisson_A,sa_poisson_P rap:sa_poisson_R,sa_poisson_A,sa_poisson_P spmm:sa_poisson_A
mm:sa_elast_A,sa_elast_P ptap:sa_elast_A,sa_elast_P rap:sa_elast_R,sa_elast_A,sa_elast_P spmm:sa_elast_A"}

if [ ! -x "$DRIVER" ]; then
  nice -n 10 make --no-print-directory petsc-driver >&2 || exit 1
fi
mkdir -p "$(dirname "$OUT")"

# OpenMPI: more ranks than cores, root, no UCX one-sided, no CMA (fails in containers).
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
MPIRUN=(mpirun --oversubscribe)
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  MPIRUN+=(--allow-run-as-root)
fi
# shellcheck disable=SC2206
MPIRUN+=($MPIRUN_FLAGS)

resolve() { # stem | path | A  ->  path
  case "$1" in
    A) echo A ;;
    */* | *.mtx) echo "$1" ;;
    *) echo "$MATDIR/$1.mtx" ;;
  esac
}

json_esc() { local s=${1//\\/\\\\}; printf '%s' "${s//\"/\\\"}"; }

echo "# $(date -u +%FT%TZ) petsc_dist nps=[$NPS] algs=[$ALGS] k=[$KLIST] reps=$REPS out=$OUT" >&2
nrun=0
nerr=0
run_one() { # np mode alg files... (for spmm the last word is K)
  local np=$1 mode=$2 alg=$3
  shift 3
  local tmp rc ins="" f K=""
  [ "$mode" = spmm ] && K=$2
  local -a inputs=("$@")
  [ "$mode" = spmm ] && inputs=("$1")
  for f in "${inputs[@]}"; do ins+="${ins:+,}\"$(json_esc "$f")\""; done
  tmp=$(mktemp)
  # the 1-minute load average before the run, on each line: the machine may be shared
  local load
  load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo null)
  local yield="\"ompi_yield_when_idle\":\"${OMPI_MCA_mpi_yield_when_idle:-default}\""
  echo "== np=$np $mode $alg $* (load $load)" >&2
  timeout "$TIMEOUT" "${MPIRUN[@]}" -np "$np" "$DRIVER" "$mode" "$@" --reps "$REPS" --alg "$alg" \
    > "$tmp" 2> "$tmp.err"
  rc=$?
  nrun=$((nrun + 1))
  local ctx="\"load1_before\":$load,$yield,\"mode\":\"$mode\",\"alg\":\"$(json_esc "$alg")\",\"np\":$np,\"inputs\":[$ins]${K:+,\"K\":$K},\"rc\":$rc"
  if grep -q '^{"lib":"petsc","petsc_version"' "$tmp" && [ "$rc" = 0 ]; then
    grep '^{"lib":"petsc","petsc_version"' "$tmp" | sed "s/}\$/,\"load1_before\":$load,$yield}/" | tee -a "$OUT"
  else
    nerr=$((nerr + 1))
    if grep -q '^{"lib":"petsc","error"' "$tmp"; then
      grep -m1 '^{"lib":"petsc","error"' "$tmp" | sed "s|^{\"lib\":\"petsc\",|{\"lib\":\"petsc\",$ctx,|" | tee -a "$OUT"
    else
      local why="driver exited with status $rc and no JSON line"
      [ "$rc" = 124 ] && why="killed after TIMEOUT=${TIMEOUT}s"
      echo "{\"lib\":\"petsc\",$ctx,\"error\":\"$why\"}" | tee -a "$OUT"
    fi
    tail -n 5 "$tmp.err" | sed 's/^/   stderr: /' >&2
  fi
  rm -f "$tmp" "$tmp.err"
}

for c in $CASES; do
  mode=${c%%:*}
  IFS=, read -r -a stems <<< "${c#*:}"
  files=()
  for s in "${stems[@]}"; do files+=("$(resolve "$s")"); done
  missing=""
  for f in "${files[@]}"; do [ "$f" = A ] || [ -f "$f" ] || missing+=" $f"; done
  for np in $NPS; do
    if [ "$mode" = spmm ]; then
      for k in $KLIST; do
        if [ -n "$missing" ]; then
          echo "{\"lib\":\"petsc\",\"mode\":\"spmm\",\"np\":$np,\"K\":$k,\"error\":\"missing input:$missing\"}" | tee -a "$OUT"
          continue
        fi
        run_one "$np" spmm default "${files[0]}" "$k"
      done
    else
      for alg in $ALGS; do
        if [ -n "$missing" ]; then
          echo "{\"lib\":\"petsc\",\"mode\":\"$mode\",\"alg\":\"$alg\",\"np\":$np,\"error\":\"missing input:$missing\"}" | tee -a "$OUT"
          continue
        fi
        run_one "$np" "$mode" "$alg" "${files[@]}"
      done
    fi
  done
done
echo "# $nrun runs, $nerr errors; appended to $OUT" >&2
[ "$nerr" = 0 ]

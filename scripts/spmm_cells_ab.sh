#!/usr/bin/env bash
# SpMM cells at parity with MKL, measured by alternation: for each cell, ROUNDS rounds of MKL
# (mkl_sparse_d_mm, best of mm / mm_opt) and libspgemm (best of mm / mm_opt), the order swapped
# every round, and the ratio MKL time / our time taken within the round; prints the ratios and
# their median. The full benchmark (bench_spmm.sh) runs every k of a matrix for MKL and then for
# us, so a cell's two sides are tens of seconds apart; here they are a few seconds apart.
#   scripts/spmm_cells_ab.sh ROUNDS MATRIX:row|col:K ...
#   e.g. scripts/spmm_cells_ab.sh 6 er_uniform_200k:col:1 lap3d_7pt_64:row:1
# Environment: THREADS (2), REPS (30), MATDIR (/work/data/matrices), ANCHORS (/work/anchors/bin).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:?usage: spmm_cells_ab.sh ROUNDS MATRIX:row|col:K ...}
shift
THREADS=${THREADS:-2}
REPS=${REPS:-30}
MATDIR=${MATDIR:-/work/data/matrices}
ANCHORS=${ANCHORS:-/work/anchors/bin}
BENCH=target/release/spgemm-bench
cargo build --release --bins >&2

best_of() { # layout: minimum total_s over the JSON lines on stdin with that layout (any if "")
  python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
print(min(r["total_s"] for r in rows if sys.argv[1] in ("", r.get("layout"))))' "$1"
}

for cell in "$@"; do
  IFS=: read -r m layout k <<<"$cell"
  f="$MATDIR/$m.mtx"
  ratios=()
  for r in $(seq "$ROUNDS"); do
    order="mkl ours"
    [ $((r % 2)) = 0 ] && order="ours mkl"
    for who in $order; do
      if [ "$who" = mkl ]; then
        t_mkl=$(MKL_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS "$ANCHORS/mkl_spmm" "$f" "$REPS" "$k" | best_of "$layout")
      else
        t_ours=$("$BENCH" spmm --a "$f" --k "$k" --layout "$layout" --threads "$THREADS" --reps "$REPS" --alg both | best_of "")
      fi
    done
    ratios+=("$(python3 -c "print('%.2f' % ($t_mkl / $t_ours))")")
  done
  med=$(python3 -c 'import statistics, sys; print("%.2f" % statistics.median(map(float, sys.argv[1:])))' "${ratios[@]}")
  echo "$m $layout k=$k threads=$THREADS ratios (MKL/ours): ${ratios[*]} median $med"
done

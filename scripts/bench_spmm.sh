#!/usr/bin/env bash
# SpMM benchmark: libspgemm beside MKL (mkl_sparse_d_mm) and STREAM, all in the same run.
#   scripts/bench_spmm.sh [OUT.jsonl]        then: python3 scripts/report_spmm.py OUT.jsonl
# Environment: THREADS (2), REPS (5), KLIST (1,8,16,32,64,128), MATS (space-separated stems),
#   MATDIR (/work/data/matrices), ANCHORS (/work/anchors/bin), STREAM_N (100000000).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-perf-results/spmm.jsonl}
THREADS=${THREADS:-2}
REPS=${REPS:-5}
KLIST=${KLIST:-1,8,16,32,64,128}
MATDIR=${MATDIR:-/work/data/matrices}
ANCHORS=${ANCHORS:-/work/anchors/bin}
STREAM_N=${STREAM_N:-100000000}
MATS=${MATS:-"lap3d_7pt_64 lap3d_27pt_42 elast2d_q1_196 elast3d_p1_22 banded_500k_7 sa_poisson_A sa_elast_A er_uniform_200k rmat_16 rect_A_200kx2k"}

mkdir -p "$(dirname "$OUT")"
: > "$OUT"
cargo build --release --bins >&2
# The SpMM mode lives in src/bin/spgemm-bench/spmm_mode.rs.
BENCH=target/release/spgemm-bench
echo "# $(date -u +%FT%TZ) threads=$THREADS reps=$REPS k=$KLIST bench=$BENCH" >&2

run_stream() {
  OMP_NUM_THREADS=$THREADS "$ANCHORS/stream" "$STREAM_N" 10 | grep '^{' >> "$OUT"
}
run_stream
for m in $MATS; do
  f="$MATDIR/$m.mtx"
  [ -f "$f" ] || { echo "skip $m (no $f)" >&2; continue; }
  echo "== $m" >&2
  MKL_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS "$ANCHORS/mkl_spmm" "$f" "$REPS" "$KLIST" | grep '^{' >> "$OUT"
  "$BENCH" spmm --a "$f" --k "$KLIST" --layout both --threads "$THREADS" --reps "$REPS" --alg both >> "$OUT"
done
run_stream
echo "wrote $OUT" >&2

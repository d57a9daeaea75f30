#!/usr/bin/env bash
# GPU checks in one command, on a machine with an NVIDIA GPU: the GPU test suite and a
# small SpGEMM benchmark against cuSPARSE (CuPy), results as JSON lines.
#
#   scripts/gpu_check.sh [matrix-dir] [reps]
#
# Builds with cargo when it is installed; otherwise runs prebuilt binaries from .devbin/
# (cuda_gpu = the test binary of tests/cuda_gpu.rs, cuda_bench = examples/cuda_bench.rs).
# Matrices: *.mtx or *.mtx.gz in matrix-dir (default /work/data/matrices or .devbin/mtx).
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR=${OUT:-target/gpu-check}
mkdir -p "$OUTDIR"
reps=${2:-5}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

# NVRTC: the loader path, else a CUDA toolkit, else a Python wheel (nvidia-cuda-nvrtc).
if ! ldconfig -p | grep -q 'libnvrtc\.so'; then
  for d in /usr/local/cuda/lib64 $(python3 -c 'import site,glob; print(" ".join(glob.glob(site.getsitepackages()[0]+"/nvidia/cu*/lib")+glob.glob(site.getsitepackages()[0]+"/nvidia/cuda_nvrtc/lib")))' 2>/dev/null); do
    if ls "$d"/libnvrtc.so* >/dev/null 2>&1; then export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break; fi
  done
fi
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"

if command -v cargo >/dev/null 2>&1; then
  echo "== cargo build --release"
  cargo build --release 2>&1 | tail -2
  cargo build --release --example cuda_bench 2>&1 | tail -1
  TEST="cargo test --release --test cuda_gpu -- --nocapture --test-threads=1"
  BENCH=target/release/examples/cuda_bench
else
  echo "cargo not found: using prebuilt .devbin binaries"
  TEST=".devbin/cuda_gpu --nocapture --test-threads=1"
  BENCH=.devbin/cuda_bench
fi

echo "== GPU test suite: $TEST"
$TEST 2>&1 | tee "$OUTDIR/gpu_tests.log"
test_rc=${PIPESTATUS[0]}

dir=${1:-}
if [ -z "$dir" ]; then
  if [ -d /work/data/matrices ]; then dir=/work/data/matrices; else dir=.devbin/mtx; fi
fi
tmp=${TMPDIR:-/tmp}/spgemm-mtx
mkdir -p "$tmp"
get() {  # path of an uncompressed copy of matrix $1
  if [ -f "$dir/$1.mtx" ]; then echo "$dir/$1.mtx"; return; fi
  if [ -f "$dir/$1.mtx.gz" ]; then
    [ -f "$tmp/$1.mtx" ] || gunzip -c "$dir/$1.mtx.gz" > "$tmp/$1.mtx"
    echo "$tmp/$1.mtx"; return
  fi
}
echo "== benchmark (reps $reps): libspgemm cuda / cpu, cuSPARSE via CuPy"
: > "$OUTDIR/bench.jsonl"
for p in lap3d_7pt_64:A lap3d_27pt_42:A er_uniform_200k:A rmat_16:A elast3d_p1_22:A sa_poisson_A:sa_poisson_P; do
  an=${p%%:*}; bn=${p##*:}
  a=$(get "$an"); [ -n "$a" ] || { echo "skip $an (not found)"; continue; }
  if [ "$bn" = A ]; then b=A; else b=$(get "$bn"); [ -n "$b" ] || continue; fi
  $BENCH "$a" "$b" "$reps" 2>&1 | tee -a "$OUTDIR/bench.jsonl"
  python3 scripts/cusparse_bench.py "$a" "$b" "$reps" 2>&1 | tee -a "$OUTDIR/bench.jsonl"
done
exit "$test_rc"

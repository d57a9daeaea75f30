#!/usr/bin/env bash
# GPU checks in one command, on a machine with an NVIDIA GPU: the GPU test suite and a
# small SpGEMM benchmark against cuSPARSE (CuPy), results as JSON lines.
#
#   scripts/gpu_check.sh [matrix-dir] [reps]
#
# Builds with cargo when it is installed; otherwise runs prebuilt binaries from .devbin/
# (cuda_gpu = the GPU tests in the unit-test binary, src/unit_tests/cuda_gpu.rs; cuda_bench = examples/cuda_bench.rs).
# Matrices: *.mtx or *.mtx.gz and products.txt in matrix-dir (default /work/data/matrices,
# else generated into $TMPDIR/spgemm-gen). Knobs: MODES (cuda_bench modes), ONLY (regex of
# product labels), NO_TESTS=1, TESTS (test-name filter).
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
# Libraries the prebuilt binaries link to that a bare image may lack (libhwloc).
[ -d .devbin/lib ] && export LD_LIBRARY_PATH="$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"

if command -v cargo >/dev/null 2>&1; then
  echo "== cargo build --release"
  cargo build --release 2>&1 | tail -2
  cargo build --release --example cuda_bench 2>&1 | tail -1
  TEST="cargo test --release --lib unit_tests::cuda_gpu -- --nocapture --test-threads=1"
  BENCH=target/release/examples/cuda_bench
else
  echo "cargo not found: using prebuilt .devbin binaries"
  TEST=".devbin/cuda_gpu --nocapture --test-threads=1 ${TESTS:-}"
  BENCH=.devbin/cuda_bench
fi

test_rc=0
if [ -z "${NO_TESTS:-}" ]; then
  echo "== GPU test suite: $TEST"
  $TEST 2>&1 | tee "$OUTDIR/gpu_tests.log"
  test_rc=${PIPESTATUS[0]}
fi

dir=${1:-}
if [ -z "$dir" ]; then
  if [ -d /work/data/matrices ]; then dir=/work/data/matrices; else dir=${TMPDIR:-/tmp}/spgemm-gen; fi
fi
# No matrices here (the device machine): generate them with the anchors' generator
# (deterministic, byte-identical files; needs numpy, scipy and pyamg, which may come as a
# wheel in .devbin/whl).
if [ ! -f "$dir/products.txt" ]; then
  gen=${GEN:-.devbin/gen_matrices.py}
  if ! python3 -c 'import pyamg' 2>/dev/null && ls .devbin/whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devbin/whl/*.whl \
      && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  fi
  echo "== generating matrices into $dir with $gen"
  t0=$(date +%s)
  python3 "$gen" "$dir" | grep -E 'total|s$' | tail -3
  echo "generated in $(( $(date +%s) - t0 )) s"
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
modes=${MODES:-host,device,cpu}
echo "== benchmark (reps $reps, modes $modes): libspgemm cuda / cpu, cuSPARSE via CuPy"
: > "$OUTDIR/bench.jsonl"
while read -r label an bn; do
  [ -n "${ONLY:-}" ] && ! [[ $label =~ $ONLY ]] && continue
  a=$(get "$an"); [ -n "$a" ] || { echo "skip $an (not found)"; continue; }
  if [ "$bn" = A ]; then b=A; else b=$(get "$bn"); [ -n "$b" ] || continue; fi
  echo "-- $label"
  timeout 120 $BENCH "$a" "$b" "$reps" 0 "$modes" 2>&1 | grep '^{' | tee -a "$OUTDIR/bench.jsonl"
  timeout 120 python3 scripts/cusparse_bench.py "$a" "$b" "$reps" > "$tmp/cusparse.out" 2>&1
  rc=$?
  if grep -q '^{' "$tmp/cusparse.out"; then
    grep '^{' "$tmp/cusparse.out" | tee -a "$OUTDIR/bench.jsonl"
  else  # keep why cuSPARSE gave no result (out of memory, time limit) in the log
    echo "cuSPARSE gave no result for $label (exit $rc):"; tail -3 "$tmp/cusparse.out"
  fi
done < "$dir/products.txt"
exit "$test_rc"

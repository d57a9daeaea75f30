#!/usr/bin/env bash
# GPU checks in one command (at most 10 minutes), on a machine with an NVIDIA GPU:
#   1. the GPU test suite (src/unit_tests/cuda_gpu.rs);
#   2. a benchmark against cuSPARSE (CuPy) in the same run: JSON lines in bench.jsonl;
#   3. the first product of a new process with a cold and a warm kernel cache;
#   4. the GPU test suite under compute-sanitizer memcheck, racecheck, initcheck and
#      synccheck (in parallel, one log each; a summary line per tool).
#
#   scripts/gpu_check.sh [matrix-dir] [reps]
#
# Builds with cargo when it is installed; otherwise runs prebuilt binaries from .devbin/
# (cuda_gpu = the unit-test binary, cuda_bench = examples/cuda_bench.rs, spgemm-bench).
# Matrices: *.mtx and products.txt in matrix-dir; without one, `spgemm-bench gen` writes
# GEN_GROUPS (default: the irregular classes, sa_poisson, sa_elast, elast3d, lap3d_7pt).
# Knobs: MODES (cuda_bench modes), ONLY (regex of product labels), NO_TESTS=1,
# NO_BENCH=1, SANITIZE (tools, default "memcheck racecheck initcheck synccheck"; "" none),
# SAN_TIMEOUT (seconds per tool, default 240), TESTS (test-name filter), TIMING (regex of
# product labels whose phase and bin times go to timing.log), TEST_TIMEOUT (seconds for the
# suite, default 300), BENCH_TIMEOUT (seconds per product and binary, default 150),
# BASELINE (a second cuda_bench, e.g. built from the previous commit: its device-resident
# lines carry "build":"baseline", so an A/B shares the run, the device and cuSPARSE).
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

FILTER=${TESTS:-unit_tests::cuda_gpu}
if command -v cargo >/dev/null 2>&1; then
  echo "== cargo build --release"
  cargo test --release --no-run 2>&1 | tail -1
  cargo build --release --example cuda_bench 2>&1 | tail -1
  TESTBIN=$(ls -t target/release/deps/spgemm-* | grep -v '\.d$' | head -1)
  BENCH=target/release/examples/cuda_bench
  GENBIN=target/release/spgemm-bench
else
  echo "cargo not found: using prebuilt .devbin binaries"
  TESTBIN=.devbin/cuda_gpu
  BENCH=.devbin/cuda_bench
  GENBIN=.devbin/spgemm-bench
fi
TEST="$TESTBIN $FILTER --nocapture --test-threads=1"

test_rc=0
if [ -z "${NO_TESTS:-}" ]; then
  echo "== GPU test suite: $TEST"
  t0=$(date +%s)
  timeout "${TEST_TIMEOUT:-300}" $TEST > "$OUTDIR/gpu_tests.log" 2>&1
  test_rc=$?
  grep -E 'SKIPPED|test result|panicked|FAILED|first product|reproducible|^test ' "$OUTDIR/gpu_tests.log"
  echo "GPU test suite: exit $test_rc in $(( $(date +%s) - t0 )) s"
fi

dir=${1:-}
[ -n "$dir" ] || dir=${TMPDIR:-/tmp}/spgemm-gen
if [ -z "${NO_BENCH:-}" ]; then
  if [ ! -f "$dir/products.txt" ]; then
    groups=${GEN_GROUPS:-irregular,sa_poisson,sa_elast,elast3d,lap3d_7pt}
    echo "== generating $groups into $dir"
    t0=$(date +%s)
    "$GENBIN" gen "$dir" --only "$groups" 2>&1 | grep -E '^\[gen\] [a-z_0-9]+:' | grep -v ' s$'
    echo "generated in $(( $(date +%s) - t0 )) s"
  fi
  modes=${MODES:-device,repro,host,hybrid,cpu}
  echo "== benchmark (reps $reps, modes $modes): libspgemm vs cuSPARSE (CuPy), same run"
  : > "$OUTDIR/bench.jsonl"
  tmp=${TMPDIR:-/tmp}/spgemm-cs
  mkdir -p "$tmp"
  while read -r label an bn; do
    [ -n "${ONLY:-}" ] && ! [[ $label =~ $ONLY ]] && continue
    a="$dir/$an.mtx"; [ -f "$a" ] || { echo "skip $an (not found)"; continue; }
    if [ "$bn" = A ]; then b=A; else b="$dir/$bn.mtx"; fi
    echo "-- $label"
    timeout "${BENCH_TIMEOUT:-150}" "$BENCH" "$a" "$b" "$reps" 0 "$modes" 2>&1 | grep '^{' | tee -a "$OUTDIR/bench.jsonl"
    if [ -n "${BASELINE:-}" ]; then
      timeout "${BENCH_TIMEOUT:-150}" "$BASELINE" "$a" "$b" "$reps" 0 device 2>&1 | grep '^{' \
        | sed 's/^{/{"build":"baseline",/' | tee -a "$OUTDIR/bench.jsonl"
    fi
    timeout 120 python3 scripts/cusparse_bench.py "$a" "$b" "$reps" > "$tmp/cusparse.out" 2>&1
    rc=$?
    if grep -q '^{' "$tmp/cusparse.out"; then
      grep '^{' "$tmp/cusparse.out" | tee -a "$OUTDIR/bench.jsonl"
    else  # keep why cuSPARSE gave no result (out of memory, time limit) in the log
      echo "cuSPARSE gave no result for $label (exit $rc):"; tail -3 "$tmp/cusparse.out"
    fi
  done < "$dir/products.txt"

  # Where the time goes (SPGEMM_CUDA_TIMING=1: phases and bins, synchronised) for the
  # products matching TIMING.
  : > "$OUTDIR/timing.log"
  while read -r label an bn; do
    [[ $label =~ ${TIMING:-hub|zipf|circuit|rmat_18} ]] || continue
    if [ "$bn" = A ]; then b=A; else b="$dir/$bn.mtx"; fi
    echo "-- $label" >> "$OUTDIR/timing.log"
    SPGEMM_CUDA_TIMING=1 timeout 60 "$BENCH" "$dir/$an.mtx" "$b" 1 0 device 2>&1 \
      | grep -E 'spgemm cuda|^\{' >> "$OUTDIR/timing.log"
  done < "$dir/products.txt"

  # The first product of a new process: cold kernel cache, then warm (a second process).
  first=$(awk '{print $2; exit}' "$dir/products.txt")
  if [ -n "$first" ]; then
    kc=${TMPDIR:-/tmp}/spgemm-kcache-check
    rm -rf "$kc"
    for run in cold warm; do
      SPGEMM_KERNEL_CACHE=$kc timeout 60 "$BENCH" "$dir/$first.mtx" A 3 0 device 2>/dev/null \
        | grep '^{' | sed "s/^{/{\"kernel_cache\":\"$run\",/" | tee -a "$OUTDIR/bench.jsonl"
    done
    ls -la "$kc" | tail -n +2
  fi
fi

tools=${SANITIZE-memcheck racecheck initcheck synccheck}
if [ -n "$tools" ] && command -v compute-sanitizer >/dev/null 2>&1; then
  echo "== compute-sanitizer ($tools), ${SAN_TIMEOUT:-240} s each, in parallel"
  tests=$($TESTBIN "$FILTER" --list 2>/dev/null | sed -n 's/: test$//p')
  for tool in $tools; do
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    if [ "$tool" = racecheck ]; then
      # The slowest tool: one process per test, all at once, logs joined afterwards.
      mkdir -p "$OUTDIR/race"
      for t in $tests; do
        timeout "${SAN_TIMEOUT:-240}" compute-sanitizer --tool racecheck --error-exitcode 86 \
          $TESTBIN "$t" --exact --nocapture --test-threads=1 > "$OUTDIR/race/$t.log" 2>&1 &
      done
    else
      timeout "${SAN_TIMEOUT:-240}" compute-sanitizer --tool "$tool" $extra --error-exitcode 86 \
        $TEST > "$OUTDIR/sanitizer_$tool.log" 2>&1 &
    fi
  done
  wait
  if [ -d "$OUTDIR/race" ]; then
    for t in $tests; do
      echo "### $t"; cat "$OUTDIR/race/$t.log"
    done > "$OUTDIR/sanitizer_racecheck.log"
    rm -rf "$OUTDIR/race"
  fi
  for tool in $tools; do
    f="$OUTDIR/sanitizer_$tool.log"
    echo "-- $tool: $(grep -c 'test result: ok' "$f") test runs passed, $(grep -c 'test result: FAILED' "$f") failed, $(grep -c 'ERROR SUMMARY: 0 errors' "$f") clean summaries; $(grep -E 'ERROR SUMMARY|test result' "$f" | sort | uniq -c | tr '\n' ' ')"
    grep -E '^========= (Invalid|Race|Uninitialized|Barrier|Program hit|Error)' "$f" | sort | uniq -c | head -8
  done
fi
exit "$test_rc"

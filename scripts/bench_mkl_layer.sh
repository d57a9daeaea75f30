#!/usr/bin/env bash
# The MKL layer's cost: the peers' MKL SpGEMM driver (ANCHORS/src/mkl_spgemm.c) built against
# real MKL and, unchanged, against libspgemm_mkl, beside libspgemm alone: the same driver
# sequence through the C ABI (mkl/bench/spgemm_seq.c) and libspgemm's own benchmark
# (spgemm-bench spgemm, sorted C in fresh caller arrays / library-owned, validation on: what
# the layer asks of libspgemm), on the same inputs in the same run, TRIALS rounds
# alternating the programs. Appends JSON lines (the anchors' schema plus "variant" and "trial") to OUT, then
# prints the markdown table of docs/MKL.md (scripts/bench_mkl_layer.py).
#
#   scripts/bench_mkl_layer.sh MATDIR OUT.jsonl
#
# Environment: FIRST_TRIAL (1; number the trials of a further run after an earlier one's),
# PRODUCTS ("A:B ..." names of MATDIR/*.mtx, B = A squares A; default
# "lap3d_7pt_64:A sa_poisson_A:sa_poisson_P elast2d_q1_196:A er_uniform_200k:A"), TRIALS (5),
# REPS (5), THREADS (2), ANCHORS (../shared/anchors), MKL_VENV (.venv-mkl), CC (gcc).
# Inputs: target/release/spgemm-bench gen MATDIR. Needs make mkl-lib and
# cargo build --release --bin spgemm-bench.
set -euo pipefail
matdir=$1 out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
ANCHORS=${ANCHORS:-$root/../shared/anchors}
VENV=${MKL_VENV:-$root/.venv-mkl}
CC=${CC:-gcc}
TRIALS=${TRIALS:-5} REPS=${REPS:-5} THREADS=${THREADS:-2}
PRODUCTS=${PRODUCTS:-"lap3d_7pt_64:A sa_poisson_A:sa_poisson_P elast2d_q1_196:A er_uniform_200k:A"}
bin=$root/build/bench/bin
lib=$root/target/release
mkdir -p "$bin"

# The same driver source, -O3 -march=native as the anchors build it, twice.
$CC -O3 -march=native -std=gnu11 -I"$ANCHORS/src" -I"$VENV/include" "$ANCHORS/src/mkl_spgemm.c" -o "$bin/mkl_spgemm.mkl" \
  "$(ls "$VENV"/lib/libmkl_rt.so.* | head -1)" -Wl,-rpath,"$VENV/lib" -lm
$CC -O3 -march=native -std=gnu11 -I"$ANCHORS/src" -I"$root/mkl/include" "$ANCHORS/src/mkl_spgemm.c" -o "$bin/mkl_spgemm.layer" \
  -L"$lib" -lspgemm_mkl -Wl,-rpath,"$lib" -lm
# ... and libspgemm through its C ABI in the driver's exact sequence (mkl/bench/spgemm_seq.c).
$CC -O3 -march=native -std=gnu11 -Wall -Werror -Wno-unused-function -I"$ANCHORS/src" -I"$root/include" \
  "$root/mkl/bench/spgemm_seq.c" -o "$bin/spgemm_seq" -L"$lib" -lspgemm -Wl,-rpath,"$lib" -lm

tag() { # variant trial: adds the two fields to each JSON line
  sed -e "s/^{/{\"variant\":\"$1\",\"trial\":$2,/"
}
export MKL_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS ANCHOR_ALGS=sp2m,sp2m_full
FIRST_TRIAL=${FIRST_TRIAL:-1}
for t in $(seq "$FIRST_TRIAL" $((FIRST_TRIAL + TRIALS - 1))); do
  for p in $PRODUCTS; do
    a=$matdir/${p%%:*}.mtx
    b=${p#*:}
    [ "$b" = A ] || b=$matdir/$b.mtx
    echo "[bench_mkl_layer] trial $t $p (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    "$bin/mkl_spgemm.mkl" "$a" "$b" "$REPS" | tag mkl "$t" >> "$out"
    # layer and ABI swap places every other trial, so neither always runs right after MKL
    if [ $((t % 2)) = 1 ]; then
      "$bin/mkl_spgemm.layer" "$a" "$b" "$REPS" | tag layer "$t" >> "$out"
      SPGEMM_NUM_THREADS=$THREADS "$bin/spgemm_seq" "$a" "$b" "$REPS" | tag abi "$t" >> "$out"
    else
      SPGEMM_NUM_THREADS=$THREADS "$bin/spgemm_seq" "$a" "$b" "$REPS" | tag abi "$t" >> "$out"
      "$bin/mkl_spgemm.layer" "$a" "$b" "$REPS" | tag layer "$t" >> "$out"
    fi
    "$root/target/release/spgemm-bench" spgemm --a "$a" --b "$b" --threads "$THREADS" --reps "$REPS" \
      --sorted 1 --validate 1 --output caller | tag core "$t" >> "$out"
    "$root/target/release/spgemm-bench" spgemm --a "$a" --b "$b" --threads "$THREADS" --reps "$REPS" \
      --sorted 1 --validate 1 --output owned | tag core_owned "$t" >> "$out"
  done
done
# Both in one process, alternating per repetition (mkl/bench/layer_vs_abi.c): the same
# machine state for each pair, IN_PROCESS_REPS pairs per product.
$CC -O3 -march=native -std=gnu11 -Wall -Werror -Wno-unused-function -I"$ANCHORS/src" -I"$root/mkl/include" \
  -I"$root/include" "$root/mkl/bench/layer_vs_abi.c" -o "$bin/layer_vs_abi" -L"$lib" -lspgemm_mkl -lspgemm \
  -Wl,-rpath,"$lib" -lm
for p in $PRODUCTS; do
  a=$matdir/${p%%:*}.mtx
  b=${p#*:}
  [ "$b" = A ] || b=$matdir/$b.mtx
  echo "[bench_mkl_layer] in one process: $p (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  "$bin/layer_vs_abi" "$a" "$b" "${IN_PROCESS_REPS:-21}" | tag inproc 0 >> "$out"
done

# The layer's own cost per call, where the product costs next to nothing: a 3 x 3 matrix,
# TINY_REPS repetitions of each stage (medians), layer and ABI alternating.
tiny=$root/build/bench/tiny3.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 2.0\n1 2 -1.0\n2 2 2.0\n3 1 0.5\n3 3 1.5\n' > "$tiny"
for t in $(seq "$FIRST_TRIAL" $((FIRST_TRIAL + TRIALS - 1))); do
  "$bin/mkl_spgemm.layer" "$tiny" A "${TINY_REPS:-2001}" | tag layer "$t" >> "$out"
  SPGEMM_NUM_THREADS=$THREADS "$bin/spgemm_seq" "$tiny" A "${TINY_REPS:-2001}" | tag abi "$t" >> "$out"
done
python3 "$root/scripts/bench_mkl_layer.py" "$out"

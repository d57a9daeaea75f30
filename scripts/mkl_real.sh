#!/usr/bin/env bash
# Builds mkl/tests/mkl_api_test.c against real Intel MKL (pip wheels mkl-devel/mkl-include in
# .venv-mkl, installed when missing) and compares its output with the golden files
# mkl/tests/expected/{lp64,ilp64}.txt; with --regen it rewrites them first. Also checks the
# layer's headers (mkl/include) against MKL's: enum values, layouts and signatures, strict
# C99/C++17 compiles, and that the peer drivers in ../shared/anchors compile against them; runs
# those drivers with real MKL and compares nnzC/checksums with mkl/tests/expected/anchors.txt
# (scripts/mkl_anchors.sh; --regen rewrites it too).
#
#   scripts/mkl_real.sh            check (exit 1 on any difference)
#   scripts/mkl_real.sh --regen    regenerate the golden files from real MKL, then check
#
# Environment: PYTHON (python3 used to make the venv), MKL_VENV (default .venv-mkl),
# ANCHORS (default ../shared/anchors), CC (default gcc), CXX (default g++).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
REGEN=0
[ "${1:-}" = "--regen" ] && REGEN=1
PY=${PYTHON:-python3}
VENV=${MKL_VENV:-$ROOT/.venv-mkl}
ANCHORS=${ANCHORS:-$ROOT/../shared/anchors}
CC=${CC:-gcc}
CXX=${CXX:-g++}
OUT=$ROOT/build/mkl-real
TESTS=$ROOT/mkl/tests
LAYER_INC=$ROOT/mkl/include
mkdir -p "$OUT"

pass=0
fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# ---- real MKL from pip, in a venv of its own (the wheels ship versioned .so names only)
mklrt() { ls "$VENV"/lib/libmkl_rt.so.* 2>/dev/null | head -1; }
if [ ! -f "$VENV/include/mkl_spblas.h" ] || [ -z "$(mklrt)" ]; then
  echo "[mkl_real] installing mkl-devel and mkl-include into $VENV"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet mkl-devel mkl-include
fi
MKLINC=$VENV/include
MKLLIB=$VENV/lib
lib() { ls "$MKLLIB"/"$1".so.* 2>/dev/null | sort | head -1; }
LP64_LIBS="$(lib libmkl_intel_lp64) $(lib libmkl_sequential) $(lib libmkl_core)"
ILP64_LIBS="$(lib libmkl_intel_ilp64) $(lib libmkl_sequential) $(lib libmkl_core)"
RT="$(mklrt)"
echo "[mkl_real] MKL $(grep -m1 -oE 'INTEL_MKL_VERSION +[0-9]+' "$MKLINC/mkl_version.h" | awk '{print $2}') from $VENV"

CFLAGS="-std=c99 -O1 -Wall -Wextra -pedantic -Werror"
SRC=$TESTS/mkl_api_test.c
build() { # name, extra cflags, libraries
  local name=$1 flags=$2 libs=$3
  # shellcheck disable=SC2086
  $CC $CFLAGS $flags -I"$MKLINC" "$SRC" -o "$OUT/$name" $libs -Wl,-rpath,"$MKLLIB" -lm
}

# ---- the test against real MKL: the golden builds, then other ways of selecting the interface
build lp64 "" "$LP64_LIBS"
build ilp64 "-DMKL_ILP64" "$ILP64_LIBS"
build ilp64_names64 "-DMKL_ILP64 -DMKL_API_TEST_USE_64_NAMES" "$LP64_LIBS"
build lp64_rt "" "$RT"
build ilp64_rt "-DMKL_ILP64" "$RT"
"$OUT/lp64" > "$OUT/lp64.txt"
"$OUT/ilp64" > "$OUT/ilp64.txt"
if [ "$REGEN" = 1 ]; then
  cp "$OUT/lp64.txt" "$TESTS/expected/lp64.txt"
  cp "$OUT/ilp64.txt" "$TESTS/expected/ilp64.txt"
  echo "[mkl_real] regenerated mkl/tests/expected/{lp64,ilp64}.txt"
fi
cmp_run() { # label, expected, actual
  if "$PY" "$TESTS/compare.py" "$2" "$3" > "$OUT/$1.cmp"; then ok "$1"; else bad "$1"; head -5 "$OUT/$1.cmp"; fi
}
cmp_run "lp64 (intel_lp64, sequential)" "$TESTS/expected/lp64.txt" "$OUT/lp64.txt"
cmp_run "ilp64 (intel_ilp64, sequential)" "$TESTS/expected/ilp64.txt" "$OUT/ilp64.txt"
"$OUT/ilp64_names64" > "$OUT/ilp64_names64.txt"
cmp_run "ilp64 via the _64 entry points (intel_lp64)" "$TESTS/expected/ilp64.txt" "$OUT/ilp64_names64.txt"
MKL_INTERFACE_LAYER=ILP64 MKL_THREADING_LAYER=SEQUENTIAL "$OUT/ilp64_rt" > "$OUT/ilp64_rt.txt"
cmp_run "ilp64 via mkl_rt, MKL_INTERFACE_LAYER=ILP64" "$TESTS/expected/ilp64.txt" "$OUT/ilp64_rt.txt"
# threaded MKL may sum in another order: this is what the 1e-12 tolerance is for
MKL_INTERFACE_LAYER=LP64 MKL_THREADING_LAYER=INTEL MKL_NUM_THREADS=2 "$OUT/lp64_rt" > "$OUT/lp64_rt.txt"
cmp_run "lp64 via mkl_rt, 2 threads" "$TESTS/expected/lp64.txt" "$OUT/lp64_rt.txt"
if grep -q 'ref FAIL' "$TESTS/expected/lp64.txt" "$TESTS/expected/ilp64.txt"; then
  bad "golden files: a result differs from the dense reference"
else
  ok "golden files: every result matches the dense reference"
fi
if "$PY" "$TESTS/compare.py" --self-test "$TESTS/expected/lp64.txt" "$TESTS/expected/ilp64.txt"; then
  ok "compare.py self-test"
else
  bad "compare.py self-test"
fi

# ---- the layer's headers against MKL's
for mode in lp64 ilp64; do
  f=""
  [ "$mode" = ilp64 ] && f="-DMKL_ILP64"
  # shellcheck disable=SC2086
  $CC -std=c99 -Wall -Wextra -pedantic -Werror $f -I"$MKLINC" "$TESTS/header_facts.c" -o "$OUT/facts_mkl_$mode"
  # shellcheck disable=SC2086
  $CC -std=c99 -Wall -Wextra -pedantic -Werror $f -I"$LAYER_INC" "$TESTS/header_facts.c" -o "$OUT/facts_layer_$mode"
  "$OUT/facts_mkl_$mode" > "$OUT/facts_mkl_$mode.txt"
  "$OUT/facts_layer_$mode" > "$OUT/facts_layer_$mode.txt"
  if diff "$OUT/facts_mkl_$mode.txt" "$OUT/facts_layer_$mode.txt" > "$OUT/facts_$mode.diff"; then
    ok "$mode: enum values, sizes and layouts equal MKL's"
  else
    bad "$mode: header facts differ"; head "$OUT/facts_$mode.diff"
  fi
  printf '#include <mkl.h>\n' > "$OUT/sig.c"
  # shellcheck disable=SC2086
  $CC -c $f -I"$MKLINC" "$OUT/sig.c" -aux-info "$OUT/sig_mkl_$mode.aux" -o /dev/null
  # shellcheck disable=SC2086
  $CC -c $f -I"$LAYER_INC" "$OUT/sig.c" -aux-info "$OUT/sig_layer_$mode.aux" -o /dev/null
  if "$PY" "$TESTS/check_signatures.py" "$OUT/sig_mkl_$mode.aux" "$OUT/sig_layer_$mode.aux" \
       $([ "$mode" = ilp64 ] && echo --ilp64) > "$OUT/sig_$mode.txt"; then
    ok "$mode: $(tail -1 "$OUT/sig_$mode.txt")"
  else
    bad "$mode: signatures"; cat "$OUT/sig_$mode.txt"
  fi
  # strict C99 and C++17 compiles of every layer header, and of the test against them
  for h in mkl_types.h mkl_spblas.h mkl_service.h mkl.h; do
    printf '#include <%s>\n#include <%s>\nint main(void) { return 0; }\n' "$h" "$h" > "$OUT/inc.c"
    cp "$OUT/inc.c" "$OUT/inc.cpp"
    # shellcheck disable=SC2086
    if $CC -std=c99 -Wall -Wextra -pedantic -Werror $f -I"$LAYER_INC" -c "$OUT/inc.c" -o /dev/null &&
       $CXX -std=c++17 -Wall -Wextra -pedantic -Werror $f -I"$LAYER_INC" -c "$OUT/inc.cpp" -o /dev/null; then
      ok "$mode: $h compiles as strict C99 and C++17"
    else
      bad "$mode: $h strict compile"
    fi
  done
  # shellcheck disable=SC2086
  if $CC $CFLAGS $f -I"$LAYER_INC" -c "$SRC" -o "$OUT/test_layer_$mode.o"; then
    ok "$mode: mkl_api_test.c compiles against the layer's headers"
  else
    bad "$mode: mkl_api_test.c against the layer's headers"
  fi
done

# ---- the peer drivers compile unchanged against the layer's headers (LP64: they use int arrays)
if [ -d "$ANCHORS/src" ]; then
  for s in mkl_spgemm.c mkl_spmm.c; do
    if $CC -std=gnu11 -Wall -Wno-unused-function -Werror -fsyntax-only -I"$LAYER_INC" -I"$ANCHORS/src" "$ANCHORS/src/$s"; then
      ok "anchors/$s compiles against the layer's headers"
    else
      bad "anchors/$s against the layer's headers"
    fi
  done
  # ... and real MKL's nnzC/checksums on a small input, which `make mkl-check` expects of the layer
  if CC=$CC PY=$PY MKL_VENV=$VENV scripts/mkl_anchors.sh mkl "$ANCHORS" "$OUT/anchors" \
       $([ "$REGEN" = 1 ] && echo --regen) > "$OUT/anchors.log" 2>&1; then
    ok "anchors with real MKL: $(tail -1 "$OUT/anchors.log")"
  else
    bad "anchors with real MKL"; tail -5 "$OUT/anchors.log"
  fi
else
  echo "skip anchors: $ANCHORS/src not found"
fi

echo "mkl_real: $pass passed, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# Builds the peers' MKL drivers (ANCHORS/src/mkl_spgemm.c, mkl_spmm.c) unchanged against
# libspgemm_mkl ("layer") or real MKL ("mkl", the pip wheels in .venv-mkl), runs them on two
# small generated inputs with 2 threads, and compares nnzC and the checksums (sumC, sumabsC,
# reuse check) with mkl/tests/expected/anchors.txt, which real MKL wrote (--regen rewrites it).
#
#   scripts/mkl_anchors.sh layer|mkl ANCHORS OUTDIR [--regen]
#
# Environment: CC (gcc), PY (python3), MKL_VENV (.venv-mkl), LIBDIR (target/release).
set -euo pipefail
mode=$1 anchors=$2 out=$3 regen=${4:-}
root=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-gcc} PY=${PY:-python3}
LIBDIR=${LIBDIR:-$root/target/release}
VENV=${MKL_VENV:-$root/.venv-mkl}
expected=$root/mkl/tests/expected/anchors.txt
mkdir -p "$out"

# Two inputs (deterministic): a 2D 5-point stencil with random values, and a 1600 x 300
# prolongator-like matrix with three random entries a row; A*A, A*P and SpMM with A.
"$PY" - "$out" <<'EOF'
import sys
out = sys.argv[1]
state = [12345]
def rnd():  # splitmix64: the same inputs on every machine
    state[0] = (state[0] + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) >> 11
def val():
    return 2.0 * rnd() / 9007199254740992.0 - 1.0
def write(name, rows, cols, ents):
    with open(f"{out}/{name}.mtx", "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{rows} {cols} {len(ents)}\n")
        for i, j, v in ents:
            f.write(f"{i + 1} {j + 1} {v!r}\n")
g = 40
lap = []
for x in range(g):
    for y in range(g):
        i = x * g + y
        for dx, dy in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)):
            if 0 <= x + dx < g and 0 <= y + dy < g:
                lap.append((i, (x + dx) * g + y + dy, val()))
write("lap2d_40", g * g, g * g, lap)
pro = []
for i in range(g * g):
    cols = sorted({rnd() % 300 for _ in range(3)})
    pro += [(i, j, val()) for j in cols]
write("prolong_300", g * g, 300, pro)
EOF

if [ "$mode" = layer ]; then
  flags="-I$root/mkl/include -L$LIBDIR -lspgemm_mkl -Wl,-rpath,$LIBDIR"
else
  # as the anchors' own Makefile links it: the single dynamic library, Intel threads
  flags="-I$VENV/include $(ls "$VENV"/lib/libmkl_rt.so.* | head -1) -Wl,-rpath,$VENV/lib"
fi
for d in mkl_spgemm mkl_spmm; do
  # shellcheck disable=SC2086
  $CC -O2 -std=gnu11 -Wall -Wno-unused-function -Werror -I"$anchors/src" "$anchors/src/$d.c" -o "$out/$d" $flags -lm
done
export MKL_NUM_THREADS=2 OMP_NUM_THREADS=2
{
  "$out/mkl_spgemm" "$out/lap2d_40.mtx" A 2
  "$out/mkl_spgemm" "$out/lap2d_40.mtx" "$out/prolong_300.mtx" 2
  "$out/mkl_spmm" "$out/lap2d_40.mtx" 2 1,8
} > "$out/$mode.jsonl"

# One line per result: the fields that must agree (timings, sortedness and versions may differ).
"$PY" - "$out/$mode.jsonl" "$out/$mode.txt" <<'EOF'
import json, sys
rows = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = f"{r['alg']} {r['A']} {r['B']}"
    f = [f"nnzC={r['nnzC']}"] if 'nnzC' in r else []
    f += [f"sumC={r['sumC']!r}", f"sumabsC={r['sumabsC']!r}"]
    if 'reuse_check' in r:
        f.append(f"reuse_check={r['reuse_check']}")
    if 'reuse_sumC' in r:
        f.append(f"reuse_sumC={r['reuse_sumC']!r}")
    rows.append(key + " " + " ".join(f))
open(sys.argv[2], "w").write("\n".join(sorted(rows)) + "\n")
EOF

if [ "$regen" = --regen ]; then
  cp "$out/$mode.txt" "$expected"
  echo "mkl_anchors: wrote $expected from $mode"
fi
"$PY" - "$expected" "$out/$mode.txt" "$mode" <<'EOF'
import sys
def load(p):
    return {" ".join(l.split()[:3]): dict(kv.split("=", 1) for kv in l.split()[3:]) for l in open(p) if l.strip()}
exp, got, mode = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
bad = 0
for k, e in exp.items():
    g = got.get(k)
    if g is None:
        print(f"FAIL {k}: missing"); bad += 1; continue
    for f, ev in e.items():
        gv = g.get(f)
        if f.startswith("sum") or f == "reuse_sumC":
            a, b = float(ev), float(gv)
            ok = abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1.0)
        else:
            ok = ev == gv
        if not ok:
            print(f"FAIL {k}: {f} expected {ev}, got {gv}"); bad += 1
print(f"anchors against {mode}: {len(exp)} results, nnzC exact, checksums within 1e-12: "
      + ("all equal real MKL's" if not bad else f"{bad} differences"))
sys.exit(1 if bad else 0)
EOF

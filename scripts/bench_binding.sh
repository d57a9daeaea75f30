#!/usr/bin/env bash
# Pinned vs unpinned: SpGEMM and SpMM under the thread binding policies none / close /
# spread, on this machine, over the benchmark products.
#   scripts/bench_binding.sh [MATDIR] [OUT.jsonl]
# The policy is set with SPGEMM_PROC_BIND (it overrides the handle option; spgemm-bench
# creates its handles with the default policy). Per trial, for every product the policies
# run back to back, one process each, in an order rotated from trial to trial, so slow
# drifts of the machine's load hit every policy alike. Each line of spgemm-bench's JSON
# output gets "policy", "trial" and "loadavg" (1-minute load when the call started) and is
# appended to OUT (default perf-results/binding-<date>.jsonl); then a Markdown table of
# medians over trials and ratios to `none` goes to stdout (and replaces the block between
# "<!-- binding-bench:begin -->" and "<!-- binding-bench:end -->" in $DOC when set).
# Environment knobs:
#   TRIALS (default 3), REPS (timed repetitions per call, default 3), THREADS (default 2),
#   POLICIES (default "none close spread"), ONLY (regex on product labels, default .),
#   SKIP (regex of labels left out, default 'rmat': one rmat_16^2 call takes minutes),
#   SPMM (1: also SpMM with the A of every product, default 1), SPMM_K (default "8,32"),
#   NO_BUILD=1 (skip cargo build), DOC (Markdown file whose marked block gets the table).
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
MATDIR=${1:-/work/data/matrices}
OUT=${2:-$HERE/perf-results/binding-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
TRIALS=${TRIALS:-3}
REPS=${REPS:-3}
THREADS=${THREADS:-2}
POLICIES=${POLICIES:-none close spread}
ONLY=${ONLY:-.}
SKIP=${SKIP:-rmat}
SPMM=${SPMM:-1}
SPMM_K=${SPMM_K:-8,32}
BENCH=$HERE/target/release/spgemm-bench

die() { echo "bench_binding.sh: $*" >&2; exit 1; }

[ -f "$MATDIR/products.txt" ] || die "no products.txt in $MATDIR"
if [ "${NO_BUILD:-0}" != 1 ]; then
  (cd "$HERE" && cargo build --release --bin spgemm-bench) >&2 || die "cargo build failed"
fi
[ -x "$BENCH" ] || die "$BENCH is missing (cargo build --release --bin spgemm-bench)"
mkdir -p "$(dirname "$OUT")"

read -ra POL <<<"$POLICIES"
mapfile -t LINES < <(grep -v '^[[:space:]]*\(#\|$\)' "$MATDIR/products.txt")

# Appends spgemm-bench's JSON lines with the policy, trial and load added.
run() { # policy trial cmd...
  local policy=$1 trial=$2 load
  shift 2
  load=$(cut -d' ' -f1 /proc/loadavg)
  SPGEMM_PROC_BIND=$policy "$@" 2>>"$OUT.stderr" | while IFS= read -r line; do
    case $line in
      '{'*) printf '%s,"policy":"%s","trial":%s,"loadavg":%s}\n' "${line%\}}" "$policy" "$trial" "$load" ;;
    esac
  done >>"$OUT"
}

echo "machine load before: $(uptime)" >&2
START_LOAD=$(uptime | sed 's/.*load average: //')
for ((t = 1; t <= TRIALS; t++)); do
  # Rotate the policy order per trial: trial 1 none,close,spread; trial 2 close,spread,none...
  order=()
  for ((i = 0; i < ${#POL[@]}; i++)); do order+=("${POL[(i + t - 1) % ${#POL[@]}]}"); done
  for entry in "${LINES[@]}"; do
    IFS=$'\t' read -r label a b <<<"$entry"
    [[ $label =~ $ONLY ]] || continue
    [[ -n $SKIP && $label =~ $SKIP ]] && continue
    A=$MATDIR/$a.mtx
    if [ "$b" = A ]; then B=A; else B=$MATDIR/$b.mtx; fi
    for p in "${order[@]}"; do
      echo "trial $t $label spgemm $p" >&2
      run "$p" "$t" "$BENCH" spgemm --a "$A" --b "$B" --alg auto --threads "$THREADS" \
        --reps "$REPS" --validate 0 --check-rows 50
      if [ "$SPMM" = 1 ]; then
        echo "trial $t $label spmm $p" >&2
        run "$p" "$t" "$BENCH" spmm --a "$A" --k "$SPMM_K" --layout row --alg mm \
          --threads "$THREADS" --reps "$REPS"
      fi
    done
  done
done
END_LOAD=$(uptime | sed 's/.*load average: //')
echo "machine load after: $(uptime)" >&2

python3 - "$OUT" "${POL[*]}" "$START_LOAD" "$END_LOAD" "${DOC:-}" <<'EOF'
import json, math, statistics, sys, re, os
path, pols, l0, l1, doc = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4], sys.argv[5]
rows = [json.loads(l) for l in open(path) if l.strip()]
base = pols[0]
# (op, label) -> policy -> [per-trial values]
data, loads = {}, []
for r in rows:
    if r.get("total_s") is None:
        continue
    loads.append(r["loadavg"])
    if r.get("op") == "spmm":
        key = ("spmm", f'{os.path.basename(r["A"]).removesuffix(".mtx")} k={r["k"]}')
        val = r["total_s"]
    else:
        key = ("spgemm", f'{os.path.basename(r["A"]).removesuffix(".mtx")} * {os.path.basename(r["B"]).removesuffix(".mtx")}')
        val = r["symbolic_s"] + r["numeric_s"]
    data.setdefault(key, {}).setdefault(r["policy"], []).append(val)
others = [p for p in pols if p != base]
out = []
trials = max((len(v) for d in data.values() for v in d.values()), default=0)
out.append(f"Median over {trials} trials of each call's median time (ms; SpGEMM: symbolic + numeric from scratch, "
           f"SpMM: Y = A*X, row-major X). Load average (1, 5, 15 min) before: {l0}; after: {l1}; "
           f"1-min load at the calls: {min(loads, default=0):.2f} to {max(loads, default=0):.2f}.")
out.append("")
hdr = "| op | product | " + " | ".join(f"{p} ms" for p in pols) + " | " + " | ".join(f"{p}/{base}" for p in others) + " |"
out.append(hdr)
out.append("|" + "---|" * 2 + "---:|" * (len(pols) + len(others)))
ratios = {}
for (op, label), d in sorted(data.items()):
    if not all(p in d for p in pols):
        continue
    med = {p: statistics.median(d[p]) for p in pols}
    cells = [f"{med[p]*1e3:.1f}" for p in pols]
    rs = []
    for p in others:
        r = med[p] / med[base]
        ratios.setdefault((op, p), []).append(r)
        rs.append(f"{r:.3f}")
    out.append(f"| {op} | {label} | " + " | ".join(cells) + " | " + " | ".join(rs) + " |")
out.append("")
out.append("| op | ratio | geometric mean | min | max | cases |")
out.append("|---|---|---:|---:|---:|---:|")
for (op, p), rs in sorted(ratios.items()):
    g = math.exp(sum(math.log(x) for x in rs) / len(rs))
    out.append(f"| {op} | {p}/{base} | {g:.3f} | {min(rs):.3f} | {max(rs):.3f} | {len(rs)} |")
text = "\n".join(out)
print(text)
if doc:
    s = open(doc).read()
    b, e = "<!-- binding-bench:begin -->", "<!-- binding-bench:end -->"
    if b in s and e in s:
        s = s[: s.index(b) + len(b)] + "\n" + text + "\n" + s[s.index(e):]
        open(doc, "w").write(s)
    else:
        print(f"bench_binding.sh: no {b} ... {e} block in {doc}", file=sys.stderr)
EOF

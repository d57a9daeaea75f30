#!/usr/bin/env python3
"""Compares two spgemm-bench binaries (e.g. before and after a change) on the same inputs,
alternating them product by product and round by round so that machine noise hits both.

  scripts/ab_spgemm.py --a OLD/spgemm-bench --b NEW/spgemm-bench MATDIR [--rounds 3]
                       [--threads 2] [--reps 5] [--only REGEX] [--out FILE.jsonl]
                       [--args "--unsorted ..."]

MATDIR holds .mtx files and products.txt (`spgemm-bench gen MATDIR` writes both). For each
product and round both binaries run `spgemm --alg auto` once each (order swapped every
round); the table gives, per product, the median over rounds of each side's total_s
(symbolic + numeric), reuse_s and numeric_s (the first numeric call), and the median of
the per-round ratios B/A (a ratio of runs seconds apart, not of absolute times across runs).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def products(matdir, only):
    out = []
    for line in open(os.path.join(matdir, "products.txt")):
        if not line.strip() or line.startswith("#"):
            continue
        label, a, b = line.rstrip("\n").split("\t")[:3]
        if re.search(only, label):
            out.append((label, a, b))
    return out


def run(binary, matdir, a, b, threads, reps, extra=()):
    path = lambda f: f if f == "A" else os.path.join(matdir, f if f.endswith(".mtx") else f + ".mtx")
    cmd = [binary, "spgemm", "--a", path(a), "--b", path(b), "--alg", "auto",
           "--threads", str(threads), "--reps", str(reps), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            j = json.loads(line)
            if j.get("alg") == "auto":
                return j
    sys.exit(f"no auto line from {' '.join(cmd)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("matdir")
    ap.add_argument("--a", required=True, help="binary A (before)")
    ap.add_argument("--b", required=True, help="binary B (after)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default=".")
    ap.add_argument("--out")
    ap.add_argument("--args", default="", help="more spgemm-bench arguments, e.g. --unsorted")
    o = ap.parse_args()
    rows = []
    log = open(o.out, "a") if o.out else None
    for label, a, b in products(o.matdir, o.only):
        res = {"A": [], "B": []}
        for rnd in range(o.rounds):
            order = ("A", "B") if rnd % 2 == 0 else ("B", "A")
            for side in order:
                j = run(getattr(o, side.lower()), o.matdir, a, b, o.threads, o.reps,
                        o.args.split())
                j.update(side=side, round=rnd, label=label)
                res[side].append(j)
                if log:
                    log.write(json.dumps(j) + "\n")
                    log.flush()
        def med(side, key):
            v = [r[key] for r in res[side] if r.get(key) is not None]
            return statistics.median(v) if v else float("nan")
        def ratio(key):
            v = [rb[key] / ra[key] for ra, rb in zip(res["A"], res["B"])
                 if ra.get(key) and rb.get(key)]
            return statistics.median(v) if v else float("nan")
        rows.append((label, med("A", "total_s"), med("B", "total_s"), ratio("total_s"),
                     med("A", "reuse_s"), med("B", "reuse_s"), ratio("reuse_s"),
                     med("A", "numeric_s"), med("B", "numeric_s"), ratio("numeric_s")))
        print(f"{label}: total {rows[-1][1]*1e3:.2f} -> {rows[-1][2]*1e3:.2f} ms "
              f"(B/A {rows[-1][3]:.3f}), reuse {rows[-1][4]*1e3:.2f} -> {rows[-1][5]*1e3:.2f} ms "
              f"(B/A {rows[-1][6]:.3f}), first numeric {rows[-1][7]*1e3:.2f} -> "
              f"{rows[-1][8]*1e3:.2f} ms (B/A {rows[-1][9]:.3f})", flush=True)
    print()
    print("| product | total A (ms) | total B (ms) | B/A | reuse A (ms) | reuse B (ms) | B/A "
          "| first numeric A (ms) | first numeric B (ms) | B/A |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]*1e3:.2f} | {r[2]*1e3:.2f} | {r[3]:.3f} | {r[4]*1e3:.2f} | "
              f"{r[5]*1e3:.2f} | {r[6]:.3f} | {r[7]*1e3:.2f} | {r[8]*1e3:.2f} | {r[9]:.3f} |")
    gm = lambda xs: statistics.geometric_mean([x for x in xs if x == x])
    print(f"\ngeomean B/A: total {gm([r[3] for r in rows]):.3f}, reuse {gm([r[6] for r in rows]):.3f}, "
          f"first numeric {gm([r[9] for r in rows]):.3f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Markdown table of scripts/bench_mkl_layer.sh's JSON lines: per product, the median over the
trials of each variant's time, and the median over the trials of the ratios taken within each
trial (the three programs of one trial ran back to back, so they share the machine's state).

  python3 scripts/bench_mkl_layer.py OUT.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    # (product, trial) -> {name: seconds}
    runs = defaultdict(dict)
    checks = {}
    inproc = []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r.get("variant") == "inproc":
            inproc.append(r)
            continue
        prod = f"{r['A']}*{r['B']}"
        t = r["trial"]
        v = r["variant"]
        if v in ("mkl", "layer"):
            if r["alg"] == "sp2m":
                runs[(prod, t)][f"{v}_total"] = r["total_s"]
                runs[(prod, t)][f"{v}_reuse"] = r["reuse_s"]
                checks[(prod, v)] = (r["nnzC"], r["sumabsC"], r.get("reuse_check"))
            elif r["alg"] == "sp2m_full":
                runs[(prod, t)][f"{v}_full"] = r["total_s"]
        elif v == "abi":
            key = "abi_total" if r["alg"] == "sp2m" else "abi_full"
            runs[(prod, t)][key] = r["total_s"]
            if r["alg"] == "sp2m":
                runs[(prod, t)]["abi_reuse"] = r["reuse_s"]
                checks[(prod, v)] = (r["nnzC"], r["sumabsC"], None)
        elif v == "core":
            runs[(prod, t)]["core_total"] = r["total_s"]
            runs[(prod, t)]["core_reuse"] = r["reuse_s"]
            checks[(prod, v)] = (r["nnzC"], r["sumabsC"], r.get("check"))
        elif v == "core_owned":
            runs[(prod, t)]["core_owned_total"] = r["total_s"]
    tiny = sorted({p for p, _ in runs if p.startswith("tiny")})
    products = sorted({p for p, _ in runs if not p.startswith("tiny")})
    trials = sorted({t for _, t in runs})

    def med(prod, key):
        xs = [runs[(prod, t)][key] for t in trials if key in runs[(prod, t)]]
        return statistics.median(xs) if xs else float("nan")

    def ratio(prod, num, den):
        xs = [runs[(prod, t)][num] / runs[(prod, t)][den] for t in trials
              if num in runs[(prod, t)] and den in runs[(prod, t)]]
        return statistics.median(xs) if xs else float("nan")

    print(f"{len(trials)} trials; times: median over trials of each program's median of its timed repetitions (s); "
          "ratios: median over trials of the ratio within each trial.\n")
    print("| product | MKL | layer | libspgemm ABI | spgemm-bench | layer / ABI | layer / spgemm-bench | layer / MKL |")
    print("|---|---|---|---|---|---|---|---|")
    for p in products:
        for what, lk, ak, ck, mk in (("sp2m (NNZ_COUNT + FINALIZE_MULT)", "layer_total", "abi_total", "core_total", "mkl_total"),
                                     ("reuse (FINALIZE_MULT again)", "layer_reuse", "abi_reuse", "core_reuse", "mkl_reuse"),
                                     ("sp2m_full (FULL_MULT)", "layer_full", "abi_full", "core_owned_total", "mkl_full")):
            print(f"| {p} {what} | {med(p, mk):.4g} | {med(p, lk):.4g} | {med(p, ak):.4g} | {med(p, ck):.4g} "
                  f"| {ratio(p, lk, ak):.3f} | {ratio(p, lk, ck):.3f} | {ratio(p, lk, mk):.3f} |")
    if inproc:
        print("\nIn one process (mkl/bench/layer_vs_abi.c): layer and ABI alternate per repetition; "
              "medians over the repetitions (s), ratio = median of the per-repetition ratios:\n")
        print("| product | stage | reps | layer | libspgemm ABI | layer / ABI |")
        print("|---|---|---|---|---|---|")
        for r in inproc:
            print(f"| {r['A']}*{r['B']} | {r['stage']} | {r['reps']} | {r['layer_s']:.4g} | {r['abi_s']:.4g} | {r['ratio']:.3f} |")
    for p in tiny:
        print(f"\nPer call on {p} (a 3 x 3 product: what the layer itself adds), median over trials, microseconds:\n")
        print("| stage | layer | libspgemm ABI | layer - ABI |")
        print("|---|---|---|---|")
        for what, lk, ak in (("NNZ_COUNT + FINALIZE_MULT", "layer_total", "abi_total"),
                             ("FINALIZE_MULT again", "layer_reuse", "abi_reuse"),
                             ("FULL_MULT", "layer_full", "abi_full")):
            diffs = [runs[(p, t)][lk] - runs[(p, t)][ak] for t in trials if lk in runs[(p, t)] and ak in runs[(p, t)]]
            print(f"| {what} | {1e6 * med(p, lk):.2f} | {1e6 * med(p, ak):.2f} | {1e6 * statistics.median(diffs):.2f} |")
    print()
    print("Results checked equal: " + "; ".join(
        f"{p}: nnzC " + "/".join(str(checks.get((p, v), ("?",))[0]) for v in ("mkl", "layer", "abi", "core"))
        + f", reuse check {checks.get((p, 'layer'), (0, 0, '?'))[2]}" for p in products))


if __name__ == "__main__":
    main(sys.argv[1])

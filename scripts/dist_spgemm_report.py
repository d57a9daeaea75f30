#!/usr/bin/env python3
"""The comparison table of scripts/bench_dist_spgemm.sh: per product and rank count,
libspgemm's from-scratch (symbolic + first numeric) and reuse times against PETSc's best
algorithm in the same run (each the best over the trials), with the ratios PETSc / ours
(> 1: libspgemm faster), nnz(C) and sum |c_ij| of both (a cross-check), and geomeans.
    python3 scripts/dist_spgemm_report.py OUT.jsonl"""
import json
import math
import sys
from collections import defaultdict


def key(r):
    ins = [i.rsplit("/", 1)[-1].removesuffix(".mtx") for i in r["inputs"]]
    if r.get("lib") == "libspgemm" and r["mode"] == "ptap":
        ins = ins[1:]  # ours lists P, A, P; PETSc lists A, P
    return (r["mode"], ",".join(ins), r["np"])


def main(path):
    ours = defaultdict(list)
    petsc = defaultdict(list)
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if "error" in r:
            print("error:", line)
            continue
        (ours if r["lib"] == "libspgemm" else petsc)[key(r)].append(r)
    print("| product | inputs | np | ours total ms | PETSc best total ms (alg) | ratio | ours reuse ms "
          "| PETSc best reuse ms (alg) | ratio | nnzC ours / PETSc | sumabsC rel. diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rt, rr = [], []
    for k in sorted(ours, key=lambda k: (k[1], k[0], k[2])):
        if k not in petsc:
            continue
        o_tot = min(r["total_s"] for r in ours[k])
        o_reu = min(r["reuse_s"] for r in ours[k])
        p_tot = min(petsc[k], key=lambda r: r["total_s"])
        p_reu = min(petsc[k], key=lambda r: r["reuse_s"])
        o, p = ours[k][0], petsc[k][0]
        t, u = p_tot["total_s"] / o_tot, p_reu["reuse_s"] / o_reu
        rt.append(t)
        rr.append(u)
        diff = abs(o["sumabsC"] - p["sumabsC"]) / max(abs(p["sumabsC"]), 1e-300)
        print(f"| {k[0]} | {k[1]} | {k[2]} | {o_tot*1e3:.1f} | {p_tot['total_s']*1e3:.1f} ({p_tot['alg_used']}) "
              f"| {t:.2f}x | {o_reu*1e3:.1f} | {p_reu['reuse_s']*1e3:.1f} ({p_reu['alg_used']}) | {u:.2f}x "
              f"| {o['nnzC']} / {p['nnzC']} | {diff:.1e} |")
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    print(f"\ngeomean PETSc best / ours: from scratch {g(rt):.2f}x (worst {min(rt, default=0):.2f}x), "
          f"reuse {g(rr):.2f}x (worst {min(rr, default=0):.2f}x) over {len(rt)} configurations")


if __name__ == "__main__":
    main(sys.argv[1])

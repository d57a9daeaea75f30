#!/usr/bin/env python3
"""Markdown table of a GPU benchmark run (JSON lines of scripts/gpu_check.sh: cuda_bench's
`cuda` (host arrays) and `cuda-device` (device-resident) modes and cusparse_bench.py).

usage: gpu_report.py RUN.jsonl [--before EARLIER.jsonl]
Ratio = cuSPARSE device time / libspgemm device-resident total (> 1: libspgemm faster).
"""
import json
import math
import sys


def load(path):
    rows = {}
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        rows.setdefault(r["product"], {})[r["backend"].split("(")[0]] = r
    return rows


def fmt(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def main():
    args = sys.argv[1:]
    before = None
    if "--before" in args:
        i = args.index("--before")
        before = load(args[i + 1])
        del args[i : i + 2]
    run = load(args[0])
    head = ["product", "nnz(C)", "flops", "ours: symbolic ms", "ours: total ms", "ours: reuse ms",
            "ours GF/s", "cuSPARSE ms", "cuSPARSE GF/s", "ratio (cuSPARSE / ours)"]
    if before:
        head.append("ours total ms at session start")
    head += ["ours host arrays ms", "cuSPARSE with copies ms"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    ratios = []
    for prod, r in run.items():
        d, c, h = r.get("cuda-device"), r.get("cusparse"), r.get("cuda")
        if d is None:
            continue
        cus = c["device_ms"] if c else None
        ratio = cus / d["total_ms"] if cus else None
        if ratio:
            ratios.append(ratio)
        cells = [prod, f"{d['nnz_c']:,}", f"{d['flops']:,}", fmt(d["symbolic_ms"]), fmt(d["total_ms"]),
                 fmt(d["reuse_ms"]), fmt(d["gflops"], 1), fmt(cus),
                 fmt(c["gflops_device"], 1) if c else "failed", fmt(ratio)]
        if before:
            b = before.get(prod, {}).get("cuda-device")
            cells.append(fmt(b["total_ms"]) if b else "-")
        cells += [fmt(h["total_ms"]) if h else "-", fmt(c["with_copies_ms"]) if c else "-"]
        print("| " + " | ".join(cells) + " |")
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\nGeometric mean of the ratio over the {len(ratios)} products cuSPARSE completed: {g:.2f}; "
              f"libspgemm faster on {sum(x > 1 for x in ratios)} of them.")


if __name__ == "__main__":
    main()

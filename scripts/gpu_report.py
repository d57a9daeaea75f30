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
        if "kernel_cache" in r:  # the new-process runs: reported by first_product()
            rows.setdefault("__kernel_cache__", {})[r["kernel_cache"]] = r
            continue
        backend = r["backend"].split("(")[0]
        if backend.startswith("cpu") and backend[3:].isdigit():
            backend = "cpu"
        rows.setdefault(r["product"], {})[backend] = r
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
    kc = run.pop("__kernel_cache__", None)
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
    sides(run)
    if kc:
        print("\nFirst product of a new process (device-resident, after the device is open):")
        for k in ("cold", "warm"):
            if k in kc:
                r = kc[k]
                print(f"- {k} kernel cache, {r['product']}: first {fmt(r['first_ms'])} ms, "
                      f"warm product {fmt(r['total_ms'])} ms ({r['first_ms'] / r['total_ms']:.1f}x)")


def sides(run):
    """Hybrid (host arrays) against each side alone, and the reproducible option's cost."""
    head = ["product", "GPU host arrays ms", "CPU ms", "hybrid ms", "hybrid plan",
            "hybrid / better side", "reproducible ms", "reproducible / default"]
    lines = []
    for prod, r in run.items():
        h, c, y = r.get("cuda"), r.get("cpu"), r.get("hybrid")
        d, rp = r.get("cuda-device"), r.get("cuda-device-repro")
        if not (y or rp):
            continue
        best = min([x["total_ms"] for x in (h, c) if x] or [None]) if (h or c) else None
        lines.append([prod, fmt(h["total_ms"]) if h else "-", fmt(c["total_ms"]) if c else "-",
                      fmt(y["total_ms"]) if y else "-", y.get("plan", "-") if y else "-",
                      fmt(y["total_ms"] / best) if (y and best) else "-",
                      fmt(rp["total_ms"]) if rp else "-",
                      fmt(rp["total_ms"] / d["total_ms"]) if (rp and d) else "-"])
    if lines:
        print("\n| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for cells in lines:
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""SpMM report: JSON lines from scripts/bench_spmm.sh -> docs/PERFORMANCE_SPMM.md.

usage: report_spmm.py RESULTS.jsonl [RESULTS2.jsonl ...] [OUT.md] [--cmd "command"] [--note "text"]...
                      [--figure SVG]   (default: perf-figures/spmm-speedup.svg beside OUT.md; "" for none)

The report opens with a figure (SVG, matplotlib; skipped with a note when matplotlib is
missing): the ratio of every (matrix, layout, k) cell against MKL on a log scale with a 1x line.

With several result files (trials of the same benchmark at different times), the GF/s and GB/s
columns show each library's best median over the trials, and STREAM its best figure. The
speed-up of a configuration is taken within each trial (best MKL median / best libspgemm median
of that trial, both measured seconds apart in the same run) and the median of these per-trial
ratios counts: on this shared machine single medians move by up to 2x between runs, so a ratio
of one library's luckiest trial to the other's (best over trials on each side, the rule before
session 14) turns cells at parity into misses at random.

For every (matrix, layout, k): GFLOP/s and GB/s of MKL (mm, mm_opt) and libspgemm (mm, mm_opt),
the ratio of the best libspgemm time to the best MKL time, and for row-major k <= 16 on the
bandwidth-bound families the GB/s as a fraction of STREAM's write-allocate triad from the same
run. Then the targets, each marked met or not met.
"""
import json
import math
import os
import statistics
import sys
from collections import defaultdict

BW_FAMILIES = ("lap3d", "banded", "elast", "sa_poisson", "sa_elast")


def load(path):
    spmm, stream = [], []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if d.get("bench") == "stream":
            stream.append(d)
        elif d.get("op") == "spmm":
            spmm.append(d)
    return spmm, stream


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def figure_lines(figure, outdir, rows, per_trial, mats, ks):
    """Draws the speed-up figure: one panel per layout, per matrix a bar per k with the cell's
    ratio against MKL (median of the per-trial ratios, as in the tables); returns the report
    lines showing it, or saying why it was skipped."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the helper lives beside this script
    import speedup_figure

    panels = []
    for layout in ("row", "col"):
        series = []
        for k in ks:
            vals = []
            for a in mats:
                tr = [t["mkl"] / t["ours"] for _, t in sorted(per_trial[(a, layout, k)].items())
                      if "mkl" in t and "ours" in t]
                vals.append(statistics.median(tr) if tr else None)
            if any(vals):
                series.append(("k = %d" % k, vals))
        panels.append(dict(title="%s-major Y = A*X: MKL time / libspgemm time (best of mm, mm_opt on each side)"
                           % ("Row" if layout == "row" else "Column"), labels=mats, series=series))
    why = speedup_figure.draw(figure, panels, "libspgemm SpMM speed-up over MKL (> 1x: libspgemm faster; log scale)")
    if why:
        print("report_spmm.py: figure skipped: %s" % why, file=sys.stderr)
        return ["(Speed-up figure skipped: %s.)\n" % why]
    link = os.path.relpath(figure, outdir or ".")
    return ["![speed-up of libspgemm over MKL, per matrix, layout and k](%s)\n" % link,
            "Ratio of every cell against MKL (median over the trials of the ratio within each trial, as in the "
            "`ratio` column; log scale, 1x line: parity). Figure: `%s`.\n" % figure]


def main():
    args = sys.argv[1:]
    cmd = None
    notes = []
    if "--cmd" in args:
        i = args.index("--cmd")
        cmd = args[i + 1]
        del args[i : i + 2]
    figure = None
    if "--figure" in args:
        i = args.index("--figure")
        figure = args[i + 1]
        del args[i : i + 2]
    while "--note" in args:
        i = args.index("--note")
        notes.append(args[i + 1])
        del args[i : i + 2]
    srcs = [a for a in args if not a.endswith(".md")]
    outs = [a for a in args if a.endswith(".md")]
    out = outs[0] if outs else "docs/PERFORMANCE_SPMM.md"
    src = ", ".join("`%s`" % s for s in srcs).strip("`")
    spmm, stream = [], []
    for trial, path in enumerate(srcs):
        a, b = load(path)
        for d in a:
            d["_trial"] = trial
        spmm += a
        stream += b
    triad = max((s["triad_wa_gbs"] for s in stream), default=float("nan"))
    triad_plain = max((s["triad_gbs"] for s in stream), default=float("nan"))
    rows = defaultdict(dict)  # (A, layout, k) -> {(lib, alg): line}
    # (A, layout, k) -> trial -> lib -> best median of that trial
    per_trial = defaultdict(lambda: defaultdict(dict))
    for d in spmm:
        lib = "ours" if d["lib"] == "libspgemm" else d["lib"]
        key = (d["A"], d["layout"], int(d["k"]))
        cell = rows[key]
        old = cell.get((lib, d["alg"]))
        if old is None or d["total_s"] < old["total_s"]:
            cell[(lib, d["alg"])] = d
        t = per_trial[key][d["_trial"]]
        t[lib] = min(t.get(lib, float("inf")), d["total_s"])
    mats = sorted({a for a, _, _ in rows})
    ks = sorted({k for _, _, k in rows})
    threads = sorted({d["threads"] for d in spmm})

    L = []
    L.append("# SpMM performance (Y = A*X, double, 32-bit indices)\n")
    L.append("Generated by `scripts/report_spmm.py` from `%s`." % src)
    if cmd:
        L.append("Command: `%s`." % cmd)
    if figure is None:
        figure = os.path.join(os.path.dirname(out), "perf-figures", "spmm-speedup.svg")
    if figure:
        L.append("")
        L.extend(figure_lines(figure, os.path.dirname(out), rows, per_trial, mats, ks))
    L.append(
        "Threads: %s. All libraries measured in the same run, median of the timed repetitions "
        "after one warm-up%s. STREAM (same run, best of the runs before and after%s): triad "
        "%.2f GB/s, write-allocate triad %.2f GB/s.\n"
        % (
            threads,
            "; %d trials, the GF/s and GB/s columns show each configuration's best median" % len(srcs) if len(srcs) > 1 else "",
            " in every trial" if len(srcs) > 1 else "",
            triad_plain,
            triad,
        )
    )
    L.append(
        "`mm` = plain call (libspgemm: no analysis, validation off; MKL: no hint). `mm_opt` = after "
        "the analysis step (libspgemm `spgemm_spmm_analysis_create`; MKL `mkl_sparse_set_mm_hint` + "
        "`mkl_sparse_optimize`); analysis time not included. gbs counts A once (12 B/entry + row "
        "offsets), X read once, Y written once. `ratio` = best MKL time / best libspgemm time "
        "within one trial (> 1: libspgemm faster)%s. `%%triad` = libspgemm GB/s / write-allocate "
        "triad.\n"
        % ("; with several trials the median of the per-trial ratios, each trial's listed under "
           "`per trial`" if len(srcs) > 1 else "")
    )
    ratios = defaultdict(list)  # layout -> ratios
    worst = {}
    bw = []
    sum_mismatch = []
    for layout in ("row", "col"):
        L.append("## %s-major\n" % ("Row" if layout == "row" else "Column"))
        L.append(
            "| A | k | MKL mm GF/s | MKL mm_opt GF/s | ours mm GF/s | ours mm_opt GF/s | ours GB/s | %triad | ratio | per trial |"
        )
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for a in mats:
            for k in ks:
                r = rows.get((a, layout, k))
                if not r:
                    continue
                g = lambda key: r[key]["gflops"] if key in r else float("nan")
                mk = [r[x] for x in (("mkl", "mm"), ("mkl", "mm_opt")) if x in r]
                us = [r[x] for x in (("ours", "mm"), ("ours", "mm_opt")) if x in r]
                if not us:
                    continue
                best_us = min(us, key=lambda d: d["total_s"])
                ratio = float("nan")
                trial_ratios = [
                    t["mkl"] / t["ours"]
                    for _, t in sorted(per_trial[(a, layout, k)].items())
                    if "mkl" in t and "ours" in t
                ]
                if mk and trial_ratios:
                    best_mk = min(mk, key=lambda d: d["total_s"])
                    ratio = statistics.median(trial_ratios)
                    ratios[layout].append(ratio)
                    key = (layout, k)
                    if key not in worst or ratio < worst[key][0]:
                        worst[key] = (ratio, a)
                    s1, s2 = best_mk["sumC"], best_us["sumC"]
                    if abs(s1 - s2) > 1e-9 * max(1.0, abs(s1), best_us.get("sumabsC", 0)):
                        sum_mismatch.append((a, layout, k, s1, s2))
                frac = best_us["gbs"] / triad if triad == triad else float("nan")
                if layout == "row" and k <= 16 and a.startswith(BW_FAMILIES):
                    bw.append((frac, a, k))
                L.append(
                    "| %s | %d | %.2f | %.2f | %.2f | %.2f | %.1f | %.0f%% | %.2f | %s |"
                    % (a, k, g(("mkl", "mm")), g(("mkl", "mm_opt")), g(("ours", "mm")),
                       g(("ours", "mm_opt")), best_us["gbs"], 100 * frac, ratio,
                       " ".join("%.2f" % x for x in trial_ratios))
                )
        L.append("")

    def mark(ok):
        return "met" if ok else "NOT met"

    L.append("## Targets\n")
    L.append("| target | measured | status |")
    L.append("|---|---|---|")
    for layout in ("row", "col"):
        gm = geomean(ratios[layout])
        need = 1.2 if layout == "row" else 1.5
        L.append("| %s-major geomean speed-up over MKL >= %.1fx | %.2fx over %d cases | %s |"
                 % (layout, need, gm, len(ratios[layout]), mark(gm >= need)))
    for (layout, k), (r, a) in sorted(worst.items()):
        L.append("| not slower than MKL: %s-major k=%d, every input | worst %.2fx (%s) | %s |"
                 % (layout, k, r, a, mark(r >= 1.0)))
    if bw:
        lo = min(bw)
        L.append("| row-major k<=16 stencil/banded/elasticity >= 90%% of wa-triad | min %.0f%% (%s k=%d) | %s |"
                 % (100 * lo[0], lo[1], lo[2], mark(lo[0] >= 0.9)))
    L.append("")
    if sum_mismatch:
        L.append("sumC differs from MKL in %d cases (first: %s).\n" % (len(sum_mismatch), sum_mismatch[0]))
    else:
        L.append("sumC agrees with MKL's in every case compared.\n")
    if notes:
        L.append("## Notes\n")
        L.extend("- " + n for n in notes)
        L.append("")
    open(out, "w").write("\n".join(L) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()

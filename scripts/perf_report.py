#!/usr/bin/env python3
"""SpGEMM performance report: libspgemm against its peers, from bench_spgemm.sh output.

    scripts/perf_report.py OUT.jsonl [MORE.jsonl ...] [--title TEXT] > docs/PERFORMANCE.md

Like with like: our unsorted output against the peers' (MKL, GraphBLAS and KokkosKernels
all return unsorted rows); our sorted output against MKL sp2m + mkl_sparse_order; our
numeric-only reuse against MKL's FINALIZE_MULT re-run and KokkosKernels' second
spgemm_numeric. Several trials of one configuration: the per-product tables show the best
(smallest median) of each configuration; the targets table takes every speed-up and the scaling
within one trial (each file, or each TRIALS round of bench_spgemm.sh, where our runs and the
peers' run back to back on the same product) and counts the median over the trials. Absolute
times on this shared machine move by up to 2x between runs; a ratio of one side's luckiest trial
to the other's (the rule before session 14) turns products at parity into misses at random.
"""

import statistics

import argparse
import json
import math
import os
import sys
from collections import OrderedDict, defaultdict

OURS = "libspgemm"
NOISY_FRACTION = 0.25  # foreign CPU above this fraction of the call's wall time: marked


def load(paths):
    meta, rows = [], []
    for idx, path in enumerate(paths):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    print(f"{path}:{n}: skipped, not JSON ({e})", file=sys.stderr)
                    continue
                r["_trial"] = (idx, r.get("trial"))
                (meta if r.get("bench") == "meta" else rows).append(r)
    return meta, rows


def noisy(r):
    w, f = r.get("call_wall_s"), r.get("foreign_cpu_s")
    return w is not None and f is not None and f > NOISY_FRACTION * w


def best(rows, key="total_s"):
    """Row with the smallest `key` among rows that have it (best of trials)."""
    rows = [r for r in rows if isinstance(r.get(key), (int, float))]
    return min(rows, key=lambda r: r[key]) if rows else None


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fmt_t(x):
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return "–"
    if x >= 1:
        return f"{x:.3f}"
    if x >= 0.01:
        return f"{x:.4f}"
    return f"{x:.2e}"


def fmt_x(x):
    return "–" if x is None or not math.isfinite(x) else f"{x:.2f}x"


def mark(r):
    return "†" if r is not None and noisy(r) else ""


def load_of(r):
    """Average number of foreign CPUs busy during the call (None if not recorded)."""
    if not r or not r.get("call_wall_s") or r.get("foreign_cpu_s") is None:
        return None
    return r["foreign_cpu_s"] / r["call_wall_s"]


def fmt_load(r):
    x = load_of(r)
    return "–" if x is None else f"{x:.1f}"


def cfg_key(r):
    return (r["lib"], r["alg"], r.get("threads"), r.get("sort_requested"))


def picks(rows, threads):
    """The rows of one product (all trials, or one trial) by configuration, with the figures
    the report compares: the best peer without reuse, the best peer reuse, MKL sp2m and its
    sorted time (sp2m + order), and `ours(alg, threads, sorted)`."""
    by = defaultdict(list)
    for r in rows:
        by[cfg_key(r)].append(r)
    peers = [r for r in (best(v) for k, v in by.items() if k[0] != OURS) if r]
    mkl = best(by.get(("mkl", "sp2m", threads, None), []))
    return dict(
        by=by,
        peers=peers,
        best_peer=best(peers),
        peer_reuse=best([r for r in rows if r["lib"] != OURS], "reuse_s"),
        mkl=mkl,
        mkl_sorted_t=(mkl["total_s"] + mkl["order_s"]) if mkl and mkl.get("order_s") is not None else None,
        ours=lambda alg, t, s: best(by.get((OURS, alg, t, s), [])),
    )


def speedups(pk, threads):
    """Speed-ups of `auto` at `threads` over the peers in `pk` (from `picks`), and its
    1-thread/`threads` scaling on products over 20 ms; None where a side is missing."""
    u, s1, u1 = pk["ours"]("auto", threads, False), pk["ours"]("auto", threads, True), pk["ours"]("auto", 1, False)
    peer, reuse, mkl_sorted_t = pk["best_peer"], pk["peer_reuse"], pk["mkl_sorted_t"]
    return dict(
        nr=peer["total_s"] / u["total_s"] if peer and u else None,
        ru=reuse["reuse_s"] / u["reuse_s"] if reuse and u and u.get("reuse_s") else None,
        so=mkl_sorted_t / s1["total_s"] if mkl_sorted_t and s1 else None,
        sc=u1["total_s"] / u["total_s"] if u1 and u and u1["total_s"] > 0.020 else None,
    )


def peer_speedups(rows, threads, key):
    """Per peer library: median over trials of (peer's best `key` in the trial) / (ours, auto
    unsorted at `threads`, in the same trial), as the targets table takes ratios."""
    out = defaultdict(list)
    for t in sorted({r["_trial"] for r in rows}, key=str):
        tr = [r for r in rows if r["_trial"] == t]
        ours = best([r for r in tr if r["lib"] == OURS and r["alg"] == "auto" and r.get("threads") == threads
                     and not r.get("sort_requested")], key)
        if not ours or not ours.get(key):
            continue
        for lib in sorted({r["lib"] for r in tr if r["lib"] != OURS}):
            peer = best([r for r in tr if r["lib"] == lib], key)
            if peer and peer.get(key):
                out[lib].append(peer[key] / ours[key])
    return {lib: statistics.median(v) for lib, v in out.items()}


PEER_NAMES = {"mkl": "MKL", "graphblas": "GraphBLAS", "kokkoskernels": "KokkosKernels", "kk": "KokkosKernels"}


def figure_lines(args, summary, rows, threads):
    """Draws the speed-up figure (products from scratch and numeric reuse, per peer) and
    returns the report lines showing it, or saying why it was skipped."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the helper lives beside this script
    import speedup_figure

    good = [r for r in rows if "error" not in r and r.get("total_s") is not None]
    labels, scratch, reuse = [], [], []
    for s in summary:
        a, b = next((k for k in OrderedDict.fromkeys((r.get("A"), r.get("B")) for r in good)
                     if (f"{k[0]} · {k[1]}" if k[0] != k[1] else f"{k[0]}²") == s["label"]))
        prs = [r for r in good if (r.get("A"), r.get("B")) == (a, b)]
        labels.append(s["label"])
        scratch.append(peer_speedups(prs, threads, "total_s"))
        reuse.append(peer_speedups(prs, threads, "reuse_s"))
    peers = sorted({lib for d in scratch + reuse for lib in d}, key=lambda l: list(PEER_NAMES).index(l)
                   if l in PEER_NAMES else 99)
    panels = [
        dict(title=f"C = A·B from scratch: peer time / libspgemm time (auto, unsorted, {threads} threads)",
             labels=labels, series=[(PEER_NAMES.get(l, l), [d.get(l) for d in scratch]) for l in peers]),
        dict(title="numeric reuse with new values: peer reuse time / libspgemm reuse time",
             labels=labels, series=[(PEER_NAMES.get(l, l), [d.get(l) for d in reuse]) for l in peers
                                    if any(d.get(l) for d in reuse)]),
    ]
    why = speedup_figure.draw(args.figure, panels, "libspgemm speed-up per product (> 1x: libspgemm faster; log scale)")
    if why:
        print(f"perf_report.py: figure skipped: {why}", file=sys.stderr)
        return [f"(Speed-up figure skipped: {why}.)", ""]
    return [f"![speed-up of libspgemm over each peer, per product]({args.figure_link})", "",
            "Speed-up per product against each peer (median over the trials of the ratio within each trial, "
            "as in the targets table; log scale, 1x line: parity). Figure: `" + args.figure + "`.", ""]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--title", default="")
    ap.add_argument("--note", action="append", default=[], help="a remark for the header (repeatable)")
    ap.add_argument("--baseline", help="earlier JSON lines: adds a section comparing our figures with them")
    ap.add_argument("--figure", default="docs/perf-figures/spgemm-speedup.svg",
                    help="SVG of the speed-ups drawn at the top of the report ('' for none)")
    ap.add_argument("--figure-link", default="perf-figures/spgemm-speedup.svg",
                    help="the figure's path as the report links it (relative to the report)")
    args = ap.parse_args()
    meta, rows = load(args.files)
    errors = [r for r in rows if "error" in r]
    good = [r for r in rows if "error" not in r and r.get("total_s") is not None]

    products = OrderedDict()
    for r in rows:
        products.setdefault((r.get("A"), r.get("B")), []).append(r)

    threads = max((r.get("threads", 1) for r in good if r["lib"] == OURS), default=2)
    out = []
    p = out.append
    title = "SpGEMM performance: libspgemm vs MKL, GraphBLAS, KokkosKernels"
    p(f"# {title}" + (f" — {args.title}" if args.title else ""))
    p("")
    p("Generated by `scripts/perf_report.py " + " ".join(args.files) + "` from the JSON lines of "
      "`scripts/bench_spgemm.sh`. Do not edit by hand.")
    p("")
    figure_at = len(out)  # the figure goes here, first, once the speed-ups are known
    for m in meta:
        p(f"- Run {m.get('date')}: `{m.get('env')} {m.get('cmd')}`")
        p(f"  - machine: {m.get('nproc')} CPUs ({m.get('cpu')}), {m.get('mem_gib')} GiB; "
          f"libspgemm commit {m.get('git')}")
    p("")
    for note in args.note:
        p(f"- Note: {note}")
    p("")
    p(f"Threads: libspgemm, MKL and GraphBLAS at {threads} (plus libspgemm at 1 for scaling); "
      "KokkosKernels at 1 (Debian's Kokkos has only the Serial execution space). Times are medians "
      "of the timed repetitions after one warm-up, in seconds; with several trials the per-product "
      "tables show the best median (the targets table takes ratios within each trial). `total_s` = symbolic + numeric from scratch; `reuse_s` = numeric only on the same "
      "plan with new values (checked to pick them up). † = the call overlapped more than "
      f"{NOISY_FRACTION:.0%} of a CPU of foreign work (other processes on this shared machine): "
      "its times are inflated, and more so for whichever side ran under heavier load.")
    p("")
    modes = sorted({r.get("output", "caller") for r in good if r["lib"] == OURS})
    if modes == ["owned"]:
        p("libspgemm's C is a library-owned result (`spgemm-bench --output owned`, the numeric half "
          "of `spgemm_multiply`): its arrays come from the handle's cache of destroyed results, so "
          "its product-from-scratch times do not include the system clearing fresh pages for C. "
          "MKL's do: its C gets fresh pages every product (page faults counted in session 13; "
          "`MKL_DISABLE_FAST_MM` changes nothing). Reuse calls write into the same arrays on both "
          "sides.")
    elif modes == ["caller"]:
        p("libspgemm's C is in fresh caller arrays for every product (`spgemm-bench --output "
          "caller`): its product-from-scratch times include the system clearing C's new pages, "
          "as MKL's do for MKL's C.")
    else:
        p(f"libspgemm output modes mixed in these runs: {', '.join(modes)} (see `spgemm-bench --output`).")
    p("")

    fail = [r for r in good if r["lib"] == OURS and r.get("check") != "ok"]
    if fail or errors:
        p("## Failures")
        p("")
        for r in fail:
            p(f"- libspgemm {r['alg']} {r['A']}·{r['B']} T={r.get('threads')} sorted={r.get('sort_requested')}: "
              f"check {r.get('check')}")
        for r in errors:
            p(f"- {r.get('lib')} {r.get('alg')} {r.get('A')}·{r.get('B')}: {r.get('error')}")
        p("")

    # ---- per-product figures ----
    summary = []
    for (a, b), prs in products.items():
        ok = [r for r in prs if "error" not in r and r.get("total_s") is not None]
        if not any(r["lib"] == OURS for r in ok):
            continue
        pk = picks(ok, threads)
        by, peers, best_peer, peer_reuse = pk["by"], pk["peers"], pk["best_peer"], pk["peer_reuse"]
        mkl, mkl_sorted_t, ours = pk["mkl"], pk["mkl_sorted_t"], pk["ours"]

        algs = sorted({r["alg"] for r in ok if r["lib"] == OURS}, key=lambda x: (x != "auto", x))
        label = f"{a} · {b}" if a != b else f"{a}²"
        anyr = ok[0]
        p(f"## {label}")
        p("")
        p(f"m={anyr.get('m')} k={anyr.get('k')} n={anyr.get('n')}, nnzA={anyr.get('nnzA')} nnzB={anyr.get('nnzB')} "
          f"nnzC={anyr.get('nnzC')}, flops={anyr.get('flops'):.3e}")
        p("")
        if best_peer:
            p(f"Best peer (no reuse): {best_peer['lib']} {best_peer['alg']} (T={best_peer.get('threads')}) "
              f"{fmt_t(best_peer['total_s'])} s{mark(best_peer)}; best peer reuse: "
              + (f"{peer_reuse['lib']} {peer_reuse['alg']} {fmt_t(peer_reuse['reuse_s'])} s{mark(peer_reuse)}"
                 if peer_reuse else "–")
              + (f"; MKL sp2m + order (sorted C): {fmt_t(mkl_sorted_t)} s{mark(mkl)}" if mkl_sorted_t else ""))
            p("")
        p("| libspgemm | T | sorted | plan (sym/num) | symbolic_s | numeric_s | total_s | GF/s | reuse_s | RSS MiB "
          "| check | vs best peer | reuse vs best peer reuse | sorted vs MKL sp2m+order |")
        p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for alg in algs:
            for t in sorted({k[2] for k in by if k[0] == OURS and k[1] == alg}, reverse=True):
                for s in (False, True):
                    r = ours(alg, t, s)
                    if not r:
                        continue
                    vs = best_peer["total_s"] / r["total_s"] if best_peer and not s else None
                    rv = (peer_reuse["reuse_s"] / r["reuse_s"]) if peer_reuse and r.get("reuse_s") else None
                    sv = mkl_sorted_t / r["total_s"] if mkl_sorted_t and s else None
                    p(f"| {alg} | {t} | {'yes' if s else 'no'} | {r.get('alg_symbolic')}/{r.get('alg_numeric')} "
                      f"| {fmt_t(r.get('symbolic_s'))} | {fmt_t(r.get('numeric_s'))} | {fmt_t(r['total_s'])}{mark(r)} "
                      f"| {r.get('gflops', 0):.2f} | {fmt_t(r.get('reuse_s'))} | {r.get('peak_rss_mb')} "
                      f"| {r.get('check')} | {fmt_x(vs)} | {fmt_x(rv)} | {fmt_x(sv)} |")
        p("")
        p("<details><summary>peers</summary>")
        p("")
        p("| peer | alg | T | total_s | reuse_s | order_s / wait_s | RSS MiB | nnzC | sumabsC |")
        p("|---|---|---|---|---|---|---|---|---|")
        for r in sorted(peers, key=lambda r: r["total_s"]):
            extra = r.get("order_s", r.get("wait_s"))
            p(f"| {r['lib']} | {r['alg']} | {r.get('threads')} | {fmt_t(r['total_s'])}{mark(r)} "
              f"| {fmt_t(r.get('reuse_s'))} | {fmt_t(extra)} | {r.get('peak_rss_mb')} | {r.get('nnzC')} "
              f"| {r.get('sumabsC'):.6e} |")
        p("")
        p("</details>")
        p("")

        # cross-library agreement (our checks are independent; this compares with MKL too)
        auto_u, auto_s = ours("auto", threads, False), ours("auto", threads, True)
        auto_1u, auto_1s = ours("auto", 1, False), ours("auto", 1, True)
        singles_u = [ours(x, threads, False) for x in algs if x != "auto"]
        singles_s = [ours(x, threads, True) for x in algs if x != "auto"]
        trials = [speedups(picks([r for r in ok if r["_trial"] == t], threads), threads)
                  for t in sorted({r["_trial"] for r in ok}, key=str)]
        summary.append(dict(
            trials=trials,
            label=label, best_peer=best_peer, peer_reuse=peer_reuse, mkl=mkl, mkl_sorted_t=mkl_sorted_t,
            auto_u=auto_u, auto_s=auto_s, auto_1u=auto_1u, auto_1s=auto_1s,
            best_single_u=best([r for r in singles_u if r]), best_single_s=best([r for r in singles_s if r]),
            agree=(mkl is None or auto_u is None or (mkl.get("nnzC") == auto_u.get("nnzC") and
                   abs(mkl["sumabsC"] - auto_u["sumabsC"]) <= 1e-9 * abs(mkl["sumabsC"]))),
        ))

    # ---- targets ----
    def ratio(num, den, key_num="total_s", key_den="total_s"):
        if not num or not den or num.get(key_num) is None or den.get(key_den) in (None, 0):
            return None
        return num[key_num] / den[key_den]

    p("## Targets of the issue")
    p("")
    p(f"Speedup = peer time / our time (> 1: we are faster). Ours = `auto` at {threads} threads. "
      "Speed-ups and scaling are taken within each trial (our runs and the peers' back to back on "
      "the same product) and the median over the trials counts; the figures of each trial follow "
      "in brackets.")
    p("")
    p("| product | no reuse: auto (unsorted) vs best peer | reuse: auto vs best peer reuse | sorted: auto sorted vs MKL "
      "sp2m+order | peak RSS auto / MKL sp2m | scaling 1T/{t}T (auto, 1T > 20 ms) | auto / best single alg (unsorted, sorted) "
      "| nnzC & sumabsC agree with MKL | foreign CPUs busy (ours / best peer) |".replace("{t}", str(threads)))
    p("|---|---|---|---|---|---|---|---|---|")
    sp_nr, sp_ru, sp_so, rss, scal, autos, sel = [], [], [], [], [], [], []

    def same_plan(x, y):
        return bool(x and y and (x.get("alg_symbolic"), x.get("alg_numeric"))
                    == (y.get("alg_symbolic"), y.get("alg_numeric")))

    def fmt_sel(v, same):
        return f"{fmt_x(v)} (same plan)" if v is not None and same else fmt_x(v)
    def med(s, key):
        xs = [t[key] for t in s["trials"] if t[key] is not None]
        return statistics.median(xs) if xs else None

    def fmt_med(s, key):
        xs = [t[key] for t in s["trials"] if t[key] is not None]
        if not xs:
            return "–"
        if len(xs) == 1:
            return fmt_x(xs[0])
        return f"{fmt_x(statistics.median(xs))} ({' '.join(f'{x:.2f}' for x in xs)})"

    for s in summary:
        a_u, a_s = s["auto_u"], s["auto_s"]
        nr, ru, so, sc = med(s, "nr"), med(s, "ru"), med(s, "so"), med(s, "sc")
        rs = (a_u["peak_rss_mb"] / s["mkl"]["peak_rss_mb"]) if a_u and s["mkl"] else None
        au = ratio(a_u, s["best_single_u"])
        as_ = ratio(a_s, s["best_single_s"])
        # When auto chose the plan of the fastest single algorithm it ran the same code: the
        # selector chose right and the time ratio is run-to-run noise (shown, marked "same plan").
        same_u = same_plan(a_u, s["best_single_u"])
        same_s = same_plan(a_s, s["best_single_s"])
        for lst, v in ((sp_nr, nr), (sp_ru, ru), (sp_so, so), (rss, rs), (scal, sc)):
            if v is not None:
                lst.append(v)
        autos += [v for v in (au, as_) if v is not None]
        sel += [1.0 if same else v for v, same in ((au, same_u), (as_, same_s)) if v is not None]
        noise = mark(a_u) or mark(s["best_peer"])
        p(f"| {s['label']}{noise} | {fmt_med(s, 'nr')} | {fmt_med(s, 'ru')} | {fmt_med(s, 'so')} | {fmt_x(rs)} | "
          f"{fmt_med(s, 'sc') if sc is not None else 'n/a (< 20 ms)'} | {fmt_sel(au, same_u)}, {fmt_sel(as_, same_s)} | "
          f"{'yes' if s['agree'] else '**NO**'} | {fmt_load(a_u)} / {fmt_load(s['best_peer'])} |")
    p(f"| **geomean** | {fmt_x(geomean(sp_nr))} | {fmt_x(geomean(sp_ru))} | {fmt_x(geomean(sp_so))} "
      f"| {fmt_x(geomean(rss))} | {fmt_x(geomean(scal))} | {fmt_x(geomean(autos))} | | |")
    p(f"| **worst** | {fmt_x(min(sp_nr, default=float('nan')))} | {fmt_x(min(sp_ru, default=float('nan')))} "
      f"| {fmt_x(min(sp_so, default=float('nan')))} | {fmt_x(max(rss, default=float('nan')))} "
      f"| {fmt_x(min(scal, default=float('nan')))} | {fmt_x(max(autos, default=float('nan')))} | | |")
    p("")

    def verdict(ok, have):
        return "no data" if not have else ("**met**" if ok else "**not met**")

    p("| target | criterion | measured | status |")
    p("|---|---|---|---|")
    p(f"| no-reuse speed | auto never slower than the best peer, geomean >= 1.3x | worst {fmt_x(min(sp_nr, default=float('nan')))}, "
      f"geomean {fmt_x(geomean(sp_nr))} | {verdict(sp_nr and min(sp_nr) >= 1.0 and geomean(sp_nr) >= 1.3, sp_nr)} |")
    p(f"| reuse speed | never slower than the best peer reuse, geomean >= 1.5x | worst {fmt_x(min(sp_ru, default=float('nan')))}, "
      f"geomean {fmt_x(geomean(sp_ru))} | {verdict(sp_ru and min(sp_ru) >= 1.0 and geomean(sp_ru) >= 1.5, sp_ru)} |")
    p(f"| sorted output | >= 1.5x faster than MKL sp2m + mkl_sparse_order (geomean; worst shown) | worst "
      f"{fmt_x(min(sp_so, default=float('nan')))}, geomean {fmt_x(geomean(sp_so))} "
      f"| {verdict(sp_so and geomean(sp_so) >= 1.5, sp_so)} |")
    p(f"| memory | peak RSS <= 1.1x MKL sp2m's on every input | worst {fmt_x(max(rss, default=float('nan')))} "
      f"| {verdict(rss and max(rss) <= 1.1, rss)} |")
    p(f"| scaling | {threads} threads >= 1.7x 1 thread on inputs > 20 ms | worst {fmt_x(min(scal, default=float('nan')))} "
      f"over {len(scal)} inputs | {verdict(scal and min(scal) >= 1.7, scal)} |")
    p(f"| selector | auto within 10% of the best single algorithm on every input (same plan as the best "
      f"counts as within: identical code, the time ratio is noise) | worst {fmt_x(max(sel, default=float('nan')))} "
      f"(raw time ratio {fmt_x(max(autos, default=float('nan')))}) | {verdict(sel and max(sel) <= 1.10, sel)} |")
    p("")
    n_noisy = sum(1 for r in good if noisy(r))
    p(f"{n_noisy} of {len(good)} measurements overlapped foreign CPU load (†). On a shared 2-CPU machine the "
      "scaling and absolute figures suffer most; rerun with `QUIET_WAIT=120 TRIALS=3` on a quiet machine "
      "before drawing conclusions from small differences.")
    p("")
    if args.baseline:
        _, old_rows = load([args.baseline])
        old_by = defaultdict(list)
        for r in old_rows:
            if r.get("lib") == OURS and "error" not in r:
                old_by[(r["A"], r["B"]) + cfg_key(r)].append(r)
        p(f"## Change against `{args.baseline}`")
        p("")
        p("Ratio = baseline time / this run's time (> 1: faster now). Same machine noise caveats apply.")
        p("")
        p(f"| product | alg | sorted | total_s before → now | ratio | reuse_s before → now | ratio |")
        p("|---|---|---|---|---|---|---|")
        ratios_t, ratios_r = [], []
        for r in good:
            if r["lib"] != OURS or r.get("threads") != threads:
                continue
            key = (r["A"], r["B"]) + cfg_key(r)
            o = best(old_by.get(key, []))
            n = best([x for x in good if x["lib"] == OURS and (x["A"], x["B"]) + cfg_key(x) == key])
            if not o or n is not r:
                continue
            rt = o["total_s"] / n["total_s"]
            rr = (o["reuse_s"] / n["reuse_s"]) if o.get("reuse_s") and n.get("reuse_s") else None
            ratios_t.append(rt)
            if rr:
                ratios_r.append(rr)
            p(f"| {r['A']}·{r['B']} | {r['alg']} | {'yes' if r.get('sort_requested') else 'no'} "
              f"| {fmt_t(o['total_s'])} → {fmt_t(n['total_s'])} | {fmt_x(rt)} "
              f"| {fmt_t(o.get('reuse_s'))} → {fmt_t(n.get('reuse_s'))} | {fmt_x(rr)} |")
        p(f"| **geomean** | | | | {fmt_x(geomean(ratios_t))} | | {fmt_x(geomean(ratios_r))} |")
        p("")

    if args.figure:
        out[figure_at:figure_at] = figure_lines(args, summary, rows, threads)

    # Sections measured by other scripts (docs/perf-raw/small-products.md: the small
    # products of scripts/small_products.py) are carried into every report.
    here = os.path.dirname(os.path.abspath(__file__))
    extra = os.path.join(here, "..", "docs", "perf-raw", "small-products.md")
    if os.path.exists(extra):
        with open(extra) as f:
            p(f.read().rstrip("\n"))
        p("")

    p("## Reproduce")
    p("")
    p("```sh")
    p("cargo build --release --bin spgemm-bench")
    p("scripts/bench_spgemm.sh /work/data/matrices perf-results/run.jsonl      # knobs: ONLY=regex REPS THREADS TRIALS PEERS")
    p("scripts/perf_report.py perf-results/run.jsonl --title '...' [--baseline docs/perf-raw/PREVIOUS-RUN.jsonl] > docs/PERFORMANCE.md")
    p("# one product, every algorithm, with the self-check:")
    p("target/release/spgemm-bench spgemm --a A.mtx --b B.mtx|A --alg all --threads 2 --reps 5 --sorted 0|1")
    p("```")
    p("")
    p("Every libspgemm line is verified by spgemm-bench itself (`check`): multiplication count, structure "
      "of C (ranges, no duplicate columns, sorted when asked), sum(C) against sum_ik a_ik·rowsum(B_k) computed "
      "without forming C, ~200 rows (evenly spaced + the heaviest) recomputed by a plain reference, reuse picking "
      "up new values (A scaled by 2: C must scale exactly), and nnzC/sumabsC equal across our algorithms; the "
      "targets table also compares nnzC and sumabsC with MKL's.")
    print("\n".join(out))


if __name__ == "__main__":
    main()

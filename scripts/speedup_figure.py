"""Speed-up figures for the performance reports (scripts/perf_report.py, scripts/report_spmm.py).

draw(path, panels, title) writes an SVG: one panel per entry of `panels`, each a grouped bar
chart of speed-ups (peer time / libspgemm time) per input on a log axis with a line at 1x.
Returns None when written, else the reason it was skipped (matplotlib missing), so that the
reports still write their tables without it. The SVG is deterministic (no date, fixed ids),
so regenerating a report from the same raw runs changes no byte of it.
"""

import math
import os


def draw(path, panels, title):
    """panels: list of dicts with keys title, labels (x tick labels), series (list of
    (name, values) with one value or None per label), ylabel."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    except ImportError as e:
        return f"matplotlib is not installed ({e}); `pip install matplotlib` draws it"
    plt.rcParams["svg.hashsalt"] = "libspgemm-report"
    plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller files, greppable labels
    n = len(panels)
    width = max(8.0, 0.55 * max(len(p["labels"]) for p in panels) + 3)
    fig, axes = plt.subplots(n, 1, figsize=(width, 3.6 * n), squeeze=False)
    vals = [v for p in panels for _, vs in p["series"] for v in vs if v and v > 0 and math.isfinite(v)]
    lo = min(vals + [1.0]) / 1.25
    hi = max(vals + [1.0]) * 1.25
    ticks = [t for t in (0.25, 0.33, 0.5, 0.67, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0) if lo <= t <= hi]
    # one color per series name in every panel (a peer keeps its color when one is missing)
    names = list(dict.fromkeys(name for p in panels for name, _ in p["series"]))
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {name: palette[i % len(palette)] for i, name in enumerate(names)}
    for ax, p in zip(axes[:, 0], panels):
        labels, series = p["labels"], p["series"]
        k = max(1, len(series))
        bw = 0.8 / k
        for j, (name, vs) in enumerate(series):
            xs = [i - 0.4 + bw * (j + 0.5) for i in range(len(labels))]
            pts = [(x, v) for x, v in zip(xs, vs) if v and v > 0 and math.isfinite(v)]
            if not pts:
                continue
            # bars grow from the 1x line: up where libspgemm is faster, down where slower
            ax.bar([x for x, _ in pts], [v - 1.0 for _, v in pts], bottom=1.0, width=bw * 0.92, label=name,
                   color=color[name])
        ax.axhline(1.0, color="black", linewidth=1.0)
        ax.set_yscale("log")
        ax.set_ylim(lo, hi)
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}x"))
        ax.grid(axis="y", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.set_ylabel(p.get("ylabel", "speed-up"))
        ax.set_title(p["title"], fontsize=10)
        ax.legend(fontsize=8, ncol=min(k, 6), loc="upper left", frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
    if os.environ.get("REPORT_FIGURE_PNG"):
        fig.savefig(os.environ["REPORT_FIGURE_PNG"], format="png", dpi=90)
    plt.close(fig)
    return None

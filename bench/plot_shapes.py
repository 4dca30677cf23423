#!/usr/bin/env python3
"""bench/plot_shapes.py -- plot bench/shapes.sh results: GpuSort's speed-up
over the native Sort (default settings, and both tuned) for each shape,
one group of bars per result file (row count).

  python3 bench/plot_shapes.py OUT.png bench/results/shapes-1000000-h200.md ...
"""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    """{shape number: (what, rows, x_native, x_tuned)} of one result file."""
    rows = {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == 9 and re.fullmatch(r"\d+", cells[0]):
            n, what, nrows = int(cells[0]), cells[1], int(cells[2])
            xn = float(cells[7]) if cells[7] else None
            xt = float(cells[8]) if cells[8] else None
            rows[n] = (what, nrows, xn, xt)
    return rows


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    runs = [read(p) for p in paths]
    shapes = sorted({n for r in runs for n in r})
    names = {n: r[n][0] for r in runs for n in r}
    fig, axes = plt.subplots(2, 1, figsize=(14, 8), sharex=True)
    width = 0.8 / max(len(runs), 1)
    for ax, col, title in ((axes[0], 2, "GpuSort / native Sort, default settings"),
                           (axes[1], 3, "GpuSort / native Sort, both tuned (work_mem 1GB, 8 workers)")):
        for i, r in enumerate(runs):
            xs = [s + (i - (len(runs) - 1) / 2) * width for s in shapes if s in r and r[s][col]]
            ys = [r[s][col] for s in shapes if s in r and r[s][col]]
            label = f"{next(iter(r.values()))[1]:,} rows" if r else paths[i]
            ax.bar(xs, ys, width, label=label)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel("speed-up (x)")
        ax.set_title(title)
        ax.legend()
    axes[1].set_xticks(shapes)
    axes[1].set_xticklabels([f"{s} {names[s]}" for s in shapes], rotation=60, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()

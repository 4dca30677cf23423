#!/usr/bin/env python3
"""Plot bench/sort_bench's CSV: G pairs/s against n, one line per sort, one
panel per key width and distribution group.  Usage:
    plot_sort_bench.py sort_bench.csv sort_bench.png [title]"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src, dst = sys.argv[1], sys.argv[2]
title = sys.argv[3] if len(sys.argv) > 3 else ""
rows = list(csv.DictReader(open(src)))
dists = ["uniform", "banded20", "zero", "entropy-and4"]
widths = sorted({int(r["key_bits"]) for r in rows})
fig, axes = plt.subplots(len(widths), len(dists), figsize=(4.2 * len(dists), 3.6 * len(widths)),
                         squeeze=False)
for wi, bits in enumerate(widths):
    for di, dist in enumerate(dists):
        ax = axes[wi][di]
        lines = defaultdict(list)
        for r in rows:
            if int(r["key_bits"]) == bits and r["distribution"] == dist:
                lines[r["sort"]].append((int(r["n"]), float(r["gpairs_per_s"])))
        for sort, pts in sorted(lines.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=sort)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{bits}-bit keys, {dist}")
        ax.set_xlabel("n (pairs)")
        ax.set_ylabel("G pairs/s")
        ax.grid(True, which="both", alpha=0.3)
        if wi == 0 and di == 0:
            ax.legend(fontsize=8)
fig.suptitle(title)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("written:", dst)

#!/usr/bin/env python3
"""Medians of tools/bench-ab.sh's runs: python3 tools/bench-ab-summary.py OUT LABEL...

For each label, edge and concurrency of the gateway rows: added p50, throughput ratio to direct
and gateway CPU per call, each the median over the rounds (and every round's CPU figure)."""
import collections
import glob
import statistics
import sys


def micros(cell):
    cell = cell.strip().lstrip("+")
    if cell.endswith("ms"):
        return float(cell[:-2]) * 1000
    if cell.endswith("µs"):
        return float(cell[:-2])
    return float(cell.rstrip("%"))


out, labels = sys.argv[1], sys.argv[2:]
for label in labels:
    rows = collections.defaultdict(list)
    for path in sorted(glob.glob(f"{out}-{label}-*.md")):
        for line in open(path, encoding="utf-8"):
            c = [x.strip() for x in line.split("|")]
            if len(c) > 14 and c[1] in ("http", "stdio") and c[4] == "gateway":
                rows[(c[1], c[2], c[3])].append((micros(c[9]), micros(c[11]), micros(c[13])))
    for (backend, edge, conc), runs in sorted(rows.items()):
        med = lambda i: statistics.median(r[i] for r in runs)
        print(f"{label:12} {backend} {edge:6} c={conc:3} +p50 {med(0):6.0f} µs  ratio {med(1):3.0f}%"
              f"  gateway CPU/call {med(2):6.1f} µs  (runs: {', '.join(str(r[2]) for r in runs)})")

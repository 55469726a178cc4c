#!/usr/bin/env python3
"""Markdown tables (before -> after, % of cuMemcpyDtoD, planned grids) from ab_bench.py output."""
import re, sys
rows = {}
for l in open(sys.argv[1]):
    m = re.match(r'(\S+)\s+(\d+) (\S+)\s+c\d+ rows (\d+)->(\d+) planned\s+([\d.]+) ->\s+([\d.]+)', l)
    if m:
        t, w, op, r0, r1, b, a = m.groups()
        rows.setdefault((t, int(w)), {})[op] = (float(b), float(a))
ops = ["rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"]
for t in ("f32", "bf16", "f16"):
    print(f"\n| {t} width | " + " | ".join(ops) + " |\n|---:|" + "---|" * 5)
    for (tt, w), d in sorted(rows.items()):
        if tt == t:
            print(f"| {w} | " + " | ".join(
                (f"{d[o][0]:.1f} → **{d[o][1]:.1f}**" if d[o][1] >= (97 if w >= 128 else 90) else f"{d[o][0]:.1f} → {d[o][1]:.1f}")
                for o in ops) + " |")

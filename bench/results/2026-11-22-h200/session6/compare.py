#!/usr/bin/env python3
"""Before -> after tables from the final call's KernelBenchmark runs: final/bench-{old,new}-{1,2,3}.txt,
median over the rounds of each cell's % of that run's cuMemcpyDtoD (GB/s / copy GB/s)."""
import re, statistics, sys
OPS = ["rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"]
def read(path):
    cells = {}
    for line in open(path):
        m = re.match(r"(f32|bf16|f16)\s+(\d+)\s+\d+\s+(\d+)\s+\d+\s+\S+\s+\S+\s+(.*)", line)
        if m and "group" in line:
            t, w, copy, rest = m.groups()
            gbs = [float(x) for x in re.findall(r"(\d+) \(\s*\d+%\)", rest)]
            for op, g in zip(OPS, gbs):
                cells[(t, int(w), op)] = 100 * g / float(copy)
    return cells
runs = {v: [read(f"final/bench-{v}-{r}.txt") for r in (1, 2, 3)] for v in ("old", "new")}
med = {v: {k: statistics.median(run[k] for run in runs[v]) for k in runs[v][0]} for v in runs}
for t in ("f32", "bf16"):
    print(f"\n| {t} width | " + " | ".join(OPS) + " |\n|---:|" + "---|" * 5)
    for w in sorted({k[1] for k in med["new"] if k[0] == t}):
        cells = []
        for op in OPS:
            b, a = med["old"][(t, w, op)], med["new"][(t, w, op)]
            target = 97 if w >= 128 else 90
            cells.append(f"{b:.1f} → **{a:.1f}**" if round(a) >= target else f"{b:.1f} → {a:.1f}")
        print(f"| {w} | " + " | ".join(cells) + " |")
for v in ("old", "new"):
    n = sum(1 for (t, w, op), x in med[v].items() if round(x) >= (97 if w >= 128 else 90) and w != 300)
    print(f"\n{v}: {n} of {sum(1 for k in med[v] if k[1] != 300)} cells at the target (widths 32-1024 but 300)")

#!/usr/bin/env python3
"""The CPU thread-scaling table from the JMH CSVs of cpu-threads.sh in one folder: GB/s (read +
written, 2 x 256 MiB an operation) per op and width (rows) and thread count (columns), the speed-up
over one thread in brackets, the copy of the same bytes (the peer) as the first row, and one thread's
% of a one-thread copy. Prints markdown.

    python3 benchmarks/scripts/cpu_threads_table.py OUT     (cpu-threads.sh runs it)
"""
import csv
import glob
import os
import sys

BYTES_PER_OPERATION = 2 * 256 * 2**20


def read(path):
    rows = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            params = {k[len("Param: "):]: v for k, v in row.items() if k.startswith("Param: ") and v}
            rows.append((params, float(row["Score"]) * BYTES_PER_OPERATION / 1e9))
    return rows


def main(directory):
    copy = {int(p["threads"]): rate for p, rate in read(os.path.join(directory, "copy.csv"))}
    simd = {}
    for path in sorted(glob.glob(os.path.join(directory, "simd-*.csv"))):
        for p, rate in read(path):
            simd[(p["op"], int(p["width"]), int(p["threads"]))] = rate
    threads = sorted(copy)
    cells = sorted({(op, width) for (op, width, _) in simd}, key=lambda c: (c[0], c[1]))
    print("| op | width | " + " | ".join("%d thread%s" % (t, "" if t == 1 else "s") for t in threads)
          + " | 1 thread, % of a 1-thread copy |")
    print("|---|---:" + "|---:" * (len(threads) + 1) + "|")
    print("| copy | | " + " | ".join(cell(copy.get(t), copy.get(1)) for t in threads) + " | |")
    one = copy.get(1)
    for op, width in cells:
        single = simd.get((op, width, 1))
        row = [cell(simd.get((op, width, t)), single) for t in threads]
        share = "%.0f %%" % (100 * single / one) if single and one else "-"
        print("| %s | %d | %s | %s |" % (op, width, " | ".join(row), share))


def cell(rate, single):
    if rate is None:
        return "-"
    if single:
        return "%.1f (%.1f)" % (rate, rate / single)
    return "%.1f" % rate


if __name__ == "__main__":
    main(sys.argv[1])

"""Table of run.sh's CSVs: GB/s (read + written, 2 x 256 MiB an operation) per op, width and thread
count, the speed-up over one thread in brackets, and one thread's % of a one-thread copy."""
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
    print("| threads | copy | " + " | ".join("%s %d" % c for c in cells) + " |")
    print("|---:" * (len(cells) + 2) + "|")
    for t in threads:
        row = ["%d" % t, cell(copy.get(t), copy.get(1))]
        for op, width in cells:
            row.append(cell(simd.get((op, width, t)), simd.get((op, width, 1))))
        print("| " + " | ".join(row) + " |")
    one = copy.get(1)
    print()
    print("one thread, % of a one-thread copy: " + ", ".join(
        "%s %d %.0f %%" % (op, width, 100 * simd[(op, width, 1)] / one)
        for op, width in cells if (op, width, 1) in simd and one))


def cell(rate, single):
    if rate is None:
        return "-"
    if single:
        return "%.1f (%.1f)" % (rate, rate / single)
    return "%.1f" % rate


if __name__ == "__main__":
    main(sys.argv[1])

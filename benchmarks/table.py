"""Turns the JMH CSV results of run.sh into one table of GB/s (read + write bytes, 2 x 256 MiB per op)."""
import csv
import glob
import os
import sys

BYTES_PER_OPERATION = 2 * 256 * 2**20
OPS = ["rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"]


def read(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            params = {k[len("Param: "):]: v for k, v in row.items() if k.startswith("Param: ") and v}
            rate = float(row["Score"]) * BYTES_PER_OPERATION / 1e9
            error = row.get("Score Error (99.9%)") or "nan"
            rows.append((params, rate))
    return rows


def main(directory):
    copy = {p["threads"]: rate for p, rate in read(os.path.join(directory, "copy.csv"))}
    simd = {(p["op"], p["width"], p["threads"]): r for p, r in read(os.path.join(directory, "simd.csv"))}
    scalar = {(p["op"], p["width"]): r for p, r in read(os.path.join(directory, "scalar.csv"))}
    arrow = read(os.path.join(directory, "arrow.csv"))
    copy1 = copy.get("1")
    copy2 = copy.get("2")
    print()
    print("copy of the same bytes: 1 thread %s GB/s, 2 threads %s GB/s" % (fmt(copy1), fmt(copy2)))
    print()
    print("| op | width | scalar 1T GB/s | SIMD 1T GB/s | SIMD 1T % of 1T copy | SIMD 2T GB/s | 2T / 1T |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    widths = sorted({int(w) for (_, w, _) in simd} | {int(w) for (_, w) in scalar})
    for op in OPS:
        for width in widths:
            w = str(width)
            one = simd.get((op, w, "1"))
            two = simd.get((op, w, "2"))
            plain = scalar.get((op, w))
            if one is None and plain is None:
                continue
            percent = "%.0f %%" % (100 * one / copy1) if one and copy1 else "-"
            scaling = "%.2f" % (two / one) if one and two else "-"
            print("| %s | %d | %s | %s | %s | %s | %s |" % (op, width, fmt(plain), fmt(one), percent, fmt(two), scaling))
    if arrow:
        print()
        print("| Arrow end to end (default engine, 2 threads) | width | rows per vector | GB/s | % of 2T copy |")
        print("|---|---:|---:|---:|---:|")
        for params, rate in arrow:
            percent = "%.0f %%" % (100 * rate / copy2) if copy2 else "-"
            rows = params.get("batchRows", "0")
            rows = "all (256 MiB)" if rows == "0" else rows
            print("| %s | %s | %s | %s | %s |" % (params["op"], params["width"], rows, fmt(rate), percent))


def fmt(value):
    return "-" if value is None else "%.2f" % value


if __name__ == "__main__":
    main(sys.argv[1])

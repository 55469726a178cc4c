#!/usr/bin/env python3
r"""The GPU kernel table: per type (f32, bf16, f16) and row width, each op's effective bandwidth
(bytes read once + written once, over time) as % of a device-to-device copy that its own run measured,
our kernels (io.embednorm.benchmarks.KernelBenchmark) next to PyTorch eager and torch.compile
(torch_ops.py, same shapes), plus how many of our cells meet the targets (>= 97 % of the copy from
width 128, >= 90 % below). Prints markdown.

Here, then on the GPU host (OUT: the folder the host returns), then here again:
    benchmarks/scripts/gpu-bundle.sh benchmarks
    .gpu/java -cp "$(.gpu/cp)" io.embednorm.benchmarks.KernelBenchmark --types f32,bf16,f16 --rounds 5 \
        > "$OUT/kernel-bench.txt"
    python3 benchmarks/scripts/torch_ops.py --dtypes float32,bfloat16 --json "$OUT/torch.json"
    python3 benchmarks/scripts/kernel_table.py OUT/kernel-bench.txt [OUT/torch.json]
"""
import json
import re
import sys

OPS = ["rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"]
TORCH_TYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
ROW = re.compile(r"^(f32|bf16|f16|f64)\s+(\d+)\s+(\d+)\s+(\d+)\s+(.*)$")


def harness(path):
    cells = {}
    for line in open(path):
        match = ROW.match(line)
        if not match:
            continue
        type_name, width, copy = match.group(1), int(match.group(2)), float(match.group(4))
        percents = [float(p) for p in re.findall(r"\(\s*(\d+)%\)", match.group(5))]
        if len(percents) == len(OPS):
            cells[(type_name, width)] = (copy, dict(zip(OPS, percents)))
    return cells


def torch_cells(path):
    cells = {}
    if path:
        for entry in json.load(open(path)):
            copy = entry["copy_gbs"]
            cells[(entry["dtype"], entry["width"])] = {
                op: (100 * entry[op + "_eager_gbs"] / copy, 100 * entry[op + "_compile_gbs"] / copy)
                for op in OPS if op + "_eager_gbs" in entry
            }
    return cells


def main():
    ours = harness(sys.argv[1])
    peers = torch_cells(sys.argv[2] if len(sys.argv) > 2 else None)
    for type_name in ["f32", "bf16", "f16"]:
        widths = sorted(width for (t, width) in ours if t == type_name)
        if not widths:
            continue
        with_torch = any((TORCH_TYPES[type_name], w) in peers for w in widths)
        what = "our kernel / torch eager / torch.compile" if with_torch else "our kernel"
        print(f"#### {type_name}: {what}, % of the copy\n")
        print("| width | copy GB/s | " + " | ".join(OPS) + " |")
        print("|---:|---:|" + "---|" * len(OPS))
        met = total = 0
        for width in widths:
            copy, percents = ours[(type_name, width)]
            torch_row = peers.get((TORCH_TYPES[type_name], width), {})
            cells = []
            for op in OPS:
                cell = f"**{percents[op]:.0f}**"
                if op in torch_row:
                    eager, compiled = torch_row[op]
                    cell += f" / {eager:.0f} / {compiled:.0f}"
                cells.append(cell)
                target = 90 if width < 128 else 97
                total += 1
                met += percents[op] >= target
            print(f"| {width} | {copy:.0f} | " + " | ".join(cells) + " |")
        print(f"\n{met} of {total} cells meet the target (>= 97 % from width 128, >= 90 % below).\n")


if __name__ == "__main__":
    main()

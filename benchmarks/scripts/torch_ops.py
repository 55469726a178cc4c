#!/usr/bin/env python3
"""The PyTorch peers of the GPU kernel table: PyTorch eager and torch.compile versions of embednorm's
five ops (rms_norm, layer_norm, softmax, log_softmax, l2_normalize) on the GPU host.

Same shapes as io.embednorm.benchmarks.KernelBenchmark (about 1 GiB of input per width), CUDA events,
warm-up, median of many repeats. Effective bandwidth = bytes read once + written once, over time; % of
a device-to-device copy measured in the same run. kernel_table.py puts them next to our kernels.
Prints a line per shape; --json writes the figures (name a file in the folder the host returns).

    python3 benchmarks/scripts/torch_ops.py [--dtypes float32,bfloat16,float16] [--widths 32,128,...]
                                            [--gib 1] [--no-compile] [--json "$OUT/torch.json"]
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F

WIDTHS = [32, 64, 128, 256, 300, 512, 768, 769, 1024, 2048, 4096, 8192, 16384, 32768]
OPS = {
    "rms_norm": lambda x: F.rms_norm(x, (x.shape[-1],), None, 1e-6),
    "layer_norm": lambda x: F.layer_norm(x, (x.shape[-1],), None, None, 1e-5),
    "softmax": lambda x: torch.softmax(x, -1),
    "log_softmax": lambda x: torch.log_softmax(x, -1),
    "l2_normalize": lambda x: F.normalize(x, 2.0, -1, 1e-12),
}


def median_ms(fn, warmup=5, repeats=30):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtypes", default="float32,bfloat16,float16")
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    device = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    results = []
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        size = torch.tensor([], dtype=dtype).element_size()
        for width in map(int, args.widths.split(",")):
            rows = max(1, int(args.gib * 2**30 / (width * size)))
            x = torch.randn(rows, width, device=device, dtype=dtype)
            out = torch.empty_like(x)
            moved = 2 * x.numel() * size
            copy_ms = median_ms(lambda: out.copy_(x))
            row = {"dtype": dtype_name, "width": width, "rows": rows,
                   "copy_gbs": moved / copy_ms / 1e6}
            for name, op in OPS.items():
                eager_ms = median_ms(lambda: op(x))
                row[f"{name}_eager_gbs"] = moved / eager_ms / 1e6
                if not args.no_compile:
                    # A fresh compile per shape: past Dynamo's recompile limit it silently runs eager.
                    torch._dynamo.reset()
                    compiled = torch.compile(op, dynamic=False)
                    compiled_ms = median_ms(lambda: compiled(x))
                    row[f"{name}_compile_gbs"] = moved / compiled_ms / 1e6
            results.append(row)
            cells = " ".join(
                f"{name}={row[f'{name}_eager_gbs']:.0f}/{row.get(f'{name}_compile_gbs', float('nan')):.0f}"
                for name in OPS)
            print(f"{dtype_name:9s} D={width:6d} copy={row['copy_gbs']:.0f} GB/s  eager/compile: {cells}",
                  flush=True)
            del x, out
            torch.cuda.empty_cache()
            if args.json:  # after every shape, so that a run cut short keeps what it measured
                with open(args.json, "w") as handle:
                    json.dump(results, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

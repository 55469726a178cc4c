#!/usr/bin/env python3
"""The torch peer of the Arrow pipeline table (Arrow -> GPU -> Arrow), on the GPU host.

Host data in pinned tensors, several GiB of float32 rows; for each chunk of rows:
x.cuda(non_blocking=True) -> op -> copy into a pinned host output (non_blocking), synchronize at the end.
"torch, 1 stream" is the plain loop (everything on the default stream, so nothing overlaps);
"torch, 3 streams" puts chunk i on stream i % 3, the same overlap embednorm uses.
Rate = input bytes / wall time, next to the pinned copy bandwidths measured in the same run. Our side
and the ceiling (half the pinned duplex copy rate) come from io.embednorm.benchmarks.PipelineBenchmark,
run on the same host; pass its ceiling as --ceiling-gbs to print % of it. Prints to stdout.

    benchmarks/scripts/gpu-bundle.sh benchmarks       # here; then, on the GPU host:
    .gpu/java -Xmx24g -cp "$(.gpu/cp)" io.embednorm.benchmarks.PipelineBenchmark --gib 4 --repeats 3 --chunks-mib 8,16,32,64
    python3 benchmarks/scripts/torch_pipeline.py [--widths 768,4096] [--gib 4] [--chunk-mib 16] [--op rms_norm]
"""
import argparse
import statistics
import time

import torch

from torch_ops import OPS  # the same five ops as the kernel peer (this script's folder is on sys.path)



def wall(fn, repeats):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def copies(host, repeats=5):
    device = torch.empty_like(host, device="cuda")
    nbytes = host.numel() * host.element_size()
    upload = nbytes / wall(lambda: device.copy_(host, non_blocking=True), repeats)
    download = nbytes / wall(lambda: host.copy_(device, non_blocking=True), repeats)
    return upload, download


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--widths", default="768,4096")
    parser.add_argument("--gib", type=float, default=4)
    parser.add_argument("--chunk-mib", type=int, default=16)
    parser.add_argument("--op", default="rms_norm")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ceiling-gbs", type=float, default=0,
                        help="half the duplex copy rate from PipelineBenchmark, to print % of it")
    args = parser.parse_args()
    op = OPS[args.op]
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, {args.op}, "
          f"{args.gib} GiB float32 per width, chunks of {args.chunk_mib} MiB, median of {args.repeats}")
    for width in [int(w) for w in args.widths.split(",")]:
        rows = int(args.gib * (1 << 30)) // (width * 4)
        host_in = torch.empty((rows, width), dtype=torch.float32, pin_memory=True)
        host_in.uniform_(-4, 4)
        host_out = torch.empty_like(host_in).pin_memory()
        chunk_rows = max(1, args.chunk_mib * (1 << 20) // (width * 4))
        nbytes = rows * width * 4
        up, down = copies(host_in[: min(rows, 512 * (1 << 20) // (width * 4))])
        print(f"\nwidth {width}: {nbytes / (1 << 30):.2f} GiB; copy pinned: up {up / 1e9:.1f} GB/s, "
              f"down {down / 1e9:.1f} GB/s")
        streams = [torch.cuda.Stream() for _ in range(3)]

        def one_stream():
            for start in range(0, rows, chunk_rows):
                x = host_in[start:start + chunk_rows].cuda(non_blocking=True)
                host_out[start:start + chunk_rows].copy_(op(x), non_blocking=True)

        def three_streams():
            for index, start in enumerate(range(0, rows, chunk_rows)):
                with torch.cuda.stream(streams[index % 3]):
                    x = host_in[start:start + chunk_rows].cuda(non_blocking=True)
                    host_out[start:start + chunk_rows].copy_(op(x), non_blocking=True)

        for name, fn in (("torch, 1 stream", one_stream), ("torch, 3 streams", three_streams)):
            rate = nbytes / wall(fn, args.repeats)
            ceiling = f"  {100 * rate / (args.ceiling_gbs * 1e9):6.1f} % of ceiling" if args.ceiling_gbs else ""
            print(f"{name:<20} {rate / 1e9:8.1f} GB/s in{ceiling}")
        del host_in, host_out
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

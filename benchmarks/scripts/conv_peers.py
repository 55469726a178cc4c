#!/usr/bin/env python3
"""The peers of causal_conv on the GPU host, in one run with embednorm's kernel: torch conv1d
(groups = C, left padding T - 1), torch.compile of it and the RWKV-CUDA article's final kernel
(BF = 1, 2, 4, 8 sequences a thread), all at B32 C768 T768 float32, run by executing
../shared/peers/rwkv_article_kernel.py as it documents (it prints JSON), then embednorm's kernel
in the same process: with --fatbin, the causal_conv fatbin (or cubin) the build writes, launched
through CuPy as CudaCausalConvolution launches it and checked against float64; with --java,
io.embednorm.benchmarks.ConvolutionBenchmark. Prints one summary line; --json writes every figure
(name a file in the folder the host returns).

    python3 benchmarks/scripts/conv_peers.py [--peer ../shared/peers/rwkv_article_kernel.py]
        [--fatbin cuda-kernels/target/classes/io/embednorm/engine/cuda/causal_conv.fatbin]
        [--java '.gpu/java -cp "$(.gpu/cp)"'] [--json "$OUT/conv.json"]
"""
import argparse
import contextlib
import io
import json
import re
import runpy
import subprocess


def time_fatbin(path, rounds=3, repeats=50):
    """Median ms of embednorm's kernel at B32 C768 T768 (inputs like the peer's), launched as the
    launcher does, and its largest error relative to sum |w k| against float64."""
    import math
    import cupy as cp
    import numpy as np
    import torch
    import torch.nn.functional as F

    module = cp.RawModule(path=path)
    geometry = [int(v) for v in cp.asnumpy(cp.ndarray(
        (5,), cp.int32, module.get_global("embednorm_causal_conv_geometry")))]
    threads, shared, channels_per_block, sequences_per_block, steps_per_block = geometry
    kernel = module.get_function("embednorm_causal_conv_f32")
    kernel.max_dynamic_shared_size_bytes = shared
    B, C, T = 32, 768, 768
    torch.manual_seed(0)
    w = torch.rand(C, T, device="cuda") * 0.1                 # the article's (C, T)
    k = torch.randn(B, T, C, device="cuda")                   # ours: (B, T, C)
    lag_weights = w.flip(1).t().contiguous()                  # (T, C): w[c][T - 1 - L]
    out = torch.full_like(k, float("nan"))
    blocks = (math.ceil(T / steps_per_block) * math.ceil(C / channels_per_block)
              * math.ceil(B / sequences_per_block))
    arguments = (cp.asarray(k), cp.asarray(out), cp.asarray(lag_weights), np.int32(B), np.int32(T),
                 np.int32(C), np.float32(0))
    launch = lambda: kernel((blocks,), (threads,), arguments, shared_mem=shared)
    launch()
    torch.cuda.synchronize()
    kk = k.double().permute(0, 2, 1)
    reference = F.conv1d(F.pad(kk, (T - 1, 0)), w.double().unsqueeze(1), groups=C)
    magnitude = F.conv1d(F.pad(kk.abs(), (T - 1, 0)), w.double().unsqueeze(1), groups=C)
    error = ((out.double().permute(0, 2, 1) - reference).abs() / magnitude.clamp_min(1e-30)).max()
    for _ in range(5):
        launch()
    medians = []
    for _ in range(rounds):
        times = []
        for _ in range(repeats):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            launch()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        medians.append(sorted(times)[len(times) // 2])
    return sorted(medians)[len(medians) // 2], error.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer", default="../shared/peers/rwkv_article_kernel.py")
    parser.add_argument("--fatbin", help="the causal_conv fatbin or cubin to time through CuPy")
    parser.add_argument("--java", help="the java command and class path that run the benchmarks jar")
    parser.add_argument("--json")
    arguments = parser.parse_args()

    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        runpy.run_path(arguments.peer, run_name="__main__")
    peers = json.loads(captured.getvalue()[captured.getvalue().index("{"):])
    results = {"peers": peers}
    line = (f"{peers['gpu']}: torch conv1d {peers['torch_conv1d_ms']:.3f} ms, torch.compile "
            f"{peers['torch_compile_ms']:.3f} ms, article BF8 {peers['seed_BF8_ms']:.3f} ms")
    floor_ms = 2 * 32 * 768 * 768 * 769 / 2 / 67e12 * 1e3  # the H100 SXM's 67 TFLOP/s float32
    if arguments.fatbin:
        ours, error = time_fatbin(arguments.fatbin)
        results["embednorm_fatbin_ms"] = ours
        results["embednorm_fatbin_max_error"] = error
        line += (f", embednorm (fatbin) {ours:.3f} ms, max error {error:.1e} of sum|w*k|:"
                 f" {peers['seed_BF8_ms'] / ours:.2f}x the article's,"
                 f" {peers['torch_conv1d_ms'] / ours:.1f}x conv1d, {floor_ms / ours:.0%} of the"
                 f" float32 floor ({floor_ms:.3f} ms)")
    if arguments.java:
        text = subprocess.run(arguments.java + " io.embednorm.benchmarks.ConvolutionBenchmark",
                              shell=True, check=True, capture_output=True, text=True).stdout
        print(text.strip())
        ours = float(re.search(r"gpu kernel ([0-9.]+) ms", text).group(1))
        results["embednorm_ms"] = ours
        results["embednorm_line"] = text.strip()
        line += (f", embednorm {ours:.3f} ms: {peers['seed_BF8_ms'] / ours:.2f}x the article's,"
                 f" {peers['torch_conv1d_ms'] / ours:.1f}x conv1d, {floor_ms / ours:.0%} of the"
                 f" float32 floor ({floor_ms:.3f} ms)")
    print(line)
    if arguments.json:
        with open(arguments.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()

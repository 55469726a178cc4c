#!/usr/bin/env python3
"""The peers of causal_conv on the GPU host, in one run with embednorm's kernel: torch conv1d
(groups = C, left padding T - 1), torch.compile of it and the RWKV-CUDA article's final kernel
(BF = 1, 2, 4, 8 sequences a thread), all at B32 C768 T768 float32, run by executing
../shared/peers/rwkv_article_kernel.py as it documents (it prints JSON), then, with --java,
io.embednorm.benchmarks.ConvolutionBenchmark in the same call. Prints one summary line;
--json writes every figure (name a file in the folder the host returns).

    python3 benchmarks/scripts/conv_peers.py [--peer ../shared/peers/rwkv_article_kernel.py]
        [--java '.gpu/java -cp "$(.gpu/cp)"'] [--json "$OUT/conv.json"]
"""
import argparse
import contextlib
import io
import json
import re
import runpy
import subprocess


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer", default="../shared/peers/rwkv_article_kernel.py")
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
    if arguments.java:
        text = subprocess.run(arguments.java + " io.embednorm.benchmarks.ConvolutionBenchmark",
                              shell=True, check=True, capture_output=True, text=True).stdout
        print(text.strip())
        ours = float(re.search(r"gpu ([0-9.]+) ms", text).group(1))
        results["embednorm_ms"] = ours
        results["embednorm_line"] = text.strip()
        floor_ms = 2 * 32 * 768 * 768 * 769 / 2 / 67e12 * 1e3  # the H100 SXM's 67 TFLOP/s float32
        line += (f", embednorm {ours:.3f} ms: {peers['seed_BF8_ms'] / ours:.2f}x the article's,"
                 f" {peers['torch_conv1d_ms'] / ours:.1f}x conv1d, {floor_ms / ours:.0%} of the"
                 f" float32 floor ({floor_ms:.3f} ms)")
    print(line)
    if arguments.json:
        with open(arguments.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()

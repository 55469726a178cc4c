#!/usr/bin/env bash
# Fused normalize-then-encode against its memory bound and its PyTorch peer, in one run on the GPU
# host (after benchmarks/scripts/gpu-bundle.sh benchmarks; see docs/PERFORMANCE.md): EncodeBenchmark
# (each op x encoding x width against a device-to-device copy moving as many bytes, CUDA events),
# the CPU engine on the same widths (CpuEncodeBenchmark, against a host copy on as many threads),
# then the peer (PyTorch eager and torch.compile of l2_normalize + int8, against a copy timed in the
# same process). Raw output goes to OUTPUT_DIR (default $OUT).
#   benchmarks/scripts/encode-bench.sh [PEER_SCRIPT] [OUTPUT_DIR]
# PEER_SCRIPT defaults to ../shared/peers/quantize_torch.py (copy it into the tree that travels).
set -euo pipefail
peer=${1:-../shared/peers/quantize_torch.py}
output=${2:-${OUT:?set OUT or name an output folder}}
mkdir -p "$output"
nvidia-smi --query-gpu=name,clocks.max.memory --format=csv,noheader | tee "$output/encode-gpu.txt"
.gpu/java -cp "$(.gpu/cp)" io.embednorm.benchmarks.EncodeBenchmark \
  --widths 128,768,4096 --ops l2_normalize,rms_norm --encodings float16,bfloat16,int8,binary \
  --gib 1 --repeats 30 | tee "$output/encode-bench.txt"
# The trap limit of conf/jvm.options, under which the SIMD encoders (and float16 kernels) stay off.
.gpu/java -XX:PerMethodTrapLimit=1000 -cp "$(.gpu/cp)" io.embednorm.benchmarks.CpuEncodeBenchmark \
  --widths 128,768,4096 --ops l2_normalize,rms_norm --mib 256 --repeats 10 | tee "$output/encode-cpu.txt"
PYTHONUNBUFFERED=1 python3 "$peer" | tee "$output/quantize-torch.json"

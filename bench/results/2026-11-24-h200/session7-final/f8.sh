#!/usr/bin/env bash
# Session-7 final call (H200), on the branch's final state: every test class of the module on the branch's bundle (GpuTestRunner,
# no tag filter: the GPU tests and the CPU ones), the full KernelBenchmark table (f32, bf16, f16, all
# widths), then torch eager and torch.compile (bench/torch_ops.py). Runs from a carried folder
# (.gpu-s7) holding .gpu-jre, .gpu and this script; raw files to $OUT/f8.tgz, saved after each step.
set -u
cd "$(dirname "$0")"
R=/tmp/f8out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/f8.tgz -C $R .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 330 .gpu/gpu-test > $R/gpu-tests-all.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted|skipped)' $R/gpu-tests-all.txt | tr -s ' ' | tr '\n' ' ')"
timeout 100 .gpu/java -cp "$(.gpu/cp)" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16,f16 > $R/kernel-bench.txt 2>&1
save "full bench rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
left=$((560 - ($(date +%s) - START)))
PYTHONUNBUFFERED=1 timeout $left python3 ../bench/torch_ops.py --dtypes float32,bfloat16 --json $R/torch.json > $R/torch.txt 2>&1 &
p=$!; while kill -0 $p 2>/dev/null; do sleep 20; tar czf $OUT/f8.tgz -C $R .; done; wait $p
save "torch rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
save end

#!/usr/bin/env bash
# Session-5 final run (H200, one call): every test class, the harness over f32/bf16/f16 at all 14
# widths, then torch eager and torch.compile. Raw files go to $OUT/f5.tgz after each step.
set -u
B=$(cd "$(dirname "$0")" && pwd)
R=/tmp/f5out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/f5.tgz -C $R .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 300 $B/gpu-test --details=summary > $R/gpu-tests-all.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted|skipped)' $R/gpu-tests-all.txt | tr -s ' ' | tr '\n' ' ')"
timeout 120 $B/java -cp "$($B/cp)" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16,f16 > $R/kernel-bench.txt 2>&1
save "bench rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
PYTHONUNBUFFERED=1 timeout $((580 - ($(date +%s) - START))) python3 $B/torch_ops.py --dtypes float32,bfloat16 --json $R/torch.json > $R/torch.txt 2>&1 &
p=$!; while kill -0 $p 2>/dev/null; do sleep 20; tar czf $OUT/f5.tgz -C $R .; done; wait $p
save "torch rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
save end

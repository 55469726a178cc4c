#!/usr/bin/env bash
# 2026-11-25 (evening session), call 6 (H100): the session's final jar. The full table with
# --rounds 3 (copy and every op timed three times in turn per width; medians of GB/s and of the
# share of the same round's copy), then every test tagged gpu in cuda-kernels and arrow-bridge.
set -u
R=/tmp/t6out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t6.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 200 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --rounds 3 > $R/kernel-bench.txt 2>&1
save "bench rc=$?"
timeout 380 .gpu/gpu-test > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

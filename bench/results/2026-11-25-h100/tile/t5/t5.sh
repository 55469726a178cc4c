#!/usr/bin/env bash
# 2026-11-25 (later session), call 5: the final jar (tile path for contiguous unaligned rows; the
# pipelined variant removed). The full KernelBenchmark table (f32, bf16, f16), then every JUnit
# test tagged gpu in the bundle (cuda-kernels and arrow-bridge). Raw files to $OUT/t5.tgz.
set -u
R=/tmp/t5out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t5.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 90 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/kernel-bench.txt 2>&1
save "full bench rc=$?"
timeout 450 .gpu/gpu-test --include-tag gpu > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted|skipped)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

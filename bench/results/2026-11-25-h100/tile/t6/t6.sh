#!/usr/bin/env bash
# 2026-11-25 (later session), call 6 (H100): host pins that share a page hold each other's
# registrations and copies split where registrations meet (call 5: GpuPipelineGpuTest failed with
# CUDA_ERROR_INVALID_VALUE in cuMemcpyDtoHAsync). Every test tagged gpu, then the table at the
# unaligned widths on the final kernels. Raw files to $OUT/t6.tgz.
set -u
R=/tmp/t6out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t6.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 450 .gpu/gpu-test --include-tag gpu > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted|skipped)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"
timeout 60 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --widths 300,769 > $R/bench.txt 2>&1
save "bench rc=$?"

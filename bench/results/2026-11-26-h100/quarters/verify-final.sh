#!/usr/bin/env bash
# To run first in the next session with device time (H100): the jar of the 2026-11-25 evening's
# last commit has never run as a whole (its kernels are byte for byte those of that evening's calls
# 6 and 7-8). The full table with --rounds 5, then every test tagged gpu in cuda-kernels and
# arrow-bridge (with the widths 8196, 12000, 16392 and 20000 added to CudaEngineGpuTest, and its
# IEEE edge cases in every element type).
#   bench/gpu-bundle.sh cuda-kernels arrow-bridge; send .gpu-jre, then .gpu with this script.
set -u
R=/tmp/verify; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/verify.tgz -C $R .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 150 .gpu/java -cp "$(.gpu/cp)" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16,f16 --rounds 5 > $R/kernel-bench.txt 2>&1
save "bench rc=$?"
timeout 420 .gpu/gpu-test > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

#!/usr/bin/env bash
# 2026-11-25 (evening session), call 7 (H100): the cluster kernels' rms_norm and layer_norm scale
# from sum * (1 / width), which removes the 12-byte spill of the two-block rms_norm kernel of 128
# bytes a thread (f32 32768). The full table with --rounds 3, f32 8192-32768 with --rounds 5, then
# the CudaEngine GPU tests.
set -u
R=/tmp/t7out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t7.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 120 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --rounds 3 > $R/kernel-bench.txt 2>&1
save "bench rc=$?"
timeout 60 .gpu/java -cp "$(.gpu/cp)" $K --types f32 --widths 8192,16384,32768 --rounds 5 > $R/kernel-bench-wide.txt 2>&1
save "bench wide rc=$?"
timeout 330 .gpu/gpu-test --include-tag gpu --include-classname '.*CudaEngineGpuTest' > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

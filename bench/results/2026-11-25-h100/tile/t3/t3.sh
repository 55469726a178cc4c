#!/usr/bin/env bash
# 2026-11-25 (later session), call 3 (H100): tile kernels of 10-32 values a lane (the fewest that hold the row)
# KernelBenchmark --alternatives at unaligned widths 300, 383, 511, 701, 769, 1023
# (planned against warp-row, and tile kernels x run sizes 24-48 KiB), the planned table at those
# widths, then the dispatch-path and unaligned-start tests. Raw files to $OUT/t3.tgz.
set -u
R=/tmp/t3out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t3.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
P="(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 240 .gpu/java -cp "$(.gpu/cp)" $K --alternatives --types bf16,f16,f32 --widths 300,383,511,701,769,1023 --repeats 20 > $R/alternatives.txt 2>&1
save "alternatives rc=$?"
timeout 90 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --widths 300,383,511,701,769,1023 > $R/bench.txt 2>&1
save "bench rc=$?"
timeout 240 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#everyDispatchPathGivesTheSameAnswer$P" \
  --select-method "$T#unalignedRowStartsTakeTheScalarPath$P" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

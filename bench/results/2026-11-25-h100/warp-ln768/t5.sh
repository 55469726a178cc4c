#!/usr/bin/env bash
# 2026-11-25 (evening session), call 5 (H100): 2-byte layer_norm on the warp path at three packs a
# lane with the empty asm between passes (117 -> 80 registers) and three blocks an SM. Three rounds
# of the table at 512-1024 for bf16 and f16, then the warp rows-per-lane and dispatch-path tests.
set -u
R=/tmp/t5out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t5.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
P="(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
for round in 1 2 3; do
  timeout 60 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --widths 300,512,768,769,1024 > $R/bench-$round.txt 2>&1
  save "bench $round rc=$?"
done
timeout 240 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#everyWarpKernelHoldsTheRowsPerLaneThePlannerCounts" \
  --select-method "$T#everyDispatchPathGivesTheSameAnswer$P" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

#!/usr/bin/env bash
# 2026-11-25 (evening session), call 3 (H100): cluster kernels summing in four partials a thread,
# tile kernels loading a run's head and tail before storing them. Two rounds of the full planned
# table, two of 16384-32768 with -Dembednorm.gpu.clusterWide=true (LayerNorm on 128 bytes a
# thread), then the dispatch-path test.
set -u
R=/tmp/t3out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t3.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
P="(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
for round in 1 2; do
  timeout 90 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/bench-planned-$round.txt 2>&1
  save "bench planned $round rc=$?"
  timeout 60 .gpu/java -Dembednorm.gpu.clusterWide=true -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --widths 16384,32768 > $R/bench-true-$round.txt 2>&1
  save "bench true $round rc=$?"
done
timeout 240 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#everyDispatchPathGivesTheSameAnswer$P" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

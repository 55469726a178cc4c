#!/usr/bin/env bash
# 2026-11-25 (later session), call 7 (H200): the final jar (tile path; pins that share pages). The
# full KernelBenchmark table, then the planner tests (memory bandwidth: H200 over 4.5 TB/s; the tile
# path by type, op and bandwidth) and the dispatch-path test (every tile kernel on this device).
# Raw files to $OUT/t7.tgz.
set -u
R=/tmp/t7out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t7.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
P="(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 90 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/kernel-bench.txt 2>&1
save "full bench rc=$?"
timeout 300 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#warpGridFollowsTheMemoryBandwidth" \
  --select-method "$T#unalignedContiguousRowsTakeTheTilePathByTypeOpAndBandwidth" \
  --select-method "$T#everyDispatchPathGivesTheSameAnswer$P" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

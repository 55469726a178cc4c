#!/usr/bin/env bash
# 2026-11-25 (later session), call 9 (H100): the final jar (tile path; 128-byte cluster kernels
# for float32 rows of 8193-32768 but layer_norm on memory under 4 TB/s). The full KernelBenchmark
# table twice, then the planner tests and the 2^31-element test. Raw files to $OUT/t9.tgz.
set -u
R=/tmp/t9out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t9.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
for round in 1 2; do
  timeout 60 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/kernel-bench-$round.txt 2>&1
  save "full bench $round rc=$?"
done
timeout 200 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#warpGridFollowsTheMemoryBandwidth" \
  --select-method "$T#wideFloat32RowsTakeClusterKernelsOf128BytesAThreadOnSlowerMemory" \
  --select-method "$T#unalignedContiguousRowsTakeTheTilePathByTypeOpAndBandwidth" \
  --select-method "$T#moreThanTwoToTheThirtyOneElements" \
  --select-method "$T#edgeCasesFollowIeeeLikeTheReference" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

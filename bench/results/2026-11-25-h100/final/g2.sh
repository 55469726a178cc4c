#!/usr/bin/env bash
# 2026-11-25, call 4 (H100): the final jar (warp path one pass for every lockstep kernel on memory
# under 4 TB/s). The full KernelBenchmark table; 2 alternating rounds at the six-packs widths
# (2-byte 1032-1792) of the default against -Dembednorm.gpu.warpGrid=mixed (the H200's mix); then
# the new grid test and the every-width test of CudaEngineGpuTest (planned launches against the
# float64 reference and the CPU engine). Raw files to $OUT/g2.tgz.
set -u
R=/tmp/g2out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/g2.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 60 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/kernel-bench.txt 2>&1
save "full bench rc=$?"
for round in 1 2; do
  for grid in planned mixed; do
    timeout 40 .gpu/java -Dembednorm.gpu.warpGrid=$grid -cp "$(.gpu/cp)" $K --types bf16,f16 --widths 1032,1280,1536,1792 > $R/bench-$grid-$round.txt 2>&1
    save "bench $grid $round rc=$?"
  done
done
timeout 200 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#warpGridFollowsTheMemoryBandwidth" \
  --select-method "$T#everyWidthMatchesTheReferenceAndTheCpuEngine(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"
head -2 $R/kernel-bench.txt | tail -1

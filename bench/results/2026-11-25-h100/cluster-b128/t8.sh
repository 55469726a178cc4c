#!/usr/bin/env bash
# 2026-11-25 (later session), call 8 (H100): cluster kernels of 128 bytes a thread (_b128) for
# float32 rows of 16384-32768 (one block of 512, or a cluster of two such blocks, two of them an SM)
# against the planned 64-byte clusters (2 x 512 at 16384, 2 x 1024 at 32768). KernelBenchmark
# --alternatives, then 2 alternating rounds of the table at 8192-32768 with and without
# -Dembednorm.gpu.clusterWide=true, then the dispatch-path test (the _b128 kernels against the
# float64 reference). Raw files to $OUT/t8.tgz.
set -u
R=/tmp/t8out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t8.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
P="(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 120 .gpu/java -cp "$(.gpu/cp)" $K --alternatives --types f32 --widths 16384,32768 --repeats 20 > $R/alternatives.txt 2>&1
save "alternatives rc=$?"
for round in 1 2; do
  for wide in false true; do
    timeout 40 .gpu/java -Dembednorm.gpu.clusterWide=$wide -cp "$(.gpu/cp)" $K --types f32 --widths 8192,16384,32768 > $R/bench-wide-$wide-$round.txt 2>&1
    save "bench wide=$wide $round rc=$?"
  done
done
timeout 240 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#everyDispatchPathGivesTheSameAnswer$P" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

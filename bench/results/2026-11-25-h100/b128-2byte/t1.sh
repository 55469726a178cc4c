#!/usr/bin/env bash
# 2026-11-25 (evening session), call 1 (H100): cluster kernels that keep the row as loaded 32-bit
# words with an empty asm between passes (2-byte _b128 kernels no longer spill), so 128 bytes a
# thread for 2-byte rows too. KernelBenchmark --alternatives (f32, bf16 at 16384 and 32768), then
# 2 alternating rounds of the table at 8192-32768 with -Dembednorm.gpu.clusterWide=false / true and
# true with a cluster per row, then the dispatch-path test. Raw files to $OUT/t1.tgz.
set -u
R=/tmp/t1out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t1.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
P="(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
for t in f32 bf16; do
  timeout 130 .gpu/java -cp "$(.gpu/cp)" $K --alternatives --types $t --widths 16384,32768 --repeats 20 > $R/alternatives-$t.txt 2>&1
  save "alternatives $t rc=$?"
done
for round in 1 2; do
  for mode in false true perRow; do
    flags="-Dembednorm.gpu.clusterWide=$mode"
    [ $mode = perRow ] && flags="-Dembednorm.gpu.clusterWide=true -Dembednorm.gpu.clusterGrid=perRow"
    timeout 60 .gpu/java $flags -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --widths 8192,16384,32768 > $R/bench-$mode-$round.txt 2>&1
    save "bench $mode $round rc=$?"
  done
done
timeout 240 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#everyDispatchPathGivesTheSameAnswer$P" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

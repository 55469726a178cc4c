#!/usr/bin/env bash
# Warp-row path, second round: GPU tests on the new jar, then new (A) / B (2 rows from 4
# packs a lane) / C (4 rows up to 2 packs) at the unaligned widths, 3 alternating rounds.
set -u
B=$(cd "$(dirname "$0")" && pwd)
R=/tmp/unout2; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/un2.tgz -C $R .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 300 $B/java -cp "$B/lib/*:$B/new/kernels.jar:$B/new/tests.jar" org.junit.platform.console.ConsoleLauncher execute \
  --select-class io.embednorm.kernels.cuda.CudaEngineGpuTest --include-tag gpu \
  --disable-banner --disable-ansi-colors --details=summary > $R/gpu-test.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-test.txt | tr -s ' ' | tr '\n' ' ')"
for round in 1 2 3; do
  for v in new B C; do
    timeout 90 $B/java -cp "$B/lib/*:$B/$v/kernels.jar" io.embednorm.kernels.cuda.KernelBenchmark --types bf16,f16 --widths 300,769 > $R/bench-$v-$round.txt 2>&1
    save "bench $v $round rc=$?"
    timeout 60 $B/java -Dembednorm.gpu.warpRowTypes=all -cp "$B/lib/*:$B/$v/kernels.jar" io.embednorm.kernels.cuda.KernelBenchmark --types f32 --widths 769 > $R/bench-f32row-$v-$round.txt 2>&1
  done
done
save end

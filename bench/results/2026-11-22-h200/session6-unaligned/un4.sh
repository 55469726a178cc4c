#!/usr/bin/env bash
# Warp-row path, final call: the GPU tests of CudaEngineGpuTest on the final jar (float32 unaligned
# rows on the warp-row path too, narrow warp-row kernels at 64 registers), then the full
# KernelBenchmark table twice.
set -u
B=$(cd "$(dirname "$0")" && pwd)
R=/tmp/unout4; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/un4.tgz -C $R .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 300 $B/java -cp "$B/lib/*:$B/new/kernels.jar:$B/new/tests.jar" org.junit.platform.console.ConsoleLauncher execute \
  --select-class io.embednorm.kernels.cuda.CudaEngineGpuTest --include-tag gpu \
  --disable-banner --disable-ansi-colors --details=summary > $R/gpu-test.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-test.txt | tr -s ' ' | tr '\n' ' ')"
for round in 1 2; do
  for v in new; do
    timeout 120 $B/java -cp "$B/lib/*:$B/$v/kernels.jar" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16,f16 > $R/bench-$v-$round.txt 2>&1
    save "bench $v $round rc=$?"
  done
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
save end

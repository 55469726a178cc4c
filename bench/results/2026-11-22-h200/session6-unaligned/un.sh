#!/usr/bin/env bash
# Unaligned rows (warp-row path held in registers): GPU tests on the new jar, then old vs new
# KernelBenchmark at the unaligned widths, 3 alternating rounds; raw output to $OUT/un.tgz.
set -u
B=$(cd "$(dirname "$0")" && pwd)
R=/tmp/unout; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/un.tgz -C $R .; }
CPNEW="$B/lib/*:$B/new/kernels.jar:$B/new/tests.jar"
CPOLD="$B/lib/*:$B/old/kernels.jar"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 300 $B/java -cp "$CPNEW" org.junit.platform.console.ConsoleLauncher execute \
  --select-class io.embednorm.kernels.cuda.CudaEngineGpuTest --include-tag gpu \
  --disable-banner --disable-ansi-colors --details=summary > $R/gpu-test.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-test.txt | tr -s ' ' | tr '\n' ' ')"
for round in 1 2 3; do
  for v in old new; do
    if [ $v = old ]; then cp="$CPOLD"; else cp="$CPNEW"; fi
    timeout 90 $B/java -cp "$cp" io.embednorm.kernels.cuda.KernelBenchmark --types bf16,f16,f32 --widths 300,769 > $R/bench-$v-$round.txt 2>&1
    save "bench $v $round rc=$?"
  done
  timeout 60 $B/java -Dembednorm.gpu.warpRowTypes=all -cp "$CPNEW" io.embednorm.kernels.cuda.KernelBenchmark --types f32 --widths 769 > $R/bench-newf32row-$round.txt 2>&1
  save "bench newf32row $round rc=$?"
done
save end

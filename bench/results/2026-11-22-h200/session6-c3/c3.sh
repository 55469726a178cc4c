#!/usr/bin/env bash
# Three packs a lane on the warp path (c3): CudaEngineGpuTest on the new jar, then main (old) vs
# new at widths 300 and 768, 3 alternating rounds; raw output to $OUT/c3.tgz.
set -u
B=$(cd "$(dirname "$0")" && pwd)
R=/tmp/c3out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/c3.tgz -C $R .; }
save start
for round in 1 2 3; do
  for v in old new; do
    timeout 90 $B/java -cp "$B/lib/*:$B/$v/kernels.jar" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16,f16 --widths 300,768 > $R/bench-$v-$round.txt 2>&1
    save "bench $v $round rc=$?"
  done
done
timeout 300 $B/java -cp "$B/lib/*:$B/new/kernels.jar:$B/new/tests.jar" org.junit.platform.console.ConsoleLauncher execute \
  --select-class io.embednorm.kernels.cuda.CudaEngineGpuTest --include-tag gpu \
  --disable-banner --disable-ansi-colors --details=summary > $R/gpu-test.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-test.txt | tr -s ' ' | tr '\n' ' ')"
save end

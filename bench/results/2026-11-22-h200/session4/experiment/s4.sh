#!/usr/bin/env bash
# Session-4 device run (H200, one call): the GPU tests on the candidate jar F1 (and F2 if time
# allows), KernelBenchmark alternating the old kernels (OLD), F1 on its one-pass warp grid, F1 on
# the resident warp grid (-Dembednorm.gpu.residentWarpGrid=true) and F2 (F1 with the float64
# fallback inlined), and a copy-kernel grid sweep. Raw files go to $OUT/s4.tgz after each step.
set -u
B=$(cd "$(dirname "$0")" && pwd)
R=/tmp/s4out; mkdir -p $R
START=$(date +%s)
DEPS=$(ls $B/lib/*.jar | grep -v 'embednorm-cuda-kernels' | tr '\n' ':')
F1="${DEPS}$B/lib/embednorm-cuda-kernels-0.1.0-SNAPSHOT.jar"
F2="${DEPS}$B/f2/embednorm-cuda-kernels-f2.jar"
OLD="${DEPS}$B/old/embednorm-cuda-kernels-exp.jar"
TESTS=$B/lib/embednorm-cuda-kernels-tests.jar
J=$B/java
left() { echo $((575 - ($(date +%s) - START))); }
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/s4.tgz -C $R .; }
tests() {  # jar-classpath name seconds
  timeout "$3" $J -cp "$1:$TESTS" org.junit.platform.console.ConsoleLauncher execute \
    --select-class io.embednorm.kernels.cuda.CudaEngineGpuTest --disable-banner \
    --disable-ansi-colors --details=summary > $R/gpu-tests-$2.txt 2>&1
  save "tests $2 rc=$?: $(grep -E 'tests (successful|failed|aborted|skipped)' $R/gpu-tests-$2.txt | tr -s ' ' | tr '\n' ' ')"
}
bench() {  # name classpath [java options]
  local name=$1 cp=$2; shift 2
  timeout 50 $J "$@" -cp "$cp" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16 > $R/bench-$name.txt 2>&1
  save "bench $name rc=$?"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
tests "$F1" f1 240
for round in 1 2; do
  bench old-$round "$OLD"
  bench f1-$round "$F1"
  bench f1res-$round "$F1" -Dembednorm.gpu.residentWarpGrid=true
  bench f2-$round "$F2"
  [ $round = 1 ] && { timeout 40 $J -cp "$OLD" io.embednorm.kernels.cuda.RowsExperiment copysweep 3 > $R/copysweep.txt 2>&1; save "copysweep rc=$?"; }
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
if [ "$(left)" -gt 60 ]; then tests "$F2" f2 "$(left)"; else save "no time for the F2 tests"; fi
save end

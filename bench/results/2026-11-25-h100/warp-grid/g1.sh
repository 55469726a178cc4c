#!/usr/bin/env bash
# 2026-11-25, call 3 (H100): the warp path's grid on the device. KernelBenchmark at the
# warp-path widths, 3 alternating rounds of -Dembednorm.gpu.warpGrid=planned (main: one pass or
# resident per kernel, chosen on an H200), =onePass and =resident. The jar of call 1 with
# -Dembednorm.gpu.clusterPrefetch=none is main's plan. Raw files to $OUT/g1.tgz.
set -u
R=/tmp/g1out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/g1.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
for round in 1 2 3; do
  for grid in planned onePass resident; do
    timeout 60 .gpu/java -Dembednorm.gpu.clusterPrefetch=none -Dembednorm.gpu.warpGrid=$grid -cp "$(.gpu/cp)" $K --types bf16,f16,f32 --widths 32,64,128,256,512,768,1024,2048 > $R/bench-$grid-$round.txt 2>&1
    save "bench $grid $round rc=$?"
  done
done
save end

#!/usr/bin/env bash
# Session 7, call 2: the warp path at 2-byte widths 1032-2048 after the fixes of call 1 (layer_norm
# re-widens its raw rows between passes at six and eight packs: no spill; six packs on a resident
# grid) against the block path (-Dembednorm.gpu.twoByteWarpPacks=4, main's plan), 3 alternating
# rounds. Runs from a carried folder (.gpu-s7) holding .gpu-jre, .gpu and this script.
set -u
cd "$(dirname "$0")"
R=/tmp/s7bout; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/s7b.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
W=1032,1280,1536,1792,2048
bench() {  # name, java options...
  local name=$1; shift
  timeout 120 .gpu/java "$@" -cp "$(.gpu/cp)" $K --types bf16,f16 --widths $W > $R/bench-$name.txt 2>&1
  save "bench $name rc=$?"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
for round in 1 2 3; do
  bench block-$round -Dembednorm.gpu.twoByteWarpPacks=4
  bench warp-$round
done
save end

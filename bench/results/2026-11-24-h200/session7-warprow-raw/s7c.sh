#!/usr/bin/env bash
# Session 7, call 3: unaligned 2-byte rows on the warp-row path held raw (16-byte packs as loaded,
# widened at each use) with 2, 3 or 4 rows a warp at two packs a lane (widths 257-512) and 1 or 2
# at four (513-1024), against the path as it is (rows widened, 2 rows at two packs, 1 at four).
# -Dembednorm.gpu.warpRowRaw picks the variant. KernelBenchmark at 300, 500, 769, bf16 and f16.
# Runs from a carried folder (.gpu-s7) holding .gpu-jre, .gpu and this script.
set -u
cd "$(dirname "$0")"
R=/tmp/s7cout; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/s7c.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
bench() {  # name, java options...
  local name=$1; shift
  timeout 120 .gpu/java "$@" -cp "$(.gpu/cp)" $K --types bf16,f16 --widths 300,500,769 > $R/bench-$name.txt 2>&1
  save "bench $name rc=$?"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
for round in 1 2 3; do
  bench base-$round
  bench raw2-$round -Dembednorm.gpu.warpRowRaw=c2=raw2,c4=raw1
  bench raw3-$round -Dembednorm.gpu.warpRowRaw=c2=raw3,c4=raw2
  bench raw4-$round -Dembednorm.gpu.warpRowRaw=c2=raw4
done
save end

#!/usr/bin/env bash
# Session 7, call 1: 2-byte rows of 129-256 packs (widths 1032-2048) on the warp path (six and
# eight packs a lane) against the block path they took before (-Dembednorm.gpu.twoByteWarpPacks=4,
# main's plan, same jar), 3 alternating rounds; then c8 in place of c6, both warp grids, the block
# and cluster alternatives; then CudaEngineGpuTest. Runs from a carried folder (.gpu-s7) holding .gpu-jre, .gpu and this script; raw output to $OUT/s7.tgz.
set -u
cd "$(dirname "$0")"  # the carried folder holding .gpu-jre and .gpu
R=/tmp/s7out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/s7.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
W=1032,1280,1536,1792,2048
bench() {  # name, java options...
  local name=$1; shift
  timeout 120 .gpu/java "$@" -cp "$(.gpu/cp)" $K --types bf16,f16 --widths $W > $R/bench-$name.txt 2>&1
  save "bench $name rc=$?"
}
nvidia-smi > $R/smi.txt 2>&1
save start
for round in 1 2 3; do
  bench block-$round -Dembednorm.gpu.twoByteWarpPacks=4
  bench warp-$round
done
for round in 1 2; do
  bench eight-$round -Dembednorm.gpu.sixPacks=false
  bench onepass-$round -Dembednorm.gpu.warpGrid=onePass
  bench resident-$round -Dembednorm.gpu.warpGrid=resident
done
timeout 150 .gpu/java -Dembednorm.gpu.twoByteWarpPacks=4 -cp "$(.gpu/cp)" $K --types bf16 --widths 1536,2048 --alternatives > $R/alternatives-block.txt 2>&1
save "alternatives rc=$?"
timeout 330 .gpu/java -cp "$(.gpu/cp)" GpuTestRunner --tag gpu io.embednorm.kernels.cuda.CudaEngineGpuTest > $R/gpu-test.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-test.txt | tr -s ' ' | tr '\n' ' ')"
nvidia-smi -q -d CLOCK > $R/clocks.txt 2>&1
save end

#!/usr/bin/env bash
# 2026-11-25 (evening session), call 2 (H100): the planner after call 1 (128 bytes a thread for
# float32 16384 in every op, float32 32768 and 2-byte 32768 but LayerNorm; two-block 128-byte rows
# on a cluster per row). Two rounds of the full table, Nsight Compute on the slow 128-byte
# LayerNorm kernels against fast neighbours, then the cuda-kernels tests tagged gpu.
set -u
R=/tmp/t2out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t2.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
for round in 1 2; do
  timeout 90 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/bench-planned-$round.txt 2>&1
  save "bench planned $round rc=$?"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
prof() { # name type width op
  timeout 90 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats \
    -k regex:embednorm_cluster --launch-skip 2 --launch-count 1 \
    .gpu/java -Dembednorm.gpu.clusterWide=true -cp "$(.gpu/cp)" $K --types $2 --widths $3 --ops $4 --repeats 3 --gib 0.25 > $R/ncu-$1.txt 2>&1
  save "ncu $1 rc=$?"
}
prof bf16-32768-layer_norm bf16 32768 layer_norm
prof bf16-32768-rms_norm bf16 32768 rms_norm
prof f32-16384-layer_norm f32 16384 layer_norm
prof f32-32768-layer_norm f32 32768 layer_norm
timeout 330 .gpu/gpu-test --include-tag gpu > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

#!/usr/bin/env bash
# 2026-11-25 (later session), call 1 (H100): the tile path for contiguous unaligned rows. First the
# dispatch-path and unaligned-start tests (every op and type: the tile kernels against the float64
# reference, guard bytes around the output), then KernelBenchmark --alternatives at widths 300 and
# 769 (the planned tile plan against the warp-row plan and tile sizes/grids), then the planned
# table at 300 and 769. Raw files to $OUT/t1.tgz, saved after each step.
set -u
R=/tmp/t1out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t1.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
P="(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 240 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#everyDispatchPathGivesTheSameAnswer$P" \
  --select-method "$T#unalignedRowStartsTakeTheScalarPath$P" > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"
timeout 150 .gpu/java -cp "$(.gpu/cp)" $K --alternatives --types f32,bf16,f16 --widths 300,769 --repeats 20 > $R/alternatives.txt 2>&1
save "alternatives rc=$?"
timeout 60 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --widths 256,300,512,768,769,1024 > $R/bench.txt 2>&1
save "bench rc=$?"
timeout 60 .gpu/java -Dembednorm.gpu.tilePath=false -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --widths 300,769 > $R/bench-warprow.txt 2>&1
save "bench warp-row rc=$?"

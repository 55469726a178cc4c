#!/usr/bin/env bash
# 2026-11-25 (evening session), call 4 (H100): the planner with 128 bytes a thread for float32
# 16384-32768 and 2-byte 32768 in every op (LayerNorm included, now that the cluster kernels sum
# in four partials). Two rounds of the full table, alternatives for the cells still under 97 %,
# then every test tagged gpu in cuda-kernels and arrow-bridge.
set -u
R=/tmp/t4out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t4.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 90 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/kernel-bench-1.txt 2>&1
save "bench 1 rc=$?"
timeout 60 .gpu/java -cp "$(.gpu/cp)" $K --alternatives --types bf16,f16 --widths 768 --ops layer_norm > $R/alternatives-768.txt 2>&1
save "alternatives 768 rc=$?"
timeout 60 .gpu/java -cp "$(.gpu/cp)" $K --alternatives --types f32 --widths 32768 --ops rms_norm,layer_norm > $R/alternatives-32768.txt 2>&1
save "alternatives 32768 rc=$?"
timeout 90 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/kernel-bench-2.txt 2>&1
save "bench 2 rc=$?"
timeout 400 .gpu/gpu-test > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"

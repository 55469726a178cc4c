#!/usr/bin/env bash
# 2026-11-25 (evening session), call 8 (H100): the final jar (call 7's), the full table with
# --rounds 5 (copy and every op five times in turn per width; medians).
set -u
R=/tmp/t8out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/t8.tgz -C $R .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 150 .gpu/java -cp "$(.gpu/cp)" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16,f16 --rounds 5 > $R/kernel-bench.txt 2>&1
save "bench rc=$?"

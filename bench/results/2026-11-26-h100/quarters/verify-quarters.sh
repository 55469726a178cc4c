#!/usr/bin/env bash
# float32 rows of 16385-32768 over four blocks of 256 (k4_b128): the planned kernels against
# -Dembednorm.gpu.wideClusterBlock=512 (two of 512) at 32768 in two turns, then the full table with
# --rounds 5, then every test tagged gpu in cuda-kernels and arrow-bridge.
#   bench/gpu-bundle.sh cuda-kernels arrow-bridge; send .gpu-jre, then .gpu with this script.
set -u
R=/tmp/verify; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/verify.tgz -C $R .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
ab() { timeout 60 .gpu/java "$@" -cp "$(.gpu/cp)" io.embednorm.kernels.cuda.KernelBenchmark \
  --types f32 --widths 16384,32768 --rounds 5; }
for turn in 1 2; do
  ab > $R/quarters-$turn.txt 2>&1
  ab -Dembednorm.gpu.wideClusterBlock=512 > $R/halves-$turn.txt 2>&1
done
save "a/b done"
timeout 150 .gpu/java -cp "$(.gpu/cp)" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16,f16 --rounds 5 > $R/kernel-bench.txt 2>&1
save "bench rc=$?"
timeout 420 .gpu/gpu-test > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"
cd $R && for f in quarters-*.txt halves-*.txt; do grep -E "^f32 " $f | sort -u | awk -v f=$f '{r=$4; printf "%-14s %s %s:", f, $1,$2; n=0; for(i=7;i<=NF;i++) if ($i ~ /^[0-9]+$/ && n<5) {printf " %.1f", 100*$i/r; n++} print " " $NF}'; done

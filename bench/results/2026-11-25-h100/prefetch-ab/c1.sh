#!/usr/bin/env bash
# 2026-11-25, call 1 (H200 or H100): the cluster path with the next row prefetched into shared
# memory (cp.async, the _pf kernels). CudaEngineGpuTest on the new jar; then KernelBenchmark at the
# cluster-path widths, 3 alternating rounds of -Dembednorm.gpu.clusterPrefetch=none (main's plan),
# =persistent (_pf only where the grid was persistent) and =all (the new default); then the full
# table on the default. Run from the repository root with .gpu-jre and .gpu carried
# (bench/gpu-bundle.sh cuda-kernels). Raw files to $OUT/c1.tgz, saved after each step.
set -u
R=/tmp/c1out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/c1.tgz -C $R .; }
K=io.embednorm.kernels.cuda.KernelBenchmark
W=2048,4096,8192,16384,32768
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 240 .gpu/gpu-test --include-tag gpu --include-classname '.*CudaEngineGpuTest' > $R/gpu-tests.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted|skipped)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')"
for round in 1 2 3; do
  for mode in none persistent all; do
    timeout 60 .gpu/java -Dembednorm.gpu.clusterPrefetch=$mode -cp "$(.gpu/cp)" $K --types f32,bf16,f16 --widths $W > $R/bench-$mode-$round.txt 2>&1
    save "bench $mode $round rc=$?"
  done
done
timeout 100 .gpu/java -cp "$(.gpu/cp)" $K --types f32,bf16,f16 > $R/kernel-bench.txt 2>&1
save "full bench rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
save end
grep -E 'tests (successful|failed)' $R/gpu-tests.txt
for f in $R/bench-*-3.txt; do echo "== $f"; grep -E '^(f32|bf16|f16) ' $f | awk '{print $1, $2, $10, $13, $16, $19, $22, $23}'; done

#!/usr/bin/env bash
# Session-6 final call (H200): every test class of the module on this branch's bundle; KernelBenchmark
# of main's build (OLD: an overlay jar of main's fatbin, sm_90 only, and LaunchPlan classes ahead of
# this branch's jar) and this branch's (NEW), alternating, f32/bf16 at widths 32-1024; the full table
# (f32, bf16, f16, all widths) on NEW; then torch eager and torch.compile. Raw files to $OUT/f6.tgz.
set -u
B=$(cd "$(dirname "$0")" && pwd)
R=/tmp/f6out; mkdir -p $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/f6.tgz -C $R .; }
NEW="$($B/cp)"
OLD="$B/old/*:$NEW"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
save start
timeout 280 $B/gpu-test --details=summary > $R/gpu-tests-all.txt 2>&1
save "tests rc=$?: $(grep -E 'tests (successful|failed|aborted|skipped)' $R/gpu-tests-all.txt | tr -s ' ' | tr '\n' ' ')"
bench() {  # name classpath
  timeout 60 $B/java -cp "$2" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16 --widths 32,64,128,256,300,512,768,1024 > $R/bench-$1.txt 2>&1
  save "bench $1 rc=$?"
}
for round in 1 2 3; do
  if [ $round = 2 ]; then bench new-$round "$NEW"; bench old-$round "$OLD"
  else bench old-$round "$OLD"; bench new-$round "$NEW"; fi
done
timeout 90 $B/java -cp "$NEW" io.embednorm.kernels.cuda.KernelBenchmark --types f32,bf16,f16 > $R/kernel-bench.txt 2>&1
save "full bench rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
left=$((570 - ($(date +%s) - START)))
PYTHONUNBUFFERED=1 timeout $left python3 bench/torch_ops.py --dtypes float32,bfloat16 --json $R/torch.json > $R/torch.txt 2>&1 &
p=$!; while kill -0 $p 2>/dev/null; do sleep 20; tar czf $OUT/f6.tgz -C $R .; done; wait $p
save "torch rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
save end

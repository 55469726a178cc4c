#!/usr/bin/env bash
# Session-6 device call 4: the shipped warp kernels of main (OLD) and of this branch (NEW), built
# as sm_90 cubins here, timed with ab_bench.py (both grids, planned grid marked, outputs compared).
set -u
E=$(cd "$(dirname "$0")" && pwd)
R=/tmp/s6b; mkdir -p $R/old $R/new; cd $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/s6b.tgz --exclude='*.cubin' --exclude='*.cu' -C $R . 2>/dev/null; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
for v in old new; do
  sed '/^EMBEDNORM_OP(/d' $E/$v.cu > $R/$v/base.cu
  for t in "f32 float 4" "bf16 __nv_bfloat16 8" "f16 __half 8"; do set -- $t
    for op in "rms_norm kRmsNorm" "layer_norm kLayerNorm" "softmax kSoftmax" "log_softmax kLogSoftmax" "l2_normalize kL2Normalize"; do set -- $t $op
      f=$R/$v/$1_$4.cu; echo '#include "base.cu"' > $f
      for c in 1 2 4 8; do [ $1 != f32 ] && [ $c = 8 ] && continue; echo "EMBEDNORM_WARP($4, $5, $1, $2, $3, $c)" >> $f; done
      (nvcc -O3 -std=c++17 -diag-suppress 177 -gencode arch=compute_90,code=sm_90 -cubin -Xptxas -v $f -o ${f%.cu}.cubin > ${f%.cu}.ptxas 2>&1 || echo "FAILED $f") &
    done
  done
done
wait
cat $R/new/*.ptxas > $R/ptxas-new.txt; cat $R/old/*.ptxas > $R/ptxas-old.txt; grep -h error $R/ptxas-new.txt | head
save "compiled $(ls $R/old/*.cubin $R/new/*.cubin | wc -l)"
PYTHONUNBUFFERED=1 timeout 400 python3 $E/ab_bench.py $R/old $R/new f32,bf16,f16 32,64,128,256,300,512,768,1024 3 > $R/ab.txt 2>&1
save "ab rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
save end

#!/usr/bin/env bash
# Session-6 call 7: this branch's warp kernels (sm_90 cubins built here) at other launch shapes.
set -u
E=$(cd "$(dirname "$0")" && pwd)
R=/tmp/s6c; mkdir -p $R/new; cd $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/s6c.tgz --exclude='*.cubin' --exclude='*.cu' -C $R . 2>/dev/null; }
sed '/^EMBEDNORM_OP(/d' $E/new.cu > $R/new/base.cu
for t in "f32 float 4" "bf16 __nv_bfloat16 8" "f16 __half 8"; do
  for op in "rms_norm kRmsNorm" "layer_norm kLayerNorm" "softmax kSoftmax" "log_softmax kLogSoftmax" "l2_normalize kL2Normalize"; do set -- $t $op
    f=$R/new/$1_$4.cu; echo '#include "base.cu"' > $f
    for c in 1 2 4 8; do [ $1 != f32 ] && [ $c = 8 ] && continue; echo "EMBEDNORM_WARP($4, $5, $1, $2, $3, $c)" >> $f; done
    (nvcc -O3 -std=c++17 -diag-suppress 177 -gencode arch=compute_90,code=sm_90 -cubin $f -o ${f%.cu}.cubin > ${f%.cu}.log 2>&1 || echo "FAILED $f") &
  done
done
wait
save "compiled $(ls $R/new/*.cubin | wc -l)"
PYTHONUNBUFFERED=1 timeout 300 python3 $E/shape_bench.py $R/new f32,bf16,f16 32,64,128,256 3 > $R/shapes.txt 2>&1
save "shapes rc=$?"
save end

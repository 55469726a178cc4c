#!/usr/bin/env bash
# Session-6 device call 1: build the lockstep variants (sm_90 cubins, in parallel), time them
# against the shipped warp kernels on both grids, then dump torch.compile's bf16 layer_norm.
set -u
E=$(cd "$(dirname "$0")" && pwd)
R=/tmp/s6a; mkdir -p $R/cubin; cd $R
START=$(date +%s)
save() { echo "$(date -u +%T) +$(( $(date +%s) - START ))s $*" | tee -a $R/log.txt; tar czf $OUT/s6a.tgz --exclude='*.cubin' --exclude='tu_*.cu' --exclude=base.cu -C $R . 2>/dev/null; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
sed '/^EMBEDNORM_OP(/d' $E/embednorm_kernels.cu > $R/cubin/base.cu
(cd $R/cubin && python3 $E/gen_variants.py 16 && cp manifest.json ..)
save "generated"
for i in $(seq 0 15); do
  (cd $R/cubin && nvcc -O3 -std=c++17 -diag-suppress 177 -gencode arch=compute_90,code=sm_90 -cubin -Xptxas -v tu_$i.cu -o tu_$i.cubin > ptxas_$i.txt 2>&1 || echo "TU $i FAILED") &
done
wait
cat $R/cubin/ptxas_*.txt > $R/ptxas.txt; grep -h "error" $R/ptxas.txt | head -20
save "compiled: $(ls $R/cubin/*.cubin | wc -l) cubins"
ls $R/cubin/*.cubin >/dev/null 2>&1 || exit 1
PYTHONUNBUFFERED=1 timeout 330 python3 $E/lockstep_bench.py $R/cubin f16,bf16 32,64,128,256,512,768,1024 3 > $R/bench.txt 2>&1
save "bench rc=$?"


nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/smi.txt 2>&1
save end

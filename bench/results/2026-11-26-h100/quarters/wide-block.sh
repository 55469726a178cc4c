#!/usr/bin/env bash
# Rows of 128 bytes a thread in blocks of 512 (planned) against blocks of 256 (a cluster of 2 or 4
# per row): float32 16384 and 32768, 2-byte 32768, in turns, five rounds each.
set -u
R=/tmp/wide; mkdir -p $R
bench() { timeout 100 .gpu/java "$@" -cp "$(.gpu/cp)" io.embednorm.kernels.cuda.KernelBenchmark \
  --types f32,bf16,f16 --widths 16384,32768 --rounds 5; }
for turn in 1 2; do
  bench > $R/planned-$turn.txt 2>&1
  bench -Dembednorm.gpu.wideClusterBlock=256 > $R/block256-$turn.txt 2>&1
done
tar czf $OUT/wide.tgz -C $R .

#!/usr/bin/env bash
# 2026-11-25 (later session), call 11 (H100): after the review's simplification of the tile
# kernels' loads (the head and tail stored straight into shared memory, as before the pipelined
# variant split them off): the dispatch-path and unaligned-start tests. Raw files to $OUT/t11.tgz.
set -u
R=/tmp/t11out; mkdir -p $R
T=io.embednorm.kernels.cuda.CudaEngineGpuTest
P="(io.embednorm.kernels.ElementType,io.embednorm.kernels.Op)"
timeout 280 .gpu/java -cp "$(.gpu/cp)" org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --select-method "$T#everyDispatchPathGivesTheSameAnswer$P" \
  --select-method "$T#unalignedRowStartsTakeTheScalarPath$P" > $R/gpu-tests.txt 2>&1
echo "tests rc=$?: $(grep -E 'tests (successful|failed|aborted)' $R/gpu-tests.txt | tr -s ' ' | tr '\n' ' ')" | tee $R/log.txt
tar czf $OUT/t11.tgz -C $R .

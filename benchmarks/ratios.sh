#!/usr/bin/env bash
# The CPU engine as a share of a copy of the same bytes, copy and op timed in turn in one JVM per
# cell (RatioHarness): every op at widths 32, 128, 768, 4096, 32768 over 256 MiB of float32, on 1
# and 2 threads, the SIMD passes from the start. Prints a line per cell.
#   benchmarks/ratios.sh [ROUNDS] [OPS] [WIDTHS]    e.g. benchmarks/ratios.sh 7 layer_norm 768,4096
# EMBEDNORM_JAVA_OPTS adds JVM options to every cell's JVM.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
rounds=${1:-7}
ops=${2:-rms_norm,layer_norm,softmax,log_softmax,l2_normalize}
widths=${3:-32,128,768,4096,32768}
(cd "$root" && mvn -B -q package -DskipTests -Dembednorm.cpuOnly -pl benchmarks -am)
echo "op           width  T  copy GB/s    op GB/s  % of copy: median (lowest-highest) of $rounds rounds"
for op in ${ops//,/ }; do
  for width in ${widths//,/ }; do
    java --add-modules jdk.incubator.vector -XX:PerMethodTrapLimit=1000 -Dembednorm.cpu.warmup=false -Xmx2g ${EMBEDNORM_JAVA_OPTS:-} \
      -XX:MaxDirectMemorySize=2g -cp "$here/target/benchmarks.jar" \
      io.embednorm.benchmarks.RatioHarness "$op" "$width" "$rounds" 2>/dev/null
  done
done

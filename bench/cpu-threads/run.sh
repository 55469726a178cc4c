#!/usr/bin/env bash
# Thread scaling of the CPU engine on a many-core host, e.g. the GPU host's CPUs (no JDK there: the
# jlink'd runtime of ../shared/gpu/bundle.sh in .gpu-jre). JMH's copy of 256 MiB and the SIMD engine
# per op, width and thread count; CSV and logs into OUT, then a table of GB/s and speed-ups.
#
#   bench/cpu-threads/run.sh OUT [OPS] [WIDTHS] [THREADS]      (from the repository root)
#
# Needs benchmarks/target/benchmarks.jar (mvn -B -q package -DskipTests -Dembednorm.cpuOnly -pl
# benchmarks -am). JAVA overrides the java binary (default .gpu-jre/bin/java, else java).
set -euo pipefail
out="$1"
ops="${2:-rms_norm,layer_norm,softmax,log_softmax,l2_normalize}"
widths="${3:-32,768,4096}"
threads="${4:-1,2,4,8,16}"
java="${JAVA:-$([ -x .gpu-jre/bin/java ] && echo .gpu-jre/bin/java || echo java)}"
jar=benchmarks/target/benchmarks.jar
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
common=(-f 1 -wi 1 -i 3 -w 1 -r 1)
if [ ! -f "$out/copy.csv" ]; then
  "$java" -jar "$jar" CopyBenchmark -p threads="$threads" "${common[@]}" \
    -rf csv -rff "$out/copy.csv" >"$out/copy.log" 2>&1
fi
tag="$(echo "$ops" | tr ',' '-')"
"$java" -jar "$jar" SimdEngineBenchmark -p op="$ops" -p width="$widths" -p threads="$threads" \
  "${common[@]}" -rf csv -rff "$out/simd-$tag.csv" >"$out/simd-$tag.log" 2>&1
python3 "$here/table.py" "$out"

#!/usr/bin/env bash
# The CPU thread-scaling table: the SIMD CPU engine (JMH SimdEngineBenchmark) per op, width and thread
# count over 256 MiB of float32, against its peer, a plain copy of the same bytes on the same threads
# (JMH CopyBenchmark). JMH's CSV and logs go to OUT (default benchmarks/target/cpu-threads, ignored);
# cpu_threads_table.py then prints GB/s with the speed-up over one thread, and one thread's % of a
# one-thread copy. Meant for a many-core host, e.g. the GPU host's CPUs, which have no JDK: there it
# runs on the jlink'd runtime in .gpu-jre (benchmarks/scripts/gpu-bundle.sh), with
# benchmarks/target/benchmarks.jar sent along.
#
#   benchmarks/scripts/cpu-threads.sh [OUT] [OPS] [WIDTHS] [THREADS]
#   e.g. benchmarks/scripts/cpu-threads.sh "$OUT/threads" rms_norm,softmax 32,768,4096 1,2,4,8,16
#
# Needs benchmarks/target/benchmarks.jar (mvn -B -q package -DskipTests -Dembednorm.cpuOnly -pl
# benchmarks -am). JAVA overrides the java binary (default .gpu-jre/bin/java if present, else java).
# A copy.csv already in OUT is reused, so several runs of ops share one copy run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/benchmarks/target/cpu-threads}"
mkdir -p "$out" && out="$(cd "$out" && pwd)"   # OUT as the caller named it, before the cd below
ops="${2:-rms_norm,layer_norm,softmax,log_softmax,l2_normalize}"
widths="${3:-32,768,4096}"
threads="${4:-1,2,4,8,16}"
cd "$root"
java="${JAVA:-$([ -x .gpu-jre/bin/java ] && echo .gpu-jre/bin/java || echo java)}"
jar=benchmarks/target/benchmarks.jar
common=(-f 1 -wi 1 -i 3 -w 1 -r 1)
if [ ! -f "$out/copy.csv" ]; then
  "$java" -jar "$jar" CopyBenchmark -p threads="$threads" "${common[@]}" \
    -rf csv -rff "$out/copy.csv" >"$out/copy.log" 2>&1
fi
tag="$(echo "$ops" | tr ',' '-')"
"$java" -jar "$jar" SimdEngineBenchmark -p op="$ops" -p width="$widths" -p threads="$threads" \
  "${common[@]}" -rf csv -rff "$out/simd-$tag.csv" >"$out/simd-$tag.log" 2>&1
python3 "$here/cpu_threads_table.py" "$out"

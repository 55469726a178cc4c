#!/usr/bin/env bash
# Builds the benchmarks and runs the CPU throughput comparison: every op at widths 32 to 32768 over
# 256 MiB of float32, SIMD on 1 and 2 threads, scalar on 1 thread, a plain copy of the same bytes on
# 1 and 2 threads, and the Arrow API end to end. Prints a table of GB/s (bytes read + written); the
# JMH CSVs stay in benchmarks/target/results. Extra arguments go to every JMH run.
#   benchmarks/run.sh [JMH options]      e.g. benchmarks/run.sh -p width=768 for a quick look
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
results="$here/target/results"

# Package in one reactor build (nothing installed into ~/.m2, which other checkouts share).
(cd "$root" && mvn -B -q package -DskipTests -Dembednorm.cpuOnly -pl benchmarks -am)
mkdir -p "$results"
rm -f "$results"/*.csv

jmh() {
  local name="$1"
  shift
  java -jar "$here/target/benchmarks.jar" -rf csv -rff "$results/$name.csv" "$@" \
    | grep -E '^# (engine|Benchmark:|Parameters)|^Iteration|^Result' || true
}

jmh copy 'CopyBenchmark' "$@"
jmh simd 'SimdEngineBenchmark' "$@"
jmh scalar 'ScalarEngineBenchmark' -p threads=1 "$@"
jmh arrow 'ArrowBenchmark' "$@"

python3 "$here/table.py" "$results"

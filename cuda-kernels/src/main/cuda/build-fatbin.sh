#!/usr/bin/env bash
# Builds a CUDA source (and the headers beside it) into one fatbin for the jar: SASS for sm_80 and
# sm_90, PTX (compute_90) for newer GPUs, and SASS for each ARCH given (sm_90a: Hopper's
# arch-specific code, wgmma, which the driver prefers on a compute capability 9.0 device and never
# runs elsewhere). Called by the Maven build (cuda-kernels/pom.xml for embednorm's kernels,
# benchmarks/pom.xml for the benchmark's copy kernel):
#   build-fatbin.sh SOURCE OUTPUT [ARCH...]
# Environment: NVCC (see nvcc.sh). A CPU-only jar skips this script: mvn ... -Dembednorm.cpuOnly.
set -euo pipefail
source_file=$1
output=$2
extra=()
for arch in "${@:3}"; do
  extra+=(-gencode "arch=compute_${arch#sm_},code=$arch")
done
source "$(dirname "$0")/nvcc.sh"
up_to_date=true
for input in "$source_file" "$(dirname "$source_file")"/*.cuh "$0" "$(dirname "$0")/nvcc.sh"; do
  [ -e "$input" ] || continue
  [ -f "$output" ] && [ "$output" -nt "$input" ] || up_to_date=false
done
if $up_to_date; then
  echo "embednorm: CUDA kernels are up to date ($output)"
  exit 0
fi
mkdir -p "$(dirname "$output")"
echo "embednorm: building $(basename "$source_file") with $("$nvcc" --version | tail -n 1)"
"$nvcc" -O3 -std=c++17 --threads 0 -diag-suppress 177 \
  -gencode arch=compute_80,code=sm_80 \
  -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_90,code=compute_90 \
  "${extra[@]}" \
  -fatbin -o "$output.tmp" "$source_file"
mv "$output.tmp" "$output"

#!/usr/bin/env bash
# Builds embednorm's CUDA kernels into a fatbin for the jar: SASS for sm_80 and sm_90, PTX
# (compute_90) for newer GPUs. Called by the Maven build (cuda-kernels/pom.xml):
#   build-fatbin.sh SOURCE OUTPUT
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc).
# A CPU-only jar skips this script: mvn ... -Dembednorm.cpuOnly (see README).
set -euo pipefail
source_file=$1
output=$2
if [ -n "${NVCC:-}" ]; then
  nvcc=$NVCC
  why="NVCC=$NVCC is not an executable"
else
  nvcc=$(command -v nvcc || true)
  [ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; }
  why="nvcc (CUDA 12 or newer) is neither on PATH nor in /usr/local/cuda/bin"
fi
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
  echo "embednorm: Cannot build the CUDA kernels: $why." >&2
  echo "embednorm: Install the CUDA toolkit, or build a CPU-only jar with -Dembednorm.cpuOnly." >&2
  exit 1
fi
if [ -f "$output" ] && [ "$output" -nt "$source_file" ] && [ "$output" -nt "$0" ]; then
  echo "embednorm: CUDA kernels are up to date ($output)"
  exit 0
fi
mkdir -p "$(dirname "$output")"
echo "embednorm: building CUDA kernels with $("$nvcc" --version | tail -n 1)"
"$nvcc" -O3 -std=c++17 --threads 0 -diag-suppress 177 \
  -gencode arch=compute_80,code=sm_80 \
  -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_90,code=compute_90 \
  -fatbin -o "$output.tmp" "$source_file"
mv "$output.tmp" "$output"

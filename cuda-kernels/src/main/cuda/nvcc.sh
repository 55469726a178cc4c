# Finds nvcc for the build scripts beside this file (sourced): sets $nvcc, or fails saying why.
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc).
# A CPU-only jar needs none: mvn ... -Dembednorm.cpuOnly (see README).
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

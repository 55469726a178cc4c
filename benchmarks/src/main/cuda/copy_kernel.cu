// The copy ceiling (KernelBenchmark): a device-to-device copy written as a kernel, timed next to
// the driver's cuMemcpyDtoD, to tell how close to that copy any kernel of ours can get. It moves
// what the normalization kernels move at their best: 16-byte loads and stores, coalesced across
// the warp, kCopyLoads loads in flight per thread before the first store. The host launches it on
// one pass over the buffer or on only the blocks the device holds at once; each thread strides
// over the buffer. Buffers 16-byte aligned; the last bytes % 16 are copied one byte a thread.
// Built into the benchmarks jar only (benchmarks/pom.xml), never into the product's kernels.

namespace {
constexpr int kCopyLoads = 4;
}  // namespace

extern "C" __global__ void __launch_bounds__(256)
    embednorm_copy_u8x16(const uint4* __restrict__ input, uint4* __restrict__ output,
                         long long bytes) {
  const long long packs = bytes >> 4;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kCopyLoads - 1) * stride < packs; i += kCopyLoads * stride) {
    uint4 values[kCopyLoads];
#pragma unroll
    for (int u = 0; u < kCopyLoads; ++u) values[u] = input[i + u * stride];
#pragma unroll
    for (int u = 0; u < kCopyLoads; ++u) output[i + u * stride] = values[u];
  }
  for (; i < packs; i += stride) output[i] = input[i];
  const int tail = static_cast<int>(bytes & 15);
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail) {
    const long long at = (packs << 4) + threadIdx.x;
    reinterpret_cast<unsigned char*>(output)[at] =
        reinterpret_cast<const unsigned char*>(input)[at];
  }
}

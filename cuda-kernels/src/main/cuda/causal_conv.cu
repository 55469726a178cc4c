// causal_conv (docs/SEMANTICS.md, "Causal convolution"), the RWKV depthwise causal convolution, on
// a batch of B sequences of T steps over C channels, float32, in the token-embedding layout the
// users hold: input and output (B, T, C), element (b, t, c) at (b * T + t) * C + c; the weights
// lag-major (T, C), lag_weights[L * C + c] = w[c][T_w - 1 - L], prepared once per kernel on the host.
//   out[b][t][c] = eps + sum_{u <= t} lag_weights[t - u][c] * in[b][u][c]
//
// Per channel this is a matrix product: out_c (T x B) = W_c (T x T, lower-triangular Toeplitz,
// W_c[t][u] = lag_weights[t - u][c]) times in_c (T x B). It runs on the tensor cores as
// mma.m16n8k8 in tf32, with float32 accuracy kept by the 3xTF32 split: each operand x becomes
// big = x rounded to tf32 and small = x - big, and a product is big*big + big*small + small*big.
// The dropped small*small and the tf32 truncation of small stay below 1.2e-6 of |w*k|; the sums
// are float32, 8 products at a time in the tensor cores.
//
// A block owns 8 channels (one a warp), 16 sequences and 64 output steps: a warp holds the 64 x 16
// outputs of its channel as 4 x 2 mma tiles (16 steps x 8 sequences), 32 floats a thread, and two
// blocks share a multiprocessor. The Toeplitz operand never exists in memory: the A fragment of a
// thread (row g, column q of a tile) is W(d + g - q + 4 m) for m = -1..2, so each thread keeps a
// sliding window of every fourth lag weight in registers, already split, and a k-step of 8 inputs
// slides it by two. The inputs go through shared memory in chunks of 32 steps (3 stages of
// cp.async, 4 bytes each so that they land in the mma fragment order: a lane then reads its 4
// values of a k-step with one 16-byte load). Tiles wholly above the diagonal are skipped; inside
// the diagonal tiles the weights of negative lags are zero, which is exact only for finite inputs:
// an input that is not finite (or too large to split) enters the product as zero and is added by
// a plain multiply-add for u <= t after its chunk, and a warp whose weights hold one runs on plain
// multiply-adds, so NaN and infinities propagate as IEEE arithmetic gives them and never to an
// earlier step.
// The blocks go in bands of kBand (channel group, sequence group) columns, heaviest (largest t)
// first inside a band: the triangle's long tiles do not trail, and the inputs a band reads stay
// in L2. The outputs leave through shared memory as 32-byte rows.
//
// Two kernels, each for every shape: embednorm_causal_conv_f32 (above; every GPU) and, in the
// sm_90a code only, embednorm_causal_conv_wgmma_f32 (causal_conv_wgmma.cuh: the same product on
// Hopper's warpgroup tensor cores, blocks of 32 sequences, 4 channels and 128 steps). The
// geometry table says which of them the code the driver loaded has; the launcher
// (CudaCausalConvolution) takes the wgmma kernel for every call where it is there, else this one:
// the kernel, and so a sequence's bits, depends on the device only, never on the batch's shape.
// The sm_80, sm_90 and compute_90 (PTX) builds hold this kernel only.

#include <cstdint>

namespace embednorm_conv {

constexpr int kChannels = 8;                 // channels a block, one a warp
constexpr int kThreads = kChannels * 32;
constexpr int kMTiles = 4;                   // output tiles of 16 steps a warp
constexpr int kRows = 16 * kMTiles;          // output steps a block
constexpr int kSeqs = 16;                    // sequences a block: tiles of 8 (16 or 32)
constexpr int kSeqTiles = kSeqs / 8;
constexpr int kSlots = kSeqs / 4;            // inputs a lane takes from a k-step
constexpr int kStepFloats = 8 * kSeqs;       // a channel's k-step in shared memory
constexpr int kBlocksPerSm = 2;              // blocks a multiprocessor: 128 registers a thread
constexpr int kChunk = 32;                   // input steps a stage: 4 k-steps of 8
constexpr int kStages = 3;
constexpr int kPlane = kChunk * kSeqs + 4;   // a channel's chunk; the 4 spread the copies' banks
constexpr int kStage = kChannels * kPlane;
constexpr int kOutRow = kRows + 4;           // the output tile: [channel][sequence][step], padded
constexpr int kOutPlane = kSeqs * kOutRow;
constexpr int kWindow = 4 * kMTiles + 6;     // lag weights a thread holds
constexpr int kBand = 12;                    // columns a band (12 x 393 KB of input at T = 768)
constexpr float kSplittable = 0x1p127f;      // |x| below it: both tf32 halves are finite
constexpr int kSharedFloats =
    kStages * kStage > kChannels * kOutPlane ? kStages * kStage : kChannels * kOutPlane;

__device__ __forceinline__ void split(float x, uint32_t& big, uint32_t& small) {
  // big: x rounded to tf32 (half an ulp added, the low 13 bits cleared; no carry into the
  // exponent below 2^127); small: the rest, which the tensor cores read truncated to tf32
  big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  small = __float_as_uint(x - __uint_as_float(big));
}

__device__ __forceinline__ bool splittable(float x) { return fabsf(x) < kSplittable; }

__device__ __forceinline__ void mma(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                    uint32_t a3, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

struct Tile {
  const float* lag_weights;
  int steps, channels, c, t0, g, tq;
  __device__ __forceinline__ float weight(int lag) const {
    return (lag >= 0 && lag < steps && c < channels)
               ? __ldg(lag_weights + static_cast<long long>(lag) * channels + c)
               : 0.f;
  }
};

using Sums = float[kMTiles][kSeqTiles][4];

// Where input (sequence b, step ur of k-step s) of a chunk sits in its channel's plane: in the
// order of the B fragments (lane (g, q) holds steps q and q + 4 of sequences g + 8 j), so that a
// lane reads its kSlots values of a k-step at once.
__device__ __forceinline__ int slot(int s, int b, int ur) {
  return s * kStepFloats + ((b & 7) * 4 + (ur & 3)) * kSlots + 2 * (b >> 3) + (ur >> 2);
}

// Plain multiply-adds of the chunk's inputs (u = u0c + 0 .. kChunk - 1) into the thread's outputs,
// for u <= t only; kOnlyUnsplittable: only the inputs the split cannot take.
template <bool kOnlyUnsplittable>
__device__ __forceinline__ void multiply_add(Sums& acc, const Tile& tile, const float* plane,
                                             int u0c) {
#pragma unroll 1
  for (int ul = 0; ul < kChunk; ++ul) {
    const int u = u0c + ul;
#pragma unroll
    for (int j = 0; j < kSeqTiles; ++j)
#pragma unroll
      for (int e1 = 0; e1 < 2; ++e1) {
        const float x = plane[slot(ul >> 3, 8 * j + 2 * tile.tq + e1, ul & 7)];
        if (kOnlyUnsplittable && splittable(x)) continue;
#pragma unroll
        for (int i = 0; i < kMTiles; ++i)
#pragma unroll
          for (int e2 = 0; e2 < 2; ++e2) {
            const int t = tile.t0 + 16 * i + tile.g + 8 * e2;
            if (u <= t) acc[i][j][2 * e2 + e1] = fmaf(tile.weight(t - u), x, acc[i][j][2 * e2 + e1]);
          }
      }
  }
}

// One chunk on the tensor cores; kDiagonal: the chunk reaches the block's rows, so each tile
// runs only the k-steps with some u <= t. An input the split cannot take enters as zero and sets
// `odd`: the caller then adds it by multiply_add.
template <bool kDiagonal>
__device__ __forceinline__ void tensor_chunk(Sums& acc, const uint32_t (&wb)[kWindow],
                                             const uint32_t (&ws)[kWindow], const Tile& tile,
                                             const float* plane, int lane, int u0c, bool& odd) {
#pragma unroll
  for (int s = 0; s < kChunk / 8; ++s) {
    const int u0 = u0c + 8 * s;
    float x[kSlots];
#pragma unroll
    for (int v = 0; v < kSlots; v += 4) {
      const float4 four = *reinterpret_cast<const float4*>(plane + s * kStepFloats + lane * kSlots + v);
      x[v] = four.x; x[v + 1] = four.y; x[v + 2] = four.z; x[v + 3] = four.w;
    }
    uint32_t kb[kSlots], ks[kSlots];
    bool odd_step = false;
#pragma unroll
    for (int v = 0; v < kSlots; ++v) {
      split(x[v], kb[v], ks[v]);
      odd_step |= !splittable(x[v]);
    }
    if (__any_sync(0xffffffffu, odd_step)) {  // rare: such inputs enter as zero
      odd = true;
#pragma unroll
      for (int v = 0; v < kSlots; ++v)
        if (!splittable(x[v])) kb[v] = ks[v] = 0u;
    }
    // the three products of a tile go in three passes, so that dependent mma stand apart
#pragma unroll
    for (int pass = 0; pass < 3; ++pass)
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        if (kDiagonal && u0 > tile.t0 + 16 * i + 15) continue;
        const int m = 6 - 2 * s + 4 * i;  // window index of W(t0 + 16 i - u0 + g - q - 4)
        const uint32_t(&a)[kWindow] = pass == 0 ? ws : wb;
#pragma unroll
        for (int j = 0; j < kSeqTiles; ++j) {
          const uint32_t(&b)[kSlots] = pass == 1 ? ks : kb;
          mma(acc[i][j], a[m + 1], a[m + 3], a[m], a[m + 2], b[2 * j], b[2 * j + 1]);
        }
      }
  }
}

}  // namespace embednorm_conv

#include "causal_conv_wgmma.cuh"

// The launch geometry, read by the launcher (CudaCausalConvolution) from the module: for each
// kernel, threads a block, dynamic shared memory bytes a block, and the channels, sequences and
// steps a block owns; first embednorm_causal_conv_f32 (every build), then
// embednorm_causal_conv_wgmma_f32, all zero where the loaded code has no wgmma body (every build
// but sm_90a: the driver loads the sm_90a code on a compute capability 9.0 device only).
extern "C" __device__ const int embednorm_causal_conv_geometry[10] = {
    embednorm_conv::kThreads, embednorm_conv::kSharedFloats * 4, embednorm_conv::kChannels,
    embednorm_conv::kSeqs, embednorm_conv::kRows,
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    embednorm_conv_wgmma::kThreads, embednorm_conv_wgmma::kSharedBytes,
    embednorm_conv_wgmma::kChannels, embednorm_conv_wgmma::kSeqs, embednorm_conv_wgmma::kSteps
#else
    0, 0, 0, 0, 0
#endif
};

// The wgmma kernel (causal_conv_wgmma.cuh): any shape, 16-byte aligned buffers. Every build
// defines it so that the module's names do not depend on the device; only sm_90a gives it a body.
extern "C" __global__ void __launch_bounds__(embednorm_conv_wgmma::kThreads, 1)
embednorm_causal_conv_wgmma_f32(const float* __restrict__ input, float* __restrict__ output,
                                const float* __restrict__ lag_weights, int sequences, int steps,
                                int channels, float eps) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  embednorm_conv_wgmma::convolve_block(input, output, lag_weights, sequences, steps, channels,
                                       eps);
#endif
}

extern "C" __global__ void __launch_bounds__(embednorm_conv::kThreads, embednorm_conv::kBlocksPerSm)
embednorm_causal_conv_f32(const float* __restrict__ input, float* __restrict__ output,
                          const float* __restrict__ lag_weights, int sequences, int steps,
                          int channels, float eps) {
  using namespace embednorm_conv;
  extern __shared__ float4 shared_vectors[];
  float* shared = reinterpret_cast<float*>(shared_vectors);

  const int tiles = (steps + kRows - 1) / kRows;
  const int channel_groups = (channels + kChannels - 1) / kChannels;
  const int columns = channel_groups * ((sequences + kSeqs - 1) / kSeqs);
  const int band = static_cast<int>(blockIdx.x) / (kBand * tiles);
  const int in_band = static_cast<int>(blockIdx.x) % (kBand * tiles);
  const int band_columns = min(kBand, columns - band * kBand);
  const int column = band * kBand + in_band % band_columns;
  const int t0 = (tiles - 1 - in_band / band_columns) * kRows;
  const int c0 = (column % channel_groups) * kChannels;
  const int b0 = (column / channel_groups) * kSeqs;
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const long long plane = static_cast<long long>(steps) * channels;
  const Tile tile{lag_weights, steps, channels, c0 + warp, t0, lane >> 2, lane & 3};

  // The copies: a thread always copies channel c0 + (lane & 7), step (lane >> 3 & 1) * 4 +
  // (warp & 3) of each k-step, and sequences b0 + 8 (lane >> 4) + (warp >> 2) + 2 (q & 3) (+ 16
  // (q >> 2 & 1) where kSeqs is 32), k-step q / (kSeqs / 4). Each lands where the mma fragments
  // want it: (sequence b, step ur of k-step s) at s * kStepFloats + ((b & 7) * 4 + (ur & 3)) *
  // kSlots + (b >> 3) * 2 + (ur >> 2), and the 32 lanes of one copy hit 32 banks.
  const int copy_channel = lane & 7;
  const int copy_step = ((lane >> 3) & 1) * 4 + (warp & 3);
  const int copy_sequence = 8 * (lane >> 4) + (warp >> 2);
  const bool copy_channel_ok = c0 + copy_channel < channels;
  const int sequence_room = sequences - b0 - copy_sequence;
  const float* copy_source =
      input + (b0 + copy_sequence) * plane + static_cast<long long>(copy_step) * channels + c0 +
      copy_channel;
  const uint32_t shared_base = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  const uint32_t copy_target =
      shared_base + 4u * (copy_channel * kPlane + slot(0, copy_sequence, copy_step));
  const bool interior_block = b0 + kSeqs <= sequences && c0 + kChannels <= channels;
  auto issue = [&](int chunk) {
    const int u0c = chunk * kChunk;
    const uint32_t target = copy_target + 4u * (chunk % kStages) * kStage;
    const float* source = copy_source + static_cast<long long>(u0c) * channels;
    const int step_room = steps - u0c - copy_step;
    if (interior_block && u0c + kChunk <= steps) {  // every copy in range: no checks
#pragma unroll
      for (int q = 0; q < kSeqs; ++q) {
        const int high = kSeqs == 32 ? (q >> 2) & 1 : 0;
        const int s = q / (kSeqs / 4);
        const float* from = source + (2 * (q & 3) + 16 * high) * plane +
                            static_cast<long long>(8 * s) * channels;
        const uint32_t at = target + 4u * (s * kStepFloats + 2 * (q & 3) * 4 * kSlots + 4 * high);
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(at), "l"(from));
      }
      return;
    }
#pragma unroll
    for (int q = 0; q < kSeqs; ++q) {
      const int high = kSeqs == 32 ? (q >> 2) & 1 : 0;
      const int s = q / (kSeqs / 4);
      const int sequence_offset = 2 * (q & 3) + 16 * high;
      const bool ok = copy_channel_ok && sequence_offset < sequence_room && 8 * s < step_room;
      const float* from =
          ok ? source + sequence_offset * plane + static_cast<long long>(8 * s) * channels : input;
      const uint32_t at = target + 4u * (s * kStepFloats + 2 * (q & 3) * 4 * kSlots + 4 * high);
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(at), "l"(from),
                   "r"(ok ? 4 : 0));
    }
  };

  Sums acc;
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < kSeqTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

  const int chunks = (min(t0 + kRows, steps) + kChunk - 1) / kChunk;
  issue(0);
  asm volatile("cp.async.commit_group;");
  if (chunks > 1) issue(1);
  asm volatile("cp.async.commit_group;");

  // window[m] = W(t0 - u0c - 28 + g - q + 4 m), split: the A fragment of k-step s, tile i is
  // window[m + 1], [m + 3], [m], [m + 2] for m = 6 - 2 s + 4 i
  const int e = tile.g - tile.tq;
  uint32_t wb[kWindow], ws[kWindow];
  bool odd_weights = false;
#pragma unroll
  for (int m = 0; m < kWindow; ++m) {
    const float w = tile.weight(t0 - 28 + e + 4 * m);
    odd_weights |= !splittable(w);
    split(w, wb[m], ws[m]);
  }

  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int u0c = chunk * kChunk;
    float next[8];  // the next chunk's window[0 .. 7]
#pragma unroll
    for (int m = 0; m < 8; ++m) next[m] = tile.weight(t0 - u0c - 60 + e + 4 * m);
    asm volatile("cp.async.wait_group 1;");
    __syncthreads();  // the chunk is in; every warp is done with the stage the next copy fills
    if (chunk + 2 < chunks) issue(chunk + 2);
    asm volatile("cp.async.commit_group;");
    const float* stage = shared + (chunk % kStages) * kStage + warp * kPlane;
    if (__any_sync(0xffffffffu, odd_weights)) {
      multiply_add<false>(acc, tile, stage, u0c);
    } else {
      bool odd = false;
      if (u0c + kChunk <= t0) {
        tensor_chunk<false>(acc, wb, ws, tile, stage, lane, u0c, odd);
      } else {
        tensor_chunk<true>(acc, wb, ws, tile, stage, lane, u0c, odd);
      }
      if (__any_sync(0xffffffffu, odd)) multiply_add<true>(acc, tile, stage, u0c);
    }
#pragma unroll
    for (int m = kWindow - 1; m >= 8; --m) {
      wb[m] = wb[m - 8];
      ws[m] = ws[m - 8];
    }
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      odd_weights |= !splittable(next[m]);
      split(next[m], wb[m], ws[m]);
    }
  }

  asm volatile("cp.async.wait_group 0;");
  __syncthreads();  // every warp is done with the stages: the output tile reuses them
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < kSeqTiles; ++j)
#pragma unroll
      for (int k = 0; k < 4; ++k)
        shared[warp * kOutPlane + (8 * j + 2 * tile.tq + (k & 1)) * kOutRow + 16 * i + tile.g +
               8 * (k >> 1)] = acc[i][j][k] + eps;
  __syncthreads();
  const bool vectors = channels % 4 == 0 && c0 + kChannels <= channels;
#pragma unroll 1
  for (int row = threadIdx.x; row < kRows * kSeqs; row += kThreads) {
    const int t = row % kRows;
    const int b = row / kRows;
    if (t0 + t >= steps || b0 + b >= sequences) continue;
    float v[kChannels];
#pragma unroll
    for (int k = 0; k < kChannels; ++k) v[k] = shared[k * kOutPlane + b * kOutRow + t];
    float* target = output + (b0 + b) * plane + static_cast<long long>(t0 + t) * channels + c0;
    if (vectors) {
      reinterpret_cast<float4*>(target)[0] = make_float4(v[0], v[1], v[2], v[3]);
      reinterpret_cast<float4*>(target)[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else {
#pragma unroll
      for (int k = 0; k < kChannels; ++k)
        if (c0 + k < channels) target[k] = v[k];
    }
  }
}

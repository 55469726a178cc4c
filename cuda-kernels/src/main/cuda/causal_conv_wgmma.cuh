// causal_conv on Hopper's warpgroup tensor cores (wgmma, sm_90a only): the second kernel of
// causal_conv.cu, for every shape (the launcher runs it for every call on a device whose code has
// it, every other GPU the mma.sync kernel). Same product, same 3xTF32 split, same treatment of
// operands the split cannot take; see causal_conv.cu's header.
//
// Per channel it computes D = A * B with the Toeplitz WEIGHTS as wgmma's B operand (shared
// memory, through a descriptor) and the INPUTS as the A operand (registers):
//   wgmma.m64n64k8.f32.tf32.tf32, M = 64 rows = 32 sequences x 2 time shifts h, N = 64 output
//   steps, K = 8 input steps. Row (h, b) of the tile of k-step u0 computes
//   D[(h, b)][n] += sum_k X[b][u0 + k + 64 h] * w[t0 + n - u0 - k],
//   i.e. out[b][t0 + 64 h + n]: shifting input and output by 64 leaves the Toeplitz tile as it is,
//   so both halves of M share one B tile. A block owns 4 channels (one warpgroup each), 32
//   sequences and the 128 output steps t0 .. t0 + 127; k-steps run u0 = -64 .. t0 + 56 (the h = 0
//   rows read zeros below u = 0). Each k-step is three wgmma into one accumulator: (X_small,
//   W_big), (X_big, W_small), (X_big, W_big).
// Weights: per channel and chunk of 4 k-steps (32 input steps) a shared-memory "strip" of 88 rows
//   G[r][k] = w[t0 - u0c - 24 + r - k] (zero for negative lags), K-major core matrices without
//   swizzle: (r, k) at (r / 8) * 256 + (k / 4) * 128 + (r % 8) * 16 + (k % 4) * 4 bytes
//   (descriptor LBO 128, SBO 256); the tile of k-step s of the chunk starts at row 24 - 8 s. The
//   lag weights arrive as float4 (the block's 4 channels of one lag) two chunks ahead, are split
//   into a linear copy one chunk ahead and spread into the double-buffered strips by the
//   channel's warpgroup.
// Shapes that are not whole blocks of 32 sequences, 4 channels and 128 steps: the copies of a block
//   at an edge zero-fill (cp.async src-size 0) the sequences, channels and steps past it and the
//   weights past the last channel are zero, so the block computes what it would inside a larger
//   shape; the stores skip them. An output's arithmetic depends on its step only (its block's t0,
//   its shift h, the same k-steps from u = 0 up), never on the sequence's place in the batch.
// Inputs: a ring of 5 chunks (32 steps x 32 sequences x 4 channels) filled by 4-byte cp.async in
//   the A fragment order, so that a lane reads its 4 values of a k-step with one 16-byte load; the
//   h = 1 rows read the chunk two ahead of the h = 0 rows, so each input is copied once. Two
//   k-steps make a wgmma commit group; the next two k-steps' fragments load while it runs.
// Operands the split cannot take (not finite, or so large that big or a product overflows) go
//   into the wgmma as they are, and always leave a NaN or an infinity in the accumulators they
//   reach: a NaN or infinite input in every output of its row (the zero weights of negative lags
//   give 0 * inf = NaN), a weight in every output of its column, an overflow where it happens.
//   After its last wgmma the block checks its accumulators a row at a time (a sequence, a channel,
//   64 steps): a row not all finite (also where the true result is not) starts over on plain
//   multiply-adds from global memory, summed from u = 0 up, over the sums stored for it; the other
//   rows keep theirs, so a sequence's bits never depend on a neighbour's values. So NaN and
//   infinities propagate as IEEE arithmetic gives them and never to an earlier step, as in the
//   mma.sync kernel, and finite results keep the 3xTF32 bound; the main loop checks nothing (each
//   per-operand check cost 3 % at T = 768). The price is slow rows wherever sums are not finite:
//   an input's from its 64 steps on in its sequence and channel, a weight's in every sequence of
//   its channel (the h = 0 rows also meet the lags of their h = 1 rows, on zero inputs).
// The blocks go in bands of kBand (channel group, sequence group) columns, heaviest (largest t0)
// first inside a band, as in the mma.sync kernel. The outputs leave through shared memory as
// 16-byte rows of the 4 channels.
// Its limit (ncu on an H200) is the shared-memory data path, the 4-byte copies and the B operand
// reads, not wgmma.

#pragma once

#include <cstdint>

namespace embednorm_conv_wgmma {

constexpr int kChannels = 4;                    // channels a block, one warpgroup each
constexpr int kThreads = 128 * kChannels;
constexpr int kSeqs = 32;                       // sequences a block
constexpr int kN = 64;                          // output steps of one time shift: wgmma's N
constexpr int kSteps = 2 * kN;                  // output steps a block
constexpr int kChunk = 32;                      // input steps a chunk: 4 k-steps
constexpr int kDistance = 2;                    // chunks the copies run ahead
constexpr int kStages = kN / kChunk + kDistance + 1;  // the ring: the h = 0 rows lag by kN
constexpr int kPlane = kChunk * kSeqs + 8;      // words of a channel's chunk; 8 spread the banks
constexpr int kStage = kChannels * kPlane;      // words of a chunk
constexpr int kBand = 24;                       // columns a band
constexpr int kStripRows = kN + 24;             // strip rows of a chunk
constexpr int kStripHalf = kStripRows * 32;     // bytes of its big (or small) half
constexpr int kStripBytes = 2 * kStripHalf;     // a channel's strip buffer
constexpr int kStripItems = kStripRows * 2;     // 16-byte rows of a half
constexpr int kLags = kN + 32;                  // lags a chunk's strip reads (kN + 31 used)
constexpr int kRingBytes = kStages * kStage * 4;
constexpr int kStripOffset = kRingBytes;
constexpr int kLagOffset = kStripOffset + 2 * kChannels * kStripBytes;
constexpr int kSharedBytes = kLagOffset + 2 * kChannels * 2 * kLags * 4;
constexpr int kOutRow = kN * kChannels + 4;     // words of a sequence in the output tile
constexpr int kBadOffset = kSeqs * kOutRow * 4;  // after the output tile: rows that start over
static_assert(kBadOffset + 2 * kSeqs * kChannels <= kRingBytes,
              "the output tile and the rows that start over fit in the ring's place");
static_assert(kRingBytes % 16 == 0 && kStripBytes % 16 == 0, "16-byte alignment");
static_assert(kLags <= kThreads, "one thread a lag");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using embednorm_conv::split;

__device__ __forceinline__ uint64_t descriptor(uint32_t address) {
  // PTX "Matrix Descriptor Format": start address, LBO 128, SBO 256 (16-byte units), no swizzle
  return static_cast<uint64_t>((address & 0x3FFFFu) >> 4) |
         (static_cast<uint64_t>(128 >> 4) << 16) | (static_cast<uint64_t>(256 >> 4) << 32);
}

__device__ __forceinline__ void wgmma(float (&d)[kN / 2], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"
      "%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Output (sequence b, channel c, step t) by plain multiply-adds from global memory, summed from
// u = 0 up as the mma.sync kernel's multiply_add does: for a row of accumulators whose tensor-core
// sums are not all finite.
__device__ __forceinline__ float plain_sum(const float* in, const float* lag_weights,
                                           long long plane, int channels, int b, int t, int c) {
  const float* x = in + b * plane + c;
  const float* w = lag_weights + c;
  float sum = 0.f;
  for (int u = 0; u <= t; ++u)
    sum = fmaf(__ldg(w + static_cast<long long>(t - u) * channels),
               __ldg(x + static_cast<long long>(u) * channels), sum);
  return sum;
}

// The block of columns (channel group, sequence group) and steps t0 .. t0 + kSteps - 1 that
// blockIdx.x names; any shape: the copies zero-fill what lies outside it and the stores skip it.
__device__ __forceinline__ void convolve_block(const float* __restrict__ input,
                                               float* __restrict__ output,
                                               const float* __restrict__ lag_weights,
                                               int sequences, int steps, int channels,
                                               float eps) {
  extern __shared__ __align__(128) unsigned char shared[];
  const int tid = threadIdx.x, group = tid >> 7, group_tid = tid & 127;
  const int warp = tid >> 5, lane = tid & 31, w = warp & 3;

  const int channel_groups = (channels + kChannels - 1) / kChannels;
  const int tiles = (steps + kSteps - 1) / kSteps;
  const int columns = channel_groups * ((sequences + kSeqs - 1) / kSeqs);
  const int band = static_cast<int>(blockIdx.x) / (kBand * tiles);
  const int in_band = static_cast<int>(blockIdx.x) % (kBand * tiles);
  const int band_columns = min(kBand, columns - band * kBand);
  const int column = band * kBand + in_band % band_columns;
  const int t0 = (tiles - 1 - in_band / band_columns) * kSteps;
  const int c0 = (column % channel_groups) * kChannels, c = c0 + group;
  const long long plane = static_cast<long long>(steps) * channels;
  const int b0 = (column / channel_groups) * kSeqs;
  const float* in = input + b0 * plane;
  float* out = output + b0 * plane;
  const int sequence_room = sequences - b0;  // the block's sequences that are there
  const bool interior = sequence_room >= kSeqs && c0 + kChannels <= channels;
  const bool vectors = channels % kChannels == 0;  // 16-byte rows of the 4 channels
  const int chunks = (t0 + 2 * kN) / kChunk;  // k-steps u0 = -kN .. t0 + kN - 8

  const uint32_t shared_base = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  const uint32_t ring = shared_base;
  const uint32_t strips = shared_base + kStripOffset + group * 2 * kStripBytes;

  // The copies: lane bits 0..2 = hi, e, q & 1; lane >> 3 = channel; warp = (g, q >> 1). An element
  // (channel cc, sequence 16 bh + 8 hi + g, step 8 s + 4 e + q of the chunk) lands at word
  // cc * kPlane + s * 256 + bh * 128 + (4 g + q) * 4 + hi + 2 e: the 32 lanes hit 32 banks.
  const int copy_channel = lane >> 3, copy_g = warp >> 1;
  const int copy_hi = lane & 1, copy_e = (lane >> 1) & 1,
            copy_q = ((lane >> 2) & 1) + 2 * (warp & 1);
  const int copy_sequence = 8 * copy_hi + copy_g, copy_step = 4 * copy_e + copy_q;
  const bool copy_channel_ok = c0 + copy_channel < channels;
  const float* copy_source = in + copy_sequence * plane +
                             static_cast<long long>(copy_step) * channels + c0 + copy_channel;
  const uint32_t copy_target =
      ring + 4u * (copy_channel * kPlane + (copy_g * 4 + copy_q) * 4 + copy_hi + 2 * copy_e);
  auto issue = [&](int chunk) {
    const float* source = copy_source + static_cast<long long>(chunk * kChunk) * channels;
    const uint32_t target = copy_target + 4u * (chunk % kStages) * kStage;
    if (interior && (chunk + 1) * kChunk <= steps) {  // every copy in range: no checks
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int s = i & 3, bh = i >> 2;
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(
                         target + 4u * (s * 256 + bh * 128)),
                     "l"(source + bh * 16 * plane + static_cast<long long>(8 * s) * channels));
      }
      return;
    }
    // the edges of the shape: zeros (src-size 0) where a sequence, step or channel is not there,
    // so that the block computes exactly what it would inside a larger shape
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int s = i & 3, bh = i >> 2;
      const bool ok = copy_channel_ok && copy_sequence + 16 * bh < sequence_room &&
                      chunk * kChunk + 8 * s + copy_step < steps;
      const float* from =
          ok ? source + bh * 16 * plane + static_cast<long long>(8 * s) * channels : input;
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(
                       target + 4u * (s * 256 + bh * 128)),
                   "l"(from), "r"(ok ? 4 : 0));
    }
  };

  // The strip of chunk j: G[r][k] = w[lag_min + 7 + r - k], lag_min = t0 - u0c - 31 for the
  // chunk's first k-step u0c = 32 j - kN. The lags go float4 -> registers (two chunks ahead) ->
  // split linear copy [2][kChannels][big, small][kLags] (one ahead) -> the strip.
  auto lag_min = [&](int j) { return t0 - (kChunk * j - kN) - 31; };
  float* lags = reinterpret_cast<float*>(shared + kLagOffset);
  float4 lag4 = make_float4(0.f, 0.f, 0.f, 0.f);
  auto fetch = [&](int j) {
    const int lag = lag_min(j) + tid;
    const bool there = tid < kLags && lag >= 0 && lag < steps;
    const float* from = lag_weights + static_cast<long long>(lag) * channels + c0;
    if (vectors) {
      lag4 = there ? __ldg(reinterpret_cast<const float4*>(from)) : make_float4(0.f, 0.f, 0.f, 0.f);
    } else {  // channels past the last are zero
      lag4.x = there ? __ldg(from) : 0.f;
      lag4.y = there && c0 + 1 < channels ? __ldg(from + 1) : 0.f;
      lag4.z = there && c0 + 2 < channels ? __ldg(from + 2) : 0.f;
      lag4.w = there && c0 + 3 < channels ? __ldg(from + 3) : 0.f;
    }
  };
  auto put = [&](int j) {
    if (tid < kLags) {
      float* l = lags + (j & 1) * kChannels * 2 * kLags + tid;
      const float v[4] = {lag4.x, lag4.y, lag4.z, lag4.w};
#pragma unroll
      for (int k = 0; k < kChannels; ++k) {
        uint32_t big, small;
        split(v[k], big, small);
        l[(2 * k) * kLags] = __uint_as_float(big);
        l[(2 * k + 1) * kLags] = __uint_as_float(small);
      }
    }
  };
  auto build = [&](int j) {
    const float* big_lags = lags + ((j & 1) * kChannels + group) * 2 * kLags;
    const uint32_t buffer = strips + (j & 1) * kStripBytes;
#pragma unroll
    for (int item = group_tid; item < kStripItems; item += 128) {
      const int r = (item >> 4) * 8 + (item & 7), k_half = (item >> 3) & 1;
      const float* lb = big_lags + 7 + r - 4 * k_half;
      const float* ls = lb + kLags;
      asm volatile("st.shared.v4.f32 [%0], {%1,%2,%3,%4};" ::"r"(buffer + 16 * item),
                   "f"(lb[0]), "f"(lb[-1]), "f"(lb[-2]), "f"(lb[-3]) : "memory");
      asm volatile("st.shared.v4.f32 [%0], {%1,%2,%3,%4};" ::"r"(buffer + kStripHalf + 16 * item),
                   "f"(ls[0]), "f"(ls[-1]), "f"(ls[-2]), "f"(ls[-3]) : "memory");
    }
    // the strip is read by wgmma, through the async proxy
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  };

  float acc[kN / 2];
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.f;

#pragma unroll
  for (int k = 0; k < kDistance; ++k) {
    if (k < chunks) issue(k);
    asm volatile("cp.async.commit_group;");
  }
  const int h = w >> 1, bh = w & 1, g = lane >> 2, q = lane & 3;
  const uint32_t fragment_offset = 4u * (group * kPlane + bh * 128 + lane * 4);
  auto input_chunk = [&](int j) { return j - (h == 0 ? kN / kChunk : 0); };
  // the A fragments of k-steps s0 and s0 + 1 of chunk j, split
  auto load_a = [&](int j, int s0, uint32_t(&ab)[2][4], uint32_t(&as)[2][4]) {
    const int ic = input_chunk(j);
    if (ic >= 0) {
      const uint32_t a = ring + 4u * (ic % kStages) * kStage + fragment_offset;
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        float v[4];
        asm volatile("ld.shared.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                     : "r"(a + 4u * (s0 + s) * 256));
#pragma unroll
        for (int i = 0; i < 4; ++i) split(v[i], ab[s][i], as[s][i]);
      }
    } else {
#pragma unroll
      for (int s = 0; s < 2; ++s)
#pragma unroll
        for (int i = 0; i < 4; ++i) ab[s][i] = as[s][i] = 0u;
    }
  };
  auto mma2 = [&](int j, int s0, const uint32_t(&ab)[2][4], const uint32_t(&as)[2][4]) {
    const uint32_t buffer = strips + (j & 1) * kStripBytes;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const uint32_t big = buffer + (3 - s0 - s) * 256;
      const uint64_t db = descriptor(big), ds = descriptor(big + kStripHalf);
      wgmma(acc, as[s], db);
      wgmma(acc, ab[s], ds);
      wgmma(acc, ab[s], db);
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  };
  // Between chunks j - 1 and j: chunk j's strip, chunk j + 1's split lags, chunk j + 2's lags,
  // chunk j's inputs in, and the copy kDistance ahead into the stage chunk j - 1's h = 0 rows
  // (chunk j - 3) are done with.
  auto boundary = [&](int j) {
    put(j + 1);
    build(j);
    fetch(j + 2);
    asm volatile("cp.async.wait_group %0;" ::"n"(kDistance - 1) : "memory");
    __syncthreads();
    if (j + kDistance < chunks) issue(j + kDistance);
    asm volatile("cp.async.commit_group;");
  };

  uint32_t ab0[2][4], as0[2][4], ab1[2][4], as1[2][4];
  fetch(0);
  put(0);
  fetch(1);
  __syncthreads();
  boundary(0);
  load_a(0, 0, ab0, as0);
#pragma unroll 1
  for (int j = 0; j < chunks; ++j) {
    mma2(j, 0, ab0, as0);
    wgmma_wait<1>();  // chunk j - 1 done: ab1/as1 and strip (j + 1) & 1 free
    load_a(j, 2, ab1, as1);
    mma2(j, 2, ab1, as1);
    wgmma_wait<1>();  // chunk j, k-steps 0 and 1 done: ab0/as0 free
    if (j + 1 < chunks) {
      boundary(j + 1);
      load_a(j + 1, 0, ab0, as0);
    }
  }
  wgmma_wait<0>();
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  // An operand the split cannot take leaves a NaN or an infinity in the accumulators of its row
  // (inputs) or column (weights), or overflows; so does a true non-finite output. Either way the
  // row (a sequence, a channel, 64 steps) starts over on plain multiply-adds, which give IEEE
  // results; the other rows keep their sums, so a sequence's bits never depend on its neighbours.
  // A thread holds 16 outputs of rows g and g + 8 of its warp's 16; the quad's 4 lanes a row.
  bool finite[2] = {true, true};
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) finite[(i >> 1) & 1] &= fabsf(acc[i]) <= 0x1.fffffep127f;
  int rows_bad = (finite[0] ? 0 : 1) | (finite[1] ? 0 : 2);
  rows_bad |= __shfl_xor_sync(0xffffffffu, rows_bad, 1);
  rows_bad |= __shfl_xor_sync(0xffffffffu, rows_bad, 2);
  // also the barrier before the ring's place is reused
  const bool any_bad = __syncthreads_or(rows_bad != 0);
  unsigned char* bad = shared + kBadOffset;  // [h][sequence][channel]
  if (any_bad && q == 0) {
    bad[(h * kSeqs + 16 * bh + g) * kChannels + group] = rows_bad & 1;
    bad[(h * kSeqs + 16 * bh + g + 8) * kChannels + group] = rows_bad >> 1;
  }

  // the accumulators through shared memory to 16-byte rows of the 4 channels, one shift h at a
  // time (the tile reuses the ring)
  float* tile = reinterpret_cast<float*>(shared);
#pragma unroll 1
  for (int hh = 0; hh < 2; ++hh) {
    __syncthreads();
    if (h == hh) {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) {
        const int b = 16 * bh + g + 8 * ((i >> 1) & 1);
        const int t = 8 * (i >> 2) + 2 * q + (i & 1);
        tile[b * kOutRow + t * kChannels + group] = acc[i] + eps;
      }
    }
    __syncthreads();
#pragma unroll 1
    for (int item = tid; item < kSeqs * kN; item += kThreads) {
      const int t = item % kN, b = item / kN;
      const int step = t0 + kN * hh + t;
      if (b >= sequence_room || step >= steps) continue;
      float* target = out + b * plane + static_cast<long long>(step) * channels + c0;
      const float* from = tile + b * kOutRow + t * kChannels;
      if (vectors) {
        *reinterpret_cast<float4*>(target) = *reinterpret_cast<const float4*>(from);
      } else {
#pragma unroll
        for (int k = 0; k < kChannels; ++k)
          if (c0 + k < channels) target[k] = from[k];
      }
    }
  }
  if (!any_bad) return;
  // the rows that start over, a row's 64 steps on 64 threads, over the sums stored above
  __syncthreads();
#pragma unroll 1
  for (int item = tid; item < 2 * kSeqs * kChannels * kN; item += kThreads) {
    const int t = item % kN, row = item / kN, cc = row % kChannels, b = (row / kChannels) % kSeqs;
    const int step = t0 + kN * (row / (kChannels * kSeqs)) + t;
    if (bad[row] && b < sequence_room && c0 + cc < channels && step < steps)
      out[b * plane + static_cast<long long>(step) * channels + c0 + cc] =
          plain_sum(in, lag_weights, plane, channels, b, step, c0 + cc) + eps;
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace embednorm_conv_wgmma

// causal_conv (docs/SEMANTICS.md, "Causal convolution"), the RWKV depthwise causal convolution, on
// a batch of B sequences of T steps over C channels, float32, in the token-embedding layout the
// users hold: input and output (B, T, C), element (b, t, c) at (b * T + t) * C + c; the weights
// lag-major (T, C), lag_weights[L * C + c] = w[c][T_w - 1 - L], prepared once per kernel on the host.
//   out[b][t][c] = eps + sum_{u <= t} lag_weights[t - u][c] * in[b][u][c]
// Working in (B, T, C) costs no transpose: a warp's 32 lanes are 32 consecutive channels, so every
// device load and store is a full 128-byte line.
//
// A block owns 32 channels, kSeqs sequences and kWarps * kSteps consecutive output steps; each warp
// kSteps of them, each lane one channel, so a thread holds kSteps x kSeqs sums in registers (the
// article's register blocking across sequences, here also across steps). The inputs u = 0 .. last
// step go through shared memory in chunks of kChunk steps (all kSeqs sequences, 32 channels, as
// float4 over 4 sequences) with the weights of every lag the chunk meets. Within a chunk a warp
// takes kSteps inputs at a time and slides a window of 2 kSteps - 1 weights held in registers over
// them: per kSteps inputs, kSteps * kSteps * kSeqs multiply-adds against 2 kSteps - 1 + kSteps *
// kSeqs / 4 shared loads. The diagonal step block (u and t in the same kSteps) skips u > t
// explicitly, so a NaN or infinity in a later input never reaches an earlier output.
// Blocks go heaviest (largest t) first, so the triangle's long tiles do not trail at the end.
// Each output sums its inputs in increasing u, from zero, then adds eps.

namespace embednorm_conv {

constexpr int kLanes = 32;   // channels a block
constexpr int kWarps = 8;    // warps a block
constexpr int kSteps = 8;    // output steps a thread
constexpr int kSeqs = 8;     // sequences a thread (a multiple of 4)
constexpr int kChunk = 32;   // input steps staged at a time (a multiple of kSteps)
constexpr int kTile = kWarps * kSteps;       // output steps a block
constexpr int kQuads = kSeqs / 4;
constexpr int kLagRows = kTile + kChunk;     // lags a chunk meets (kTile + kChunk - 1), rounded

struct Shared {
  float4 inputs[kChunk][kQuads][kLanes];
  float weights[kLagRows][kLanes];
};

// kSteps inputs from u = ub (chunk row `row`) into the sums; kDiagonal: ub is the warp's first step.
template <bool kDiagonal>
__device__ __forceinline__ void accumulate(float (&sums)[kSteps][kSeqs], const Shared& shared,
                                           int window_row, int row, int lane) {
  float window[2 * kSteps - 1];
#pragma unroll
  for (int m = 0; m < 2 * kSteps - 1; ++m) window[m] = shared.weights[window_row + m][lane];
#pragma unroll
  for (int j = 0; j < kSteps; ++j) {
    float in[kSeqs];
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      const float4 four = shared.inputs[row + j][q][lane];
      in[4 * q] = four.x; in[4 * q + 1] = four.y; in[4 * q + 2] = four.z; in[4 * q + 3] = four.w;
    }
#pragma unroll
    for (int i = 0; i < kSteps; ++i) {
      if (kDiagonal && i < j) continue;  // u > t: no term
      const float w = window[i - j + kSteps - 1];
#pragma unroll
      for (int s = 0; s < kSeqs; ++s) sums[i][s] = fmaf(w, in[s], sums[i][s]);
    }
  }
}

}  // namespace embednorm_conv

extern "C" __global__ void __launch_bounds__(embednorm_conv::kWarps * 32, 2)
embednorm_causal_conv_f32(const float* __restrict__ input, float* __restrict__ output,
                          const float* __restrict__ lag_weights, int sequences, int steps,
                          int channels, float eps) {
  using namespace embednorm_conv;
  __shared__ Shared shared;
  const int tiles = (steps + kTile - 1) / kTile;
  const int channel_groups = (channels + kLanes - 1) / kLanes;
  const int sequence_groups = (sequences + kSeqs - 1) / kSeqs;
  const int per_tile = channel_groups * sequence_groups;
  const int tile = tiles - 1 - static_cast<int>(blockIdx.x) / per_tile;
  const int rest = static_cast<int>(blockIdx.x) % per_tile;
  const int c0 = (rest % channel_groups) * kLanes;
  const int b0 = (rest / channel_groups) * kSeqs;
  const int t0 = tile * kTile;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int t_warp = t0 + warp * kSteps;
  const int c = c0 + lane;
  const long long plane = static_cast<long long>(steps) * channels;

  float sums[kSteps][kSeqs];
#pragma unroll
  for (int i = 0; i < kSteps; ++i)
#pragma unroll
    for (int s = 0; s < kSeqs; ++s) sums[i][s] = 0.f;

  const int u_end = min(t0 + kTile, steps);
  for (int u0 = 0; u0 < u_end; u0 += kChunk) {
    __syncthreads();  // the previous chunk is read
    for (int index = threadIdx.x; index < kChunk * kQuads * kLanes; index += kWarps * 32) {
      const int q = (index / kLanes) % kQuads;
      const int row = index / (kLanes * kQuads);
      const int u = u0 + row;
      float v[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int b = b0 + 4 * q + e;
        v[e] = (b < sequences && u < steps && c < channels)
                   ? input[b * plane + static_cast<long long>(u) * channels + c]
                   : 0.f;
      }
      shared.inputs[row][q][lane] = make_float4(v[0], v[1], v[2], v[3]);
    }
    const int lag_low = t0 - u0 - (kChunk - 1);
    for (int index = threadIdx.x; index < kLagRows * kLanes; index += kWarps * 32) {
      const int row = index / kLanes;
      const int lag = lag_low + row;
      shared.weights[row][lane] = (lag >= 0 && lag < steps && c < channels)
                                      ? lag_weights[static_cast<long long>(lag) * channels + c]
                                      : 0.f;
    }
    __syncthreads();
#pragma unroll 1
    for (int block = 0; block < kChunk / kSteps; ++block) {
      const int ub = u0 + block * kSteps;
      if (ub > t_warp) break;  // warp-uniform: every later input is after this warp's steps
      // window[m] holds lag t_warp - ub - (kSteps - 1) + m
      const int window_row = (warp - block - 1) * kSteps + kChunk;
      if (ub < t_warp) {
        accumulate<false>(sums, shared, window_row, block * kSteps, lane);
      } else {
        accumulate<true>(sums, shared, window_row, block * kSteps, lane);
      }
    }
  }

  if (c >= channels) return;
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {
    const int t = t_warp + i;
    if (t >= steps) break;
#pragma unroll
    for (int s = 0; s < kSeqs; ++s) {
      const int b = b0 + s;
      if (b < sequences) output[b * plane + static_cast<long long>(t) * channels + c] = sums[i][s] + eps;
    }
  }
}

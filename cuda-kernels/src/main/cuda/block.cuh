// Block path: a block per row, the row cached in shared memory (or re-read from device memory).
// Part of embednorm_kernels.cu.
#pragma once

#include "common.cuh"

namespace embednorm {
namespace {

template <typename C, bool MAX>
__device__ __forceinline__ C block_reduce(C value, C* scratch) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  for (int mask = 16; mask > 0; mask >>= 1) {
    const C other = __shfl_xor_sync(0xffffffffu, value, mask);
    value = MAX ? max_nan(value, other) : value + other;
  }
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  C total = scratch[0];
  for (int w = 1; w < warps; ++w) total = MAX ? max_nan(total, scratch[w]) : total + scratch[w];
  __syncthreads();  // scratch is reused by the next reduction
  return total;
}

// Moves PACK values between registers and the shared-memory cache, 16 bytes at a time where the
// pack allows (scalar 4-byte stores at a stride of PACK would conflict on the banks).
template <typename C, int PACK>
__device__ __forceinline__ void cache_access(C* cache, C (&values)[PACK], bool store) {
  if constexpr ((PACK * sizeof(C)) % 16 == 0) {
    constexpr int kChunk = 16 / sizeof(C);
#pragma unroll
    for (int c = 0; c < PACK / kChunk; ++c) {
      Pack<C, kChunk>* slot = reinterpret_cast<Pack<C, kChunk>*>(cache + c * kChunk);
      if (store) {
        Pack<C, kChunk> chunk;
#pragma unroll
        for (int k = 0; k < kChunk; ++k) chunk.values[k] = values[c * kChunk + k];
        *slot = chunk;
      } else {
        const Pack<C, kChunk> chunk = *slot;
#pragma unroll
        for (int k = 0; k < kChunk; ++k) values[c * kChunk + k] = chunk.values[k];
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < PACK; ++k) {
      if (store) {
        cache[k] = values[k];
      } else {
        values[k] = cache[k];
      }
    }
  }
}

// A block per row. With PACK > 1 each row is read as a scalar head up to its first 16-byte
// boundary, 16-byte packs, and a scalar tail, so any width and any row start gets 16-byte
// accesses (input and output must share their alignment modulo 16; the host checks). The cache
// is offset so that the packs stay 16-byte aligned in shared memory too.
template <int OP, typename T, int PACK, bool CACHED, bool ALIGNED>
__device__ __forceinline__ void block_rows(const T* __restrict__ input, T* __restrict__ output,
                                           const long long* __restrict__ offsets, long long rows,
                                           int width, double eps,
                                           const typename Compute<T>::type* __restrict__ weight,
                                           const typename Compute<T>::type* __restrict__ bias) {
  using C = typename Compute<T>::type;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  __shared__ C scratch[32];
  __shared__ double scratch_double[32];
  const C epsilon = static_cast<C>(eps);

  const int thread = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  const long long first_row = blockIdx.x;
  const long long row_step = gridDim.x;
  auto reduce_sum = [&](C value) { return block_reduce<C, false>(value, scratch); };
  auto reduce_max = [&](C value) { return block_reduce<C, true>(value, scratch); };
  auto reduce_exact = [&](double value) {
    return block_reduce<double, false>(value, scratch_double);
  };
  auto reduce_exact_max = [&](double value) {
    return block_reduce<double, true>(value, scratch_double);
  };

  for (long long row = first_row; row < rows; row += row_step) {
    const long long start = row_start<T>(offsets, row, width);
    const int n = row_width(offsets, row, width);
    if (n == 0) continue;
    const T* in = input + start;
    T* out = output + start;
    // ALIGNED: the host promises 16-byte aligned rows whose widths are multiples of PACK.
    const int misaligned =
        PACK > 1 && !ALIGNED
            ? static_cast<int>((reinterpret_cast<unsigned long long>(in) & 15) / sizeof(T))
            : 0;
    const int head = ALIGNED ? 0 : min(n, (PACK - misaligned) % PACK);
    const int body = (n - head) / PACK;
    const int tail_start = head + body * PACK;
    const int tail = n - tail_start;
    C* cache = reinterpret_cast<C*>(shared_bytes) + (ALIGNED ? 0 : (PACK - head % PACK) % PACK);

    // Reads N elements at col (from the cache after the first pass when CACHED).
    auto load = [&](int col, auto& values, bool first) {
      constexpr int N = sizeof(values) / sizeof(values[0]);
      if (CACHED && !first) {
        cache_access<C, N>(cache + col, values, false);
      } else {
        const Pack<T, N> pack = *reinterpret_cast<const Pack<T, N>*>(in + col);
#pragma unroll
        for (int k = 0; k < N; ++k) values[k] = widen(pack.values[k]);
        if (CACHED) cache_access<C, N>(cache + col, values, true);
      }
    };
    auto store = [&](int col, auto& values) {
      constexpr int N = sizeof(values) / sizeof(values[0]);
      C results[N];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        C value = values[k];
        if (weight != nullptr) value *= weight[col + k];
        if (bias != nullptr) value += bias[col + k];
        results[k] = value;
      }
      *reinterpret_cast<Pack<T, N>*>(out + col) = narrow_pack<T>(results);
    };
    // Calls visit(col, values) for this thread's packs, then its head and tail elements.
    auto for_each = [&](auto&& visit) {
      for (int i = thread; i < body; i += threads) {
        C values[PACK];
        visit(head + i * PACK, values);
      }
      if (!ALIGNED && thread < head) {
        C values[1];
        visit(thread, values);
      }
      if (!ALIGNED && thread < tail) {
        C values[1];
        visit(tail_start + thread, values);
      }
    };

    if constexpr (OP == kRmsNorm || lp_norm(OP) || OP == kLayerNorm) {
      // squares: Σx² of the (centred) row, or l1's and linf's statistic (norm_term).
      C shift = 0, mean = 0, squares = 0;
      if constexpr (OP == kLayerNorm) {
        shift = widen(in[0]);
        C sum = 0;
        for_each([&](int col, auto& values) {
          load(col, values, true);
          for (C value : values) sum += value - shift;
        });
        mean = reduce_sum(sum) / n;
        for_each([&](int col, auto& values) {
          load(col, values, false);
          for (C value : values) {
            const C centered = (value - shift) - mean;
            squares += centered * centered;
          }
        });
      } else {
        for_each([&](int col, auto& values) {
          load(col, values, true);
          for (C value : values) squares = norm_combine<OP>(squares, norm_term<OP>(value));
        });
      }
      squares = OP == kLinfNormalize ? reduce_max(squares) : reduce_sum(squares);
      const double eps_floor = lp_norm(OP) ? 0x1p-40 : 0x1p-60;
      const bool sum_ok =
          OP != kLayerNorm || (mean == mean && mean <= C(0x1p100f) && mean >= C(-0x1p100f));
      if (sum_ok && safe_squares(squares, eps, eps_floor)) {
        const C scale = lp_norm(OP) ? C(1) / max_nan(norm_of<OP>(squares), epsilon)
                                    : C(1) / sqrt_c(squares / n + epsilon);
        for_each([&](int col, auto& values) {
          load(col, values, false);
          for (C& value : values) {
            value = OP == kLayerNorm ? ((value - shift) - mean) * scale : value * scale;
          }
          store(col, values);
        });
      } else {
        // Rare: recompute the row's statistics in double, then round each output once.
        double offset = 0;
        if constexpr (OP == kLayerNorm) {
          double sum = 0;
          for_each([&](int col, auto& values) {
            load(col, values, false);
            for (C value : values) sum += static_cast<double>(value) - shift;
          });
          offset = static_cast<double>(shift) + reduce_exact(sum) / n;
        }
        double exact = 0;
        for_each([&](int col, auto& values) {
          load(col, values, false);
          for (C value : values) {
            const double centered = static_cast<double>(value) - offset;
            exact = norm_combine<OP>(exact, norm_term<OP>(centered));
          }
        });
        exact = OP == kLinfNormalize ? reduce_exact_max(exact) : reduce_exact(exact);
        const double scale = lp_norm(OP) ? 1.0 / max_nan(norm_of<OP>(exact), eps)
                                         : 1.0 / sqrt(exact / n + eps);
        for_each([&](int col, auto& values) {
          load(col, values, false);
          for (C& value : values) {
            value = static_cast<C>((static_cast<double>(value) - offset) * scale);
          }
          store(col, values);
        });
      }
    } else {
      C maximum = -INFINITY;
      for_each([&](int col, auto& values) {
        load(col, values, true);
        for (C value : values) maximum = max_elements(maximum, value);
      });
      maximum = reduce_max(maximum);
      C sum = 0;
      for_each([&](int col, auto& values) {
        load(col, values, false);
        for (C value : values) sum += exp_c(value - maximum);
      });
      sum = reduce_sum(sum);
      const C inverse = C(1) / sum;
      const C log_sum = log_c(sum);
      for_each([&](int col, auto& values) {
        load(col, values, false);
        for (C& value : values) {
          value = OP == kSoftmax ? exp_c(value - maximum) * inverse : (value - maximum) - log_sum;
        }
        store(col, values);
      });
    }
    __syncthreads();  // the cache is rewritten by the block's next row
  }
}

}  // namespace
}  // namespace embednorm

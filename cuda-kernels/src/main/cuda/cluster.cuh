// Cluster path (compute capability 9.0 and newer): a row split over CLUSTER blocks of a
// thread-block cluster, held in registers, 64 (or 128) bytes a thread in 16-byte packs. Wide rows
// then need neither a shared-memory cache nor a second read of device memory, and an SM holds
// slices of several rows at once, so one row's reductions overlap other rows' loads (one
// 1024-thread block per row left an SM idle between its load and store phases). Partial results
// meet through distributed shared memory. Only for batches whose rows all start 16-byte aligned
// with widths that are multiples of PACK. Part of embednorm_kernels.cu.
#pragma once

#include <cooperative_groups.h>

#include "common.cuh"

namespace embednorm {
namespace {

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

// Shared-memory addresses and the Hopper exchange between the blocks of a cluster: each block
// pushes its partial into every block's slot with st.async, which completes a transaction on the
// receiver's mbarrier. A cluster-wide barrier would also do, but its release semantics wait for the
// block's earlier global stores (the previous row's outputs) to land, which measured 20-30 points
// slower at width 8192.
__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}
__device__ __forceinline__ unsigned at_rank(unsigned address, int rank) {
  unsigned mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(mapped) : "r"(address), "r"(rank));
  return mapped;
}
__device__ __forceinline__ void push(unsigned slot, float value, unsigned barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];"
               :: "r"(slot), "r"(__float_as_uint(value)), "r"(barrier) : "memory");
}
__device__ __forceinline__ void push(unsigned slot, double value, unsigned barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];"
               :: "r"(slot), "l"(__double_as_longlong(value)), "r"(barrier) : "memory");
}
__device__ __forceinline__ void expect_bytes(unsigned barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(barrier), "r"(bytes) : "memory");
}
__device__ __forceinline__ void wait_phase(unsigned barrier, unsigned parity) {
  unsigned done;
  do {
    asm volatile(
        "{\n\t.reg .pred complete;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, complete;\n\t}"
        : "=r"(done) : "r"(barrier), "r"(parity) : "memory");
  } while (!done);
}

// One block's side of the exchange: two rounds' slots (one per block of the cluster) and their
// mbarriers. A slot is rewritten two reductions later, when its block has received the sender's
// next partial, which that block pushes only after it has read this round's slots.
template <typename C>
struct alignas(16) Exchange {
  unsigned long long barriers[2];
  C slots[2][8];
  C warps[32];

  __device__ void init() {
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(shared_address(&barriers[0])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(shared_address(&barriers[1])));
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
  }
};

// Combines `value` over the cluster: shuffles, one shared-memory step per block, then the blocks'
// partials in rank order in every block, so that every block gets the same bits.
template <typename C, bool MAX, int CLUSTER>
__device__ __forceinline__ C cluster_reduce(C value, Exchange<C>& exchange, int rank, int& round) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  for (int mask = 16; mask > 0; mask >>= 1) {
    const C other = __shfl_xor_sync(0xffffffffu, value, mask);
    value = MAX ? max_nan(value, other) : value + other;
  }
  if (lane == 0) exchange.warps[warp] = value;
  __syncthreads();
  const int slot = round & 1;
  const unsigned parity = (round >> 1) & 1;
  ++round;
  C total = 0;
  if (threadIdx.x == 0) {
    total = exchange.warps[0];
    for (int w = 1; w < warps; ++w) total = MAX ? max_nan(total, exchange.warps[w]) : total + exchange.warps[w];
  }
  if constexpr (CLUSTER == 1) {
    if (threadIdx.x == 0) exchange.slots[slot][0] = total;
    __syncthreads();
    return exchange.slots[slot][0];
  } else {
    const unsigned barrier = shared_address(&exchange.barriers[slot]);
    if (threadIdx.x == 0) {
      expect_bytes(barrier, CLUSTER * sizeof(C));
      const unsigned mine = shared_address(&exchange.slots[slot][rank]);
#pragma unroll
      for (int other = 0; other < CLUSTER; ++other) {
        push(at_rank(mine, other), total, at_rank(barrier, other));
      }
    }
    wait_phase(barrier, parity);
    total = exchange.slots[slot][0];
#pragma unroll
    for (int other = 1; other < CLUSTER; ++other) {
      total = MAX ? max_nan(total, exchange.slots[slot][other]) : total + exchange.slots[slot][other];
    }
    return total;
  }
}

// The cluster path's float64 fallback: the row's (scale, offset) in double, re-read from device
// memory (widening is exact). Every thread of the cluster calls it.
template <int OP, typename T, int PACK, int CLUSTER, int BYTES>
__device__ __noinline__ double2 cluster_exact_statistics(const T* in, int n, int first, int stride,
                                                         double eps, Exchange<double>& exchange,
                                                         int rank, int& round) {
  constexpr int PACKS = BYTES / (PACK * sizeof(T));
  double offset = 0;
  if (OP == kLayerNorm) {
    const double shift = static_cast<double>(widen(in[0]));
    double partial = 0;
    for (int p = 0; p < PACKS; ++p) {
      const int col = (first + p * stride) * PACK;
      for (int k = 0; k < PACK && col < n; ++k) partial += static_cast<double>(widen(in[col + k])) - shift;
    }
    offset = shift + cluster_reduce<double, false, CLUSTER>(partial, exchange, rank, round) / n;
  }
  double squares = 0;
  for (int p = 0; p < PACKS; ++p) {
    const int col = (first + p * stride) * PACK;
    for (int k = 0; k < PACK && col < n; ++k) {
      const double centered = static_cast<double>(widen(in[col + k])) - offset;
      squares = norm_combine<OP>(squares, norm_term<OP>(centered));
    }
  }
  squares = cluster_reduce<double, OP == kLinfNormalize, CLUSTER>(squares, exchange, rank, round);
  const double scale = lp_norm(OP) ? 1.0 / max_nan(norm_of<OP>(squares), eps)
                                   : 1.0 / sqrt(squares / n + eps);
  return make_double2(scale, offset);
}

// The cluster path's float64 fallback for a whole row: its statistics (above), then its outputs
// from a second read of the row, rounded once. Every thread of the cluster calls it.
template <int OP, typename T, int PACK, int CLUSTER, int BYTES>
__device__ __noinline__ void cluster_exact_row(const T* in, T* out, int n, int first, int stride,
                                               double eps, Exchange<double>& exchange, int rank,
                                               int& round, const float* weight,
                                               const float* bias) {
  constexpr int PACKS = BYTES / (PACK * sizeof(T));
  const double2 statistics =
      cluster_exact_statistics<OP, T, PACK, CLUSTER, BYTES>(in, n, first, stride, eps, exchange,
                                                            rank, round);
  for (int p = 0; p < PACKS; ++p) {
    const int col = (first + p * stride) * PACK;
    for (int k = 0; k < PACK && col < n; ++k) {
      float result = static_cast<float>(
          (static_cast<double>(widen(in[col + k])) - statistics.y) * statistics.x);
      if (weight != nullptr) result *= weight[col + k];
      if (bias != nullptr) result += bias[col + k];
      out[col + k] = narrow<T>(result);
    }
  }
}

template <int OP, typename T, int PACK, int CLUSTER, int BYTES>
__device__ __forceinline__ void cluster_rows(const T* __restrict__ input, T* __restrict__ output,
                                             const long long* __restrict__ offsets, long long rows,
                                             int width, double eps,
                                             const float* __restrict__ weight,
                                             const float* __restrict__ bias) {
  using C = float;
  constexpr int PACKS = BYTES / (PACK * sizeof(T));  // BYTES (64 or 128) a thread
  static_assert(PACK * sizeof(T) == 16, "the row is held in 16-byte packs of 32-bit words");
  __shared__ Exchange<C> exchange;
  __shared__ Exchange<double> exchange_double;
  const C epsilon = static_cast<C>(eps);
  const int rank = CLUSTER > 1 ? static_cast<int>(cooperative_groups::this_cluster().block_rank()) : 0;
  const int stride = CLUSTER * blockDim.x;  // packs between one thread's packs
  const int first = rank * blockDim.x + threadIdx.x;
  int round = 0;
  int round_double = 0;
  if constexpr (CLUSTER > 1) {
    exchange.init();
    exchange_double.init();
    cooperative_groups::this_cluster().sync();  // every block's mbarriers before any push
  }
  auto sum = [&](C value) { return cluster_reduce<C, false, CLUSTER>(value, exchange, rank, round); };
  auto maximum_of = [&](C value) {
    return cluster_reduce<C, true, CLUSTER>(value, exchange, rank, round);
  };

  for (long long row = blockIdx.x / CLUSTER; row < rows; row += gridDim.x / CLUSTER) {
    const long long start = row_start<T>(offsets, row, width);
    const int n = row_width(offsets, row, width);
    if (n == 0) continue;  // alike in every block of the cluster
    const T* in = input + start;
    T* out = output + start;
    // The row stays in registers as loaded, 16 bytes a pack in 32-bit words (2-byte rows at half
    // the registers), widened again in each pass.
    Pack<unsigned, 4> raw[PACKS];
    bool present[PACKS];
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
      const int col = (first + p * stride) * PACK;
      present[p] = col < n;
      if (present[p]) {
        raw[p] = *reinterpret_cast<const Pack<unsigned, 4>*>(in + col);
      } else {
#pragma unroll
        for (int w = 0; w < 4; ++w) raw[p].values[w] = 0u;  // +0 in every type
      }
    }
    auto value = [&](int p, int k) -> C {
      if constexpr (sizeof(T) == 2) {
        return widen_word<T>(raw[p].values[k >> 1], k & 1);
      } else {
        return __uint_as_float(raw[p].values[k]);
      }
    };
    // An empty asm on every word between passes, so that each pass widens (and shifts) the values
    // again rather than ptxas keeping one pass's values live into the next beside the words: the
    // 2-byte kernels of 128 bytes a thread spilled 126-212 bytes that way.
    auto rewiden = [&]() {
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
#pragma unroll
        for (int w = 0; w < 4; ++w) asm volatile("" : "+r"(raw[p].values[w]));
      }
    };

    // Outputs are ((x - shift) - mean) * scale for the norms (shift = mean = 0 but for LayerNorm),
    // exp(x - shift) * scale for softmax and (x - shift) - mean for log_softmax; or, for rows that
    // need float64, ((double) x - offset) * exact_scale.
    // Each thread sums in four partials (pack p into partial p mod 4), added pairwise at the end:
    // four chains of dependent adds instead of one. With one chain, 2-byte LayerNorm rows of 64
    // values a thread ran 13-15 points behind the other ops (which have one pass fewer) at width
    // 32768.
    auto total4 = [](const C (&partials)[4]) {
      return (partials[0] + partials[1]) + (partials[2] + partials[3]);
    };
    C shift = 0, mean = 0, scale = 1;
    if constexpr (OP == kRmsNorm || lp_norm(OP) || OP == kLayerNorm) {
      C squares4[4] = {0, 0, 0, 0};  // Σx² (centred), or l1's and linf's statistic (norm_term)
      if constexpr (OP == kLayerNorm) {
        shift = widen(in[0]);
        C partial4[4] = {0, 0, 0, 0};
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            partial4[p & 3] += present[p] ? value(p, k) - shift : C(0);
          }
        }
        mean = sum(total4(partial4)) / n;
        rewiden();
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            const C centered = (value(p, k) - shift) - mean;
            squares4[p & 3] += present[p] ? centered * centered : C(0);
          }
        }
      } else {
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            squares4[p & 3] = norm_combine<OP>(squares4[p & 3], norm_term<OP>(value(p, k)));
          }
        }
      }
      const C squares =
          OP == kLinfNormalize
              ? maximum_of(max_nan(max_nan(squares4[0], squares4[1]),
                                   max_nan(squares4[2], squares4[3])))
              : sum(total4(squares4));
      rewiden();
      const double eps_floor = lp_norm(OP) ? 0x1p-40 : 0x1p-60;
      const bool sum_ok =
          OP != kLayerNorm || (mean == mean && mean <= C(0x1p100f) && mean >= C(-0x1p100f));
      if (sum_ok && safe_squares(squares, eps, eps_floor)) {
        // rms_norm takes Σ / D as Σ · (1 / D), both rounded (1 / D is normal for any width): a
        // division's out-of-line slow path made ptxas spill 12 bytes in a kernel of 128 bytes a
        // thread, a point slower. The same change cost 2-byte layer_norm 3-4 points, so
        // layer_norm divides.
        const C mean_square =
            OP == kRmsNorm ? __fmul_rn(squares, __frcp_rn(static_cast<C>(n))) : squares / n;
        scale = lp_norm(OP) ? C(1) / max_nan(norm_of<OP>(squares), epsilon)
                            : C(1) / sqrt_c(mean_square + epsilon);
      } else {
        // Rare: the row's statistics in double and its outputs, out of line so the hot path keeps
        // its registers (uniform in the cluster: every block has the same sums).
        cluster_exact_row<OP, T, PACK, CLUSTER, BYTES>(in, out, n, first, stride, eps,
                                                       exchange_double, rank, round_double,
                                                       weight, bias);
        continue;
      }
    } else {
      C max4[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          if (present[p]) max4[p & 3] = max_elements(max4[p & 3], value(p, k));
        }
      }
      shift = maximum_of(max_elements(max_elements(max4[0], max4[1]), max_elements(max4[2], max4[3])));
      rewiden();
      C partial4[4] = {0, 0, 0, 0};
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          partial4[p & 3] += present[p] ? exp_c(value(p, k) - shift) : C(0);
        }
      }
      const C partial = total4(partial4);
      const C total = sum(partial);
      rewiden();
      if constexpr (OP == kSoftmax) {
        scale = C(1) / total;
      } else {
        mean = log_c(total);  // (x - max) - log(sum), never x - (max + log(sum))
      }
    }

#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
      const int col = (first + p * stride) * PACK;
      if (present[p]) {
        C results[PACK];
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          C result;
          if constexpr (OP == kSoftmax) {
            result = exp_c(value(p, k) - shift) * scale;
          } else if constexpr (OP == kLogSoftmax) {
            result = (value(p, k) - shift) - mean;
          } else {
            result = ((value(p, k) - shift) - mean) * scale;
          }
          if (weight != nullptr) result *= weight[col + k];
          if (bias != nullptr) result += bias[col + k];
          results[k] = result;
        }
        *reinterpret_cast<Pack<T, PACK>*>(out + col) = narrow_pack<T>(results);
      }
    }
  }
  // Leaving needs no barrier: every push into a block is for a reduction that block waits on.
}

#endif  // cluster path

}  // namespace
}  // namespace embednorm

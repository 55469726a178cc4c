// Warp-row path: unaligned rows of up to 256 packs (widths the warp path cannot pack, too narrow
// for a block), a warp per row. The row is read once into registers: MAXP 16-byte packs a lane
// from the row's first 16-byte boundary (pack i of the row to lane i % 32), and the scalar head
// before that boundary and tail after the last whole pack, one element a lane (at most
// 2 * PACK - 2 of them). Every pass then works on registers; the float64 fallback re-reads the
// row. A warp takes warp_row_rows (tuning.cuh) rows at a time, all their loads in flight before
// the first reduction. Input and output share their alignment modulo 16 (the host checks). Part of
// embednorm_kernels.cu.
#pragma once

#include "common.cuh"

namespace embednorm {
namespace {

template <typename T, int PACK, int MAXP, bool RAW = false>
struct RowSlice {
  using C = typename Compute<T>::type;
  // RAW (2-byte 16-byte packs only): the packs held as loaded, widened at each use.
  static constexpr bool kRaw = RAW && sizeof(T) == 2 && PACK * sizeof(T) == 16;
  C x[kRaw ? 1 : MAXP][kRaw ? 1 : PACK];  // packs past the row hold 0
  Pack<unsigned, 4> w[kRaw ? MAXP : 1];
  C edge_value;     // 0 where edge < 0
  int n, head, body, edge;
  const T* in;
  T* out;

  __device__ __forceinline__ void load(const T* input, T* output, const long long* offsets,
                                       long long row, long long rows, int width, int lane) {
    const long long start = row < rows ? row_start<T>(offsets, row, width) : 0;
    n = row < rows ? row_width(offsets, row, width) : 0;
    in = input + start;
    out = output + start;
    const int misaligned =
        static_cast<int>((reinterpret_cast<unsigned long long>(in) & 15) / sizeof(T));
    head = min(n, (PACK - misaligned) % PACK);
    body = (n - head) / PACK;
    const int tail_start = head + body * PACK;
    // This lane's edge element: head element `lane`, or tail element `lane - head`; -1 for none.
    edge = lane < head ? lane : (lane - head < n - tail_start ? tail_start + lane - head : -1);
#pragma unroll
    for (int p = 0; p < MAXP; ++p) {
      if constexpr (kRaw) {
        if (valid(p, lane)) {
          w[p] = *reinterpret_cast<const Pack<unsigned, 4>*>(in + column(p, lane));
        } else {
#pragma unroll
          for (int k = 0; k < 4; ++k) w[p].values[k] = 0u;
        }
      } else if (valid(p, lane)) {
        const Pack<T, PACK> pack = *reinterpret_cast<const Pack<T, PACK>*>(in + column(p, lane));
#pragma unroll
        for (int k = 0; k < PACK; ++k) x[p][k] = widen(pack.values[k]);
      } else {
#pragma unroll
        for (int k = 0; k < PACK; ++k) x[p][k] = C(0);
      }
    }
    edge_value = edge >= 0 ? widen(in[edge]) : C(0);
  }
  __device__ __forceinline__ C value(int p, int k) const {
    if constexpr (kRaw) {
      return widen_word<T>(w[p].values[k >> 1], k & 1);
    } else {
      return x[p][k];
    }
  }
  __device__ __forceinline__ bool valid(int p, int lane) const { return p * 32 + lane < body; }
  __device__ __forceinline__ int column(int p, int lane) const {
    return head + (p * 32 + lane) * PACK;
  }
};

// A row's statistics on the warp-row path, the same in every lane (xor-butterfly reductions).
template <typename C>
struct RowStatistics {
  C scale = 1, shift = 0, mean = 0, maximum = 0, inverse = 1, log_sum = 0;
  bool needs_double = false;  // float statistics outside the safe range: the float64 fallback
};

template <int OP, typename T, int PACK, int MAXP, bool RAW>
__device__ __forceinline__ RowStatistics<typename Compute<T>::type> warp_row_statistics(
    const RowSlice<T, PACK, MAXP, RAW>& row, int lane, double eps) {
  using C = typename Compute<T>::type;
  RowStatistics<C> stats;
  const int n = row.n;
  const bool has_edge = row.edge >= 0;
  const C e = row.edge_value;
  if constexpr (OP == kRmsNorm || lp_norm(OP) || OP == kLayerNorm) {
    C squares = 0;  // Σx² of the (centred) row, or l1's and linf's statistic (norm_term)
    if constexpr (OP == kLayerNorm) {
      const C shift = n > 0 ? widen(row.in[0]) : C(0);
      C sum = has_edge ? e - shift : C(0);
#pragma unroll
      for (int p = 0; p < MAXP; ++p) {
        if (row.valid(p, lane)) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) sum += row.value(p, k) - shift;
        }
      }
      const C mean = group_sum(sum, 32) / n;
      if (has_edge) {
        const C centered = (e - shift) - mean;
        squares = centered * centered;
      }
#pragma unroll
      for (int p = 0; p < MAXP; ++p) {
        if (row.valid(p, lane)) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            const C centered = (row.value(p, k) - shift) - mean;
            squares += centered * centered;
          }
        }
      }
      stats.shift = shift;
      stats.mean = mean;
    } else {
      squares = norm_term<OP>(e);  // 0 without an edge element, as are the packs past the row
#pragma unroll
      for (int p = 0; p < MAXP; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          squares = norm_combine<OP>(squares, norm_term<OP>(row.value(p, k)));
        }
      }
    }
    squares = group_statistic<OP>(squares, 32);
    const C mean = stats.mean;
    const bool sum_ok =
        OP != kLayerNorm || (mean == mean && mean <= C(0x1p100f) && mean >= C(-0x1p100f));
    stats.needs_double =
        n > 0 && (!sum_ok || !safe_squares(squares, eps, lp_norm(OP) ? 0x1p-40 : 0x1p-60));
    const C epsilon = static_cast<C>(eps);
    stats.scale = lp_norm(OP) ? C(1) / max_nan(norm_of<OP>(squares), epsilon)
                              : C(1) / sqrt_c(squares / n + epsilon);
  } else {
    C maximum = has_edge ? e : C(-INFINITY);
#pragma unroll
    for (int p = 0; p < MAXP; ++p) {
      if (row.valid(p, lane)) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) maximum = max_elements(maximum, row.value(p, k));
      }
    }
    maximum = group_max(maximum, 32);
    C sum = has_edge ? exp_c(e - maximum) : C(0);
#pragma unroll
    for (int p = 0; p < MAXP; ++p) {
      if (row.valid(p, lane)) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) sum += exp_c(row.value(p, k) - maximum);
      }
    }
    sum = group_sum(sum, 32);
    stats.maximum = maximum;
    stats.inverse = C(1) / sum;
    stats.log_sum = log_c(sum);
  }
  return stats;
}

// Stores the row's outputs from its registers, by the float statistics.
template <int OP, typename T, int PACK, int MAXP, bool RAW>
__device__ __forceinline__ void warp_row_store(const RowSlice<T, PACK, MAXP, RAW>& row,
                                               const RowStatistics<typename Compute<T>::type>& stats,
                                               int lane, const typename Compute<T>::type* weight,
                                               const typename Compute<T>::type* bias) {
  using C = typename Compute<T>::type;
  auto result = [&](C value, int col) {
    if constexpr (OP == kRmsNorm || lp_norm(OP)) {
      value *= stats.scale;
    } else if constexpr (OP == kLayerNorm) {
      value = ((value - stats.shift) - stats.mean) * stats.scale;
    } else if constexpr (OP == kSoftmax) {
      value = exp_c(value - stats.maximum) * stats.inverse;
    } else {
      value = (value - stats.maximum) - stats.log_sum;  // never x - (max + log(sum))
    }
    if (weight != nullptr) value *= weight[col];
    if (bias != nullptr) value += bias[col];
    return value;
  };
#pragma unroll
  for (int p = 0; p < MAXP; ++p) {
    if (row.valid(p, lane)) {
      const int col = row.column(p, lane);
      C values[PACK];
#pragma unroll
      for (int k = 0; k < PACK; ++k) values[k] = result(row.value(p, k), col + k);
      *reinterpret_cast<Pack<T, PACK>*>(row.out + col) = narrow_pack<T>(values);
    }
  }
  if (row.edge >= 0) row.out[row.edge] = narrow<T>(result(row.edge_value, row.edge));
}

// The rare float64 fallback of the warp-row path: the row's statistics in double from a second
// read, and every output rewritten (one element a lane at a time; outputs never alias inputs).
template <int OP, typename T>
__device__ __noinline__ void warp_row_exact(const T* in, T* out, int n, int lane, double eps,
                                            const typename Compute<T>::type* weight,
                                            const typename Compute<T>::type* bias) {
  using C = typename Compute<T>::type;
  const double2 exact = exact_statistics<OP>(in, n, 32, lane, eps);
  for (int col = lane; col < n; col += 32) {
    C value = static_cast<C>((static_cast<double>(widen(in[col])) - exact.y) * exact.x);
    if (weight != nullptr) value *= weight[col];
    if (bias != nullptr) value += bias[col];
    out[col] = narrow<T>(value);
  }
}

// The rows of a warp go through each phase together (loads, statistics, stores), so that their
// reductions overlap; the float64 fallback comes last, for the rows that need it.
template <int OP, typename T, int PACK, int MAXP>
__device__ __forceinline__ void warp_row(const T* __restrict__ input, T* __restrict__ output,
                                         const long long* __restrict__ offsets, long long rows,
                                         int width, double eps,
                                         const typename Compute<T>::type* __restrict__ weight,
                                         const typename Compute<T>::type* __restrict__ bias) {
  using C = typename Compute<T>::type;
  constexpr int kRows = warp_row_rows(OP, sizeof(T), MAXP);
  constexpr bool RAW = warp_row_raw(OP, sizeof(T), MAXP);
  const int lane = threadIdx.x & 31;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  for (long long base = warp * kRows; base < rows; base += warps * kRows) {
    RowSlice<T, PACK, MAXP, RAW> slice[kRows];
    RowStatistics<C> stats[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      slice[r].load(input, output, offsets, base + r, rows, width, lane);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      stats[r] = warp_row_statistics<OP, T, PACK, MAXP, RAW>(slice[r], lane, eps);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      warp_row_store<OP, T, PACK, MAXP, RAW>(slice[r], stats[r], lane, weight, bias);
    }
    if constexpr (OP == kRmsNorm || lp_norm(OP) || OP == kLayerNorm) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (stats[r].needs_double) {  // uniform across the warp: one row, reduced values
          warp_row_exact<OP, T>(slice[r].in, slice[r].out, slice[r].n, lane, eps, weight, bias);
        }
      }
    }
  }
}

}  // namespace
}  // namespace embednorm

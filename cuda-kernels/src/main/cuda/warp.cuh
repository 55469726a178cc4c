// Warp path: a group of 1 to 32 lanes per row, the row in registers, several rows a warp and 1 to
// 4 rows a lane at once (tuning.cuh says which kernel and how many). Part of embednorm_kernels.cu.
#pragma once

#include "common.cuh"

namespace embednorm {
namespace {

// One row slice per lane: column of element (p, k) of this lane.
template <int PACK>
__device__ __forceinline__ int column(int p, int k, int group, int group_lane) {
  return (p * group + group_lane) * PACK + k;
}

// Normalizes the row slice x (this lane's elements of a row of n, n == 0 for no row) in place,
// with the group's reductions. Widths are multiples of PACK (the host's condition for PACK > 1), so
// one bounds test per pack masks it whole. Rows that need the float64 fallback set use_double,
// scale_double and shift_double: their outputs are ((double) input - shift_double) * scale_double.
template <int OP, typename T, typename C, int PACK, int PACKS>
__device__ __forceinline__ void warp_normalize(C (&x)[PACK * PACKS], const T* row, int n, int group,
                                               int group_lane, int lane, double eps,
                                               bool& use_double, double& scale_double,
                                               double& shift_double) {
  constexpr int kCols = PACK * PACKS;
  const C epsilon = static_cast<C>(eps);
  use_double = false;
  scale_double = 0;
  shift_double = 0;
  if constexpr (OP == kRmsNorm || lp_norm(OP)) {
    C squares = 0;  // the row's statistic: Σx², Σ|x| or max |x| (norm_term)
#pragma unroll
    for (int i = 0; i < kCols; ++i) squares = norm_combine<OP>(squares, norm_term<OP>(x[i]));
    squares = group_statistic<OP>(squares, group);
    use_double = n > 0 && !safe_squares(squares, eps, OP == kRmsNorm ? 0x1p-60 : 0x1p-40);
    // Shuffles need every lane of the warp: recompute when any group of the warp needs it.
    if (__any_sync(0xffffffffu, use_double)) {
      const double2 exact = exact_statistics<OP>(row, n, group, group_lane, eps);
      scale_double = exact.x;
    }
    const C scale = OP == kRmsNorm ? C(1) / sqrt_c(squares / n + epsilon)
                                   : C(1) / max_nan(norm_of<OP>(squares), epsilon);
#pragma unroll
    for (int i = 0; i < kCols; ++i) x[i] *= scale;
  } else if constexpr (OP == kLayerNorm) {
    // Shift by the row's first value (held by the group's first lane), then two passes.
    const C shift = __shfl_sync(0xffffffffu, x[0], lane & ~(group - 1));
    C sum = 0;
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
#pragma unroll
      for (int k = 0; k < PACK; ++k) {
        if (column<PACK>(p, 0, group, group_lane) < n) sum += x[p * PACK + k] - shift;
      }
    }
    const C mean = group_sum(sum, group) / n;
    C squares = 0;
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
#pragma unroll
      for (int k = 0; k < PACK; ++k) {
        const C centered = (x[p * PACK + k] - shift) - mean;
        if (column<PACK>(p, 0, group, group_lane) < n) squares += centered * centered;
      }
    }
    squares = group_sum(squares, group);
    use_double = n > 0 && (!(mean == mean && mean <= C(0x1p100f) && mean >= C(-0x1p100f)) ||
                           !safe_squares(squares, eps, 0x1p-60));
    if (__any_sync(0xffffffffu, use_double)) {
      const double2 exact = exact_statistics<OP>(row, n, group, group_lane, eps);
      scale_double = exact.x;
      shift_double = exact.y;
    }
    const C scale = C(1) / sqrt_c(squares / n + epsilon);
#pragma unroll
    for (int i = 0; i < kCols; ++i) x[i] = ((x[i] - shift) - mean) * scale;
  } else {
    C maximum = -INFINITY;
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
#pragma unroll
      for (int k = 0; k < PACK; ++k) {
        if (column<PACK>(p, 0, group, group_lane) < n) {
          maximum = max_elements(maximum, x[p * PACK + k]);
        }
      }
    }
    maximum = group_max(maximum, group);
    C sum = 0;
    if constexpr (OP == kSoftmax) {
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          x[p * PACK + k] = exp_c(x[p * PACK + k] - maximum);
          if (column<PACK>(p, 0, group, group_lane) < n) sum += x[p * PACK + k];
        }
      }
      const C inverse = C(1) / group_sum(sum, group);
#pragma unroll
      for (int i = 0; i < kCols; ++i) x[i] *= inverse;
    } else {
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          if (column<PACK>(p, 0, group, group_lane) < n) sum += exp_c(x[p * PACK + k] - maximum);
        }
      }
      // (x - max) - log(sum), never x - (max + log(sum)): the latter rounds at max's scale.
      const C log_sum = log_c(group_sum(sum, group));
#pragma unroll
      for (int i = 0; i < kCols; ++i) x[i] = (x[i] - maximum) - log_sum;
    }
  }
}

// ROWS rows per lane at a time: their loads are all in flight before the first reduction.
template <int OP, typename T, int PACK, int PACKS, int ROWS>
__device__ __forceinline__ void warp_rows(const T* __restrict__ input, T* __restrict__ output,
                                          const long long* __restrict__ offsets, long long rows,
                                          int width, int group, double eps,
                                          const typename Compute<T>::type* __restrict__ weight,
                                          const typename Compute<T>::type* __restrict__ bias) {
  using C = typename Compute<T>::type;
  constexpr int kCols = PACK * PACKS;
  const int lane = threadIdx.x & 31;
  const int group_lane = lane & (group - 1);
  const int groups_per_warp = 32 / group;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  const long long rows_per_warp = static_cast<long long>(groups_per_warp) * ROWS;

  for (long long base = warp * rows_per_warp; base < rows; base += warps * rows_per_warp) {
    C x[ROWS][kCols];
    long long start[ROWS];
    int n[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const long long row = base + static_cast<long long>(lane / group) * ROWS + r;
      const bool active = row < rows;
      start[r] = active ? row_start<T>(offsets, row, width) : 0;
      n[r] = active ? row_width(offsets, row, width) : 0;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        const int col = column<PACK>(p, 0, group, group_lane);
        if (col < n[r]) {
          const Pack<T, PACK> pack = *reinterpret_cast<const Pack<T, PACK>*>(input + start[r] + col);
#pragma unroll
          for (int k = 0; k < PACK; ++k) x[r][p * PACK + k] = widen(pack.values[k]);
        } else {
#pragma unroll
          for (int k = 0; k < PACK; ++k) x[r][p * PACK + k] = C(0);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      bool use_double;
      double scale_double, shift_double;
      warp_normalize<OP, T, C, PACK, PACKS>(x[r], input + start[r], n[r], group, group_lane, lane,
                                            eps, use_double, scale_double, shift_double);
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        const int col = column<PACK>(p, 0, group, group_lane);
        if (col < n[r]) {
          if (use_double) {
            const Pack<T, PACK> pack =
                *reinterpret_cast<const Pack<T, PACK>*>(input + start[r] + col);
#pragma unroll
            for (int k = 0; k < PACK; ++k) {
              x[r][p * PACK + k] = static_cast<C>(
                  (static_cast<double>(widen(pack.values[k])) - shift_double) * scale_double);
            }
          }
          C values[PACK];
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            C value = x[r][p * PACK + k];
            if (weight != nullptr) value *= weight[col + k];
            if (bias != nullptr) value += bias[col + k];
            values[k] = value;
          }
          *reinterpret_cast<Pack<T, PACK>*>(output + start[r] + col) = narrow_pack<T>(values);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Warp path, rows in lockstep (16-byte packs of 4- and 2-byte types): a lane's ROWS rows go
// through each step together (partials, each shuffle level, outputs), so that the rows' reduction
// chains overlap instead of running one after another. Per row only its statistics stay live; the
// rare float64 fallback runs after every row is stored, re-reading and rewriting just the rows that
// need it, so that neither the rows nor double statistics are live across it. RAW (2-byte types):
// the rows stay in registers as loaded, two values a 32-bit word, widened again in each pass
// (bf16: a shift or an AND; f16: a conversion), at half the registers of widened rows, which
// makes room for more rows a lane. Rows held widened are centred in place (layer_norm: x - shift,
// then - mean; softmax: exp), which rounds exactly as computing the same expressions again. The
// outputs are bit for bit those of warp_rows. Against warp_rows (widths 32-1024): float32
// layer_norm 13-17 points faster at widths 32-128, 2-byte kernels up to 15; a one-tree Chan merge
// of layer_norm's statistics measured slower.

template <int OP, typename T, int PACK, int PACKS, int ROWS, bool RAW>
__device__ __forceinline__ void warp_rows_lockstep(
    const T* __restrict__ input, T* __restrict__ output, const long long* __restrict__ offsets,
    long long rows, int width, int group, double eps,
    const typename Compute<T>::type* __restrict__ weight,
    const typename Compute<T>::type* __restrict__ bias) {
  using C = typename Compute<T>::type;
  constexpr int kCols = PACK * PACKS;
  constexpr bool kRaw = RAW && sizeof(T) == 2 && PACK * sizeof(T) == 16;
  constexpr bool kNorm = OP == kRmsNorm || lp_norm(OP) || OP == kLayerNorm;
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const int group_lane = lane & (group - 1);
  const int groups_per_warp = 32 / group;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  const long long rows_per_warp = static_cast<long long>(groups_per_warp) * ROWS;
  const C epsilon = static_cast<C>(eps);

  for (long long base = warp * rows_per_warp; base < rows; base += warps * rows_per_warp) {
    C x[kRaw ? 1 : ROWS][kRaw ? 1 : kCols];
    Pack<unsigned, 4> raw[kRaw ? ROWS : 1][kRaw ? PACKS : 1];
    long long start[ROWS];
    int n[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const long long row = base + static_cast<long long>(lane / group) * ROWS + r;
      const bool active = row < rows;
      start[r] = active ? row_start<T>(offsets, row, width) : 0;
      n[r] = active ? row_width(offsets, row, width) : 0;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        const int col = column<PACK>(p, 0, group, group_lane);
        if constexpr (kRaw) {
          if (col < n[r]) {
            raw[r][p] = *reinterpret_cast<const Pack<unsigned, 4>*>(input + start[r] + col);
          } else {
#pragma unroll
            for (int w = 0; w < 4; ++w) raw[r][p].values[w] = 0u;
          }
        } else if (col < n[r]) {
          const Pack<T, PACK> pack = *reinterpret_cast<const Pack<T, PACK>*>(input + start[r] + col);
#pragma unroll
          for (int k = 0; k < PACK; ++k) x[r][p * PACK + k] = widen(pack.values[k]);
        } else {
#pragma unroll
          for (int k = 0; k < PACK; ++k) x[r][p * PACK + k] = C(0);
        }
      }
    }
    auto value = [&](int r, int p, int k) -> C {
      if constexpr (kRaw) {
        return widen_word<T>(raw[r][p].values[k >> 1], k & 1);
      } else {
        return x[r][p * PACK + k];
      }
    };
    auto present = [&](int r, int p) { return column<PACK>(p, 0, group, group_lane) < n[r]; };
    // Raw layer_norm rows of three or more packs a lane: an empty asm on every raw word between
    // passes, so that each pass widens the values again rather than ptxas keeping a pass's widened
    // (or shifted) values live into the next: 48-64 floats beside the raw words spilled (bf16 at
    // eight packs: 116 bytes, and 20-25 points slower); at three packs, two rows a lane, they took
    // 117 registers (two blocks an SM), with it 80 (three).
    auto rewiden = [&]() {
      if constexpr (kRaw && OP == kLayerNorm && PACKS >= 3) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
#pragma unroll
            for (int w = 0; w < 4; ++w) asm volatile("" : "+r"(raw[r][p].values[w]));
          }
        }
      }
    };

    // Per row, outputs are: norms ((x - shift) - mean) * scale (shift = mean = 0 but for
    // layer_norm), softmax exp(x - shift) * scale, log_softmax (x - shift) - mean.
    C shift[ROWS], mean[ROWS], scale[ROWS];
    bool need[ROWS];
    bool any = false;
    if constexpr (kNorm) {
      C squares[ROWS];
      if constexpr (OP == kLayerNorm) {
        C sum[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          // Shift by the row's first value (held by the group's first lane).
          shift[r] = __shfl_sync(kAll, value(r, 0, 0), lane & ~(group - 1));
          sum[r] = 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
#pragma unroll
            for (int k = 0; k < PACK; ++k) {
              const C shifted = value(r, p, k) - shift[r];
              if constexpr (!kRaw) x[r][p * PACK + k] = shifted;
              if (present(r, p)) sum[r] += shifted;
            }
          }
        }
        auto shifted = [&](int r, int p, int k) -> C {
          if constexpr (kRaw) {
            return value(r, p, k) - shift[r];
          } else {
            return x[r][p * PACK + k];
          }
        };
        for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
          for (int r = 0; r < ROWS; ++r) sum[r] += __shfl_xor_sync(kAll, sum[r], mask);
        }
        rewiden();
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          mean[r] = sum[r] / n[r];
          squares[r] = 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
#pragma unroll
            for (int k = 0; k < PACK; ++k) {
              const C centered = shifted(r, p, k) - mean[r];
              if constexpr (!kRaw) x[r][p * PACK + k] = centered;
              if (present(r, p)) squares[r] += centered * centered;
            }
          }
        }
        for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
          for (int r = 0; r < ROWS; ++r) squares[r] += __shfl_xor_sync(kAll, squares[r], mask);
        }
        rewiden();
      } else {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          shift[r] = 0;
          mean[r] = 0;
          squares[r] = 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
#pragma unroll
            for (int k = 0; k < PACK; ++k) {
              squares[r] = norm_combine<OP>(squares[r], norm_term<OP>(value(r, p, k)));
            }
          }
        }
        for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            squares[r] = norm_combine<OP>(squares[r], __shfl_xor_sync(kAll, squares[r], mask));
          }
        }
      }
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const bool sum_ok = OP != kLayerNorm || (mean[r] == mean[r] && mean[r] <= C(0x1p100f) &&
                                                 mean[r] >= C(-0x1p100f));
        need[r] = n[r] > 0 && !(sum_ok && safe_squares(squares[r], eps,
                                                       lp_norm(OP) ? 0x1p-40 : 0x1p-60));
        any = any || need[r];
        scale[r] = lp_norm(OP) ? C(1) / max_nan(norm_of<OP>(squares[r]), epsilon)
                               : C(1) / sqrt_c(squares[r] / n[r] + epsilon);
      }
    } else {
      C sum[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        need[r] = false;
        shift[r] = -INFINITY;
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            if (present(r, p)) shift[r] = max_elements(shift[r], value(r, p, k));
          }
        }
      }
      for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          shift[r] = max_nan(shift[r], __shfl_xor_sync(kAll, shift[r], mask));
        }
      }
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        sum[r] = 0;
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            if constexpr (OP == kSoftmax && !kRaw) {
              x[r][p * PACK + k] = exp_c(x[r][p * PACK + k] - shift[r]);
              if (present(r, p)) sum[r] += x[r][p * PACK + k];
            } else {
              if (present(r, p)) sum[r] += exp_c(value(r, p, k) - shift[r]);
            }
          }
        }
      }
      for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) sum[r] += __shfl_xor_sync(kAll, sum[r], mask);
      }
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        scale[r] = C(1) / sum[r];
        mean[r] = log_c(sum[r]);  // (x - max) - log(sum), never x - (max + log(sum))
      }
    }

#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        const int col = column<PACK>(p, 0, group, group_lane);
        if (col < n[r]) {
          C values[PACK];
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            C result;
            if constexpr (OP == kSoftmax) {
              result = (kRaw ? exp_c(value(r, p, k) - shift[r]) : value(r, p, k)) * scale[r];
            } else if constexpr (OP == kLogSoftmax) {
              result = (value(r, p, k) - shift[r]) - mean[r];
            } else if constexpr (OP == kLayerNorm && kRaw) {
              result = ((value(r, p, k) - shift[r]) - mean[r]) * scale[r];
            } else {
              result = value(r, p, k) * scale[r];  // layer_norm: centred in place
            }
            if (weight != nullptr) result *= weight[col + k];
            if (bias != nullptr) result += bias[col + k];
            values[k] = result;
          }
          *reinterpret_cast<Pack<T, PACK>*>(output + start[r] + col) = narrow_pack<T>(values);
        }
      }
    }

    // The rare float64 fallback: rows whose float statistics left the safe range are computed
    // again in double and their outputs rewritten (by the same lanes, so after the float ones).
    // One row at a time, as the shuffles need every lane of the warp; the row is picked by
    // selects rather than a run-time array index, which would put the arrays in local memory.
    if constexpr (kNorm) {
      if (__any_sync(kAll, any)) {
#pragma unroll 1
        for (int r = 0; r < ROWS; ++r) {
          long long row_begin = 0;
          int row_n = 0;
          bool row_needs = false;
#pragma unroll
          for (int q = 0; q < ROWS; ++q) {
            if (q == r) {
              row_begin = start[q];
              row_n = n[q];
              row_needs = need[q];
            }
          }
          if (__any_sync(kAll, row_needs)) {
            const double2 exact =
                exact_statistics<OP>(input + row_begin, row_n, group, group_lane, eps);
            if (row_needs) {
#pragma unroll
              for (int p = 0; p < PACKS; ++p) {
                const int col = column<PACK>(p, 0, group, group_lane);
                if (col < row_n) {
                  const Pack<T, PACK> pack =
                      *reinterpret_cast<const Pack<T, PACK>*>(input + row_begin + col);
                  C values[PACK];
#pragma unroll
                  for (int k = 0; k < PACK; ++k) {
                    C result = static_cast<C>(
                        (static_cast<double>(widen(pack.values[k])) - exact.y) * exact.x);
                    if (weight != nullptr) result *= weight[col + k];
                    if (bias != nullptr) result += bias[col + k];
                    values[k] = result;
                  }
                  *reinterpret_cast<Pack<T, PACK>*>(output + row_begin + col) =
                      narrow_pack<T>(values);
                }
              }
            }
          }
        }
      }
    }
  }
}

// A warp kernel's body: lockstep or not, raw or not, and its rows a lane, as tuning.cuh says.
template <int OP, typename T, int PACK, int PACKS>
__device__ __forceinline__ void warp_kernel(const T* __restrict__ input, T* __restrict__ output,
                                            const long long* __restrict__ offsets, long long rows,
                                            int width, int group, double eps,
                                            const typename Compute<T>::type* __restrict__ weight,
                                            const typename Compute<T>::type* __restrict__ bias) {
  constexpr int kRows = warp_rows_per_lane(OP, sizeof(T), PACK, PACKS);
  if constexpr (warp_lockstep(sizeof(T), PACK)) {
    constexpr bool kRaw = warp_raw_rows(OP, sizeof(T), PACKS, std::is_same_v<T, __half>);
    warp_rows_lockstep<OP, T, PACK, PACKS, kRows, kRaw>(input, output, offsets, rows, width, group,
                                                       eps, weight, bias);
  } else {
    warp_rows<OP, T, PACK, PACKS, kRows>(input, output, offsets, rows, width, group, eps, weight,
                                         bias);
  }
}

}  // namespace
}  // namespace embednorm

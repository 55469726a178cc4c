
// ---------------------------------------------------------------------------------------------
// Warp path, rows in lockstep: a lane's ROWS rows go through each step together (partials, each
// shuffle level, the fallback test, outputs), so that the rows' reduction chains overlap instead
// of running one after another. RAW (16-byte packs of 2-byte types): the rows stay in registers
// as loaded, two values a 32-bit word, widened again in each pass (bf16: a shift or an AND;
// f16: a conversion), at half the registers of widened rows. CHAN (layer_norm): one shuffle tree
// that merges each lane's (count, shifted sum, M2) with Chan's formula, instead of a tree for the
// sum and then one for the squares.

// Element `high` (0 or 1) of a word holding two 2-byte values, widened exactly.
template <typename T>
__device__ __forceinline__ float widen_word(unsigned word, int high);
template <>
__device__ __forceinline__ float widen_word<__nv_bfloat16>(unsigned word, int high) {
  return __uint_as_float(high ? (word & 0xffff0000u) : (word << 16));
}
template <>
__device__ __forceinline__ float widen_word<__half>(unsigned word, int high) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(high ? word >> 16 : word)));
}

template <int OP, typename T, int PACK, int PACKS, int ROWS, bool RAW, bool CHAN>
__device__ __forceinline__ void warp_rows_lockstep(
    const T* __restrict__ input, T* __restrict__ output, const long long* __restrict__ offsets,
    long long rows, int width, int group, double eps,
    const typename Compute<T>::type* __restrict__ weight,
    const typename Compute<T>::type* __restrict__ bias) {
  using C = typename Compute<T>::type;
  constexpr int kCols = PACK * PACKS;
  constexpr bool kRaw = RAW && sizeof(T) == 2 && PACK * sizeof(T) == 16;
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

    // Per row: outputs are ((x - shift) - mean) * scale (norms; shift = mean = 0 but for
    // layer_norm), exp(x - shift) * scale (softmax) or (x - shift) - mean (log_softmax).
    C shift[ROWS], mean[ROWS], scale[ROWS];
    bool need[ROWS];
    double scale_double[ROWS], shift_double[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      shift[r] = 0;
      mean[r] = 0;
      scale[r] = 1;
      need[r] = false;
      scale_double[r] = 0;
      shift_double[r] = 0;
    }
    if constexpr (OP == kRmsNorm || OP == kL2Normalize || OP == kLayerNorm) {
      C squares[ROWS];
      if constexpr (OP == kLayerNorm && CHAN) {
        // Each lane's (count, sum of x - shift, M2 about its own mean), merged over the group in
        // one tree: M2 = M2a + M2b + (Sa nb - Sb na)^2 / (na nb (na + nb)). Both lanes of a pair
        // compute the same bits (the products are not fused, and a - b == -(b - a)), so every
        // lane of the group ends with the row's statistics.
        C count[ROWS], sum[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          shift[r] = __shfl_sync(kAll, value(r, 0, 0), lane & ~(group - 1));
          count[r] = 0;
          sum[r] = 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
            if (present(r, p)) count[r] += C(PACK);
#pragma unroll
            for (int k = 0; k < PACK; ++k) {
              if (present(r, p)) sum[r] += value(r, p, k) - shift[r];
            }
          }
          const C local_mean = count[r] > C(0) ? __fdividef(sum[r], count[r]) : C(0);
          squares[r] = 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
#pragma unroll
            for (int k = 0; k < PACK; ++k) {
              const C centered = (value(r, p, k) - shift[r]) - local_mean;
              if (present(r, p)) squares[r] += centered * centered;
            }
          }
        }
        for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            const C other_count = __shfl_xor_sync(kAll, count[r], mask);
            const C other_sum = __shfl_xor_sync(kAll, sum[r], mask);
            const C other_squares = __shfl_xor_sync(kAll, squares[r], mask);
            const C d = __fmul_rn(sum[r], other_count) - __fmul_rn(other_sum, count[r]);
            const C both = count[r] * other_count;
            const C merged = count[r] + other_count;
            const C between = both > C(0) ? __fdividef(d * d, both * merged) : C(0);
            squares[r] = (squares[r] + other_squares) + between;
            sum[r] += other_sum;
            count[r] = merged;
          }
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) mean[r] = sum[r] / n[r];
      } else if constexpr (OP == kLayerNorm) {
        // Shift by the row's first value (held by the group's first lane), then two passes.
        C sum[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          shift[r] = __shfl_sync(kAll, value(r, 0, 0), lane & ~(group - 1));
          sum[r] = 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
#pragma unroll
            for (int k = 0; k < PACK; ++k) {
              if (present(r, p)) sum[r] += value(r, p, k) - shift[r];
            }
          }
        }
        for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
          for (int r = 0; r < ROWS; ++r) sum[r] += __shfl_xor_sync(kAll, sum[r], mask);
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          mean[r] = sum[r] / n[r];
          squares[r] = 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
#pragma unroll
            for (int k = 0; k < PACK; ++k) {
              const C centered = (value(r, p, k) - shift[r]) - mean[r];
              if (present(r, p)) squares[r] += centered * centered;
            }
          }
        }
        for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
          for (int r = 0; r < ROWS; ++r) squares[r] += __shfl_xor_sync(kAll, squares[r], mask);
        }
      } else {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          squares[r] = 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
#pragma unroll
            for (int k = 0; k < PACK; ++k) squares[r] += value(r, p, k) * value(r, p, k);
          }
        }
        for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
          for (int r = 0; r < ROWS; ++r) squares[r] += __shfl_xor_sync(kAll, squares[r], mask);
        }
      }
      bool any = false;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const bool sum_ok = OP != kLayerNorm ||
                            (mean[r] == mean[r] && mean[r] <= C(0x1p100f) && mean[r] >= C(-0x1p100f));
        need[r] = n[r] > 0 && !(sum_ok && safe_squares(squares[r], eps,
                                                       OP == kL2Normalize ? 0x1p-40 : 0x1p-60));
        any = any || need[r];
        scale[r] = OP == kL2Normalize ? C(1) / max_nan(sqrt_c(squares[r]), epsilon)
                                      : C(1) / sqrt_c(squares[r] / n[r] + epsilon);
      }
      // The rare float64 fallback, one row at a time (shuffles need every lane of the warp), its
      // code once: the row picked by selects rather than a run-time array index.
      if (__any_sync(kAll, any)) {
#pragma unroll 1
        for (int r = 0; r < ROWS; ++r) {
          const T* row = input;
          int width_r = 0;
          bool need_r = false;
#pragma unroll
          for (int q = 0; q < ROWS; ++q) {
            if (q == r) {
              row = input + start[q];
              width_r = n[q];
              need_r = need[q];
            }
          }
          if (__any_sync(kAll, need_r)) {
            const double2 exact = exact_statistics<OP>(row, width_r, group, group_lane, eps);
#pragma unroll
            for (int q = 0; q < ROWS; ++q) {
              if (q == r) {
                scale_double[q] = exact.x;
                shift_double[q] = exact.y;
              }
            }
          }
        }
      }
    } else {
      C maximum[ROWS], sum[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        maximum[r] = -INFINITY;
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            if (present(r, p)) maximum[r] = max_elements(maximum[r], value(r, p, k));
          }
        }
      }
      for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          maximum[r] = max_nan(maximum[r], __shfl_xor_sync(kAll, maximum[r], mask));
        }
      }
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        shift[r] = maximum[r];
        sum[r] = 0;
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            if constexpr (OP == kSoftmax && !kRaw) {
              x[r][p * PACK + k] = exp_c(x[r][p * PACK + k] - maximum[r]);
              if (present(r, p)) sum[r] += x[r][p * PACK + k];
            } else {
              if (present(r, p)) sum[r] += exp_c(value(r, p, k) - maximum[r]);
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
        if constexpr (OP == kSoftmax) {
          scale[r] = C(1) / sum[r];
        } else {
          mean[r] = log_c(sum[r]);  // (x - max) - log(sum), never x - (max + log(sum))
        }
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
            } else {
              result = need[r] ? static_cast<C>((static_cast<double>(value(r, p, k)) -
                                                 shift_double[r]) * scale_double[r])
                               : ((value(r, p, k) - shift[r]) - mean[r]) * scale[r];
            }
            if (weight != nullptr) result *= weight[col + k];
            if (bias != nullptr) result += bias[col + k];
            values[k] = result;
          }
          *reinterpret_cast<Pack<T, PACK>*>(output + start[r] + col) = narrow_pack<T>(values);
        }
      }
    }
  }
}

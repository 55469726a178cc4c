// embednorm's CUDA kernels: the five row-wise normalizations of DESIGN.md §2 over a batch of rows.
//
// Every kernel has one signature (so that the Java launcher is one piece of code):
//   (const T* input, T* output, const long long* offsets, long long rows, int width,
//    int group, double eps, const C* weight, const C* bias)
// and carries one op, named in the kernel's name (rms_norm, layer_norm, softmax, log_softmax,
// l2_normalize): each kernel holds only its op's code, which keeps registers, and so occupancy, up.
// Rows are contiguous (offsets == nullptr: row r holds elements [r*width, (r+1)*width)) or ragged
// (row r holds [offsets[r], offsets[r+1]); `width` is then the widest row). C is the compute type:
// float for float32, float16 and bfloat16 (loaded narrow, computed in float, stored narrow once);
// double for float64. weight and bias may be null.
//
// Paths, chosen on the host by width (DESIGN.md §5):
//   embednorm_warp_<op>_<type>_p<PACK>_c<PACKS>: a group of `group` lanes (1..32, a power of two)
//     per row, the row held in registers, PACKS packs of PACK elements per lane; several rows per
//     warp, and 2 to 4 rows per lane at once where a row slice is small (more loads in flight),
//     in lockstep for 16-byte packs of 4- and 2-byte types (their reductions overlap).
//   embednorm_warprow_<op>_<type>_p<PACK>_c<PACKS>: unaligned rows, a warp per row in registers,
//     16-byte packs from the row's first 16-byte boundary and a scalar head and tail.
//   embednorm_tile_<op>_<type>_v<VALUES>_r<ROWS>: contiguous unaligned rows, runs of whole rows
//     staged through shared memory with aligned 16-byte copies, a warp per row there.
//   embednorm_cluster_<op>_<type>_k<BLOCKS>[_b128]: Hopper and newer, a row in registers over a
//     cluster of 1 to 8 blocks, 64 (or 128) bytes a thread.
//   embednorm_block_<op>_<type>_p<PACK>_cached: a block per row, the row cached in shared memory.
//   embednorm_block_<op>_<type>_p<PACK>_uncached: a block per row, re-reading device memory.
// PACK > 1 on the warp path means 16-byte loads and stores: the host picks it only when every row
// starts 16-byte aligned and every row width is a multiple of PACK; otherwise PACK is 1.
//
// float rows whose float sums leave the safe range (overflow, or underflow that eps does not
// dominate) are recomputed in double, as the CPU engine does, so extreme magnitudes stay accurate.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cooperative_groups.h>

#include <type_traits>

namespace {

constexpr int kRmsNorm = 0;
constexpr int kLayerNorm = 1;
constexpr int kSoftmax = 2;
constexpr int kLogSoftmax = 3;
constexpr int kL2Normalize = 4;

template <typename T>
struct Compute {
  using type = float;
};
template <>
struct Compute<double> {
  using type = double;
};

__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ float widen(__half x) { return __half2float(x); }
__device__ __forceinline__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ double widen(double x) { return x; }

template <typename T>
__device__ __forceinline__ T narrow(typename Compute<T>::type x);
template <>
__device__ __forceinline__ float narrow<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half narrow<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ double narrow<double>(double x) { return x; }

// A NaN-propagating max: once either side is NaN, the result is NaN (fmaxf would drop it).
__device__ __forceinline__ float max_nan(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ double max_nan(double a, double b) {
  return (a > b || a != a) ? a : b;
}

// The per-element max of softmax's first pass: one instruction (fmax drops NaN), where a
// NaN-propagating max takes three. A NaN element still makes the whole row NaN, as DESIGN.md §2
// wants: exp(NaN - max) makes the sum NaN, and every output carries it.
__device__ __forceinline__ float max_elements(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double max_elements(double a, double b) { return fmax(a, b); }

// e^x as 2^(x log2 e) on the special-function unit: relative error about 2^-22 plus 4e-8 |x|, well
// inside DESIGN.md's tolerance where outputs matter (|x| <= 100 after the max is subtracted), and
// far fewer instructions than expf, which bound softmax on 2-byte rows.
__device__ __forceinline__ float exp_c(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}
__device__ __forceinline__ double exp_c(double x) { return exp(x); }
__device__ __forceinline__ float log_c(float x) { return logf(x); }
__device__ __forceinline__ double log_c(double x) { return log(x); }
__device__ __forceinline__ float sqrt_c(float x) { return sqrtf(x); }
__device__ __forceinline__ double sqrt_c(double x) { return sqrt(x); }

// Whether a float sum of squares can be trusted: finite, no overflow on the way, and either no
// underflow or an eps large enough to dominate whatever underflowed. Doubles are always trusted.
__device__ __forceinline__ bool safe_squares(float squares, double eps, double eps_floor) {
  return squares <= 0x1p100f && (squares >= 0x1p-100f || eps >= eps_floor);
}
__device__ __forceinline__ bool safe_squares(double, double, double) { return true; }

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T values[N];
};

// Narrows N computed values into a pack; 2-byte types convert two at a time (one instruction per
// pair on sm_80+, the same round-to-nearest-even as one at a time).
template <typename T, int N, typename C>
__device__ __forceinline__ Pack<T, N> narrow_pack(const C (&values)[N]) {
  Pack<T, N> pack;
  if constexpr (std::is_same_v<T, __nv_bfloat16> && N % 2 == 0) {
#pragma unroll
    for (int k = 0; k < N; k += 2) {
      const __nv_bfloat162 pair = __floats2bfloat162_rn(values[k], values[k + 1]);
      pack.values[k] = pair.x;
      pack.values[k + 1] = pair.y;
    }
  } else if constexpr (std::is_same_v<T, __half> && N % 2 == 0) {
#pragma unroll
    for (int k = 0; k < N; k += 2) {
      const __half2 pair = __floats2half2_rn(values[k], values[k + 1]);
      pack.values[k] = pair.x;
      pack.values[k + 1] = pair.y;
    }
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) pack.values[k] = narrow<T>(values[k]);
  }
  return pack;
}

template <typename T>
__device__ __forceinline__ long long row_start(const long long* offsets, long long row, int width) {
  return offsets == nullptr ? row * static_cast<long long>(width) : offsets[row];
}
__device__ __forceinline__ int row_width(const long long* offsets, long long row, int width) {
  return offsets == nullptr ? width : static_cast<int>(offsets[row + 1] - offsets[row]);
}

// ---------------------------------------------------------------------------------------------
// Group reductions (a group is `group` consecutive lanes of one warp; all 32 lanes take part).

template <typename C>
__device__ __forceinline__ C group_sum(C value, int group) {
  for (int mask = group >> 1; mask > 0; mask >>= 1) {
    value += __shfl_xor_sync(0xffffffffu, value, mask);
  }
  return value;
}

template <typename C>
__device__ __forceinline__ C group_max(C value, int group) {
  for (int mask = group >> 1; mask > 0; mask >>= 1) {
    value = max_nan(value, __shfl_xor_sync(0xffffffffu, value, mask));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Warp path: the row in registers.

// One row slice per lane: column of element (p, k) of this lane.
template <int PACK>
__device__ __forceinline__ int column(int p, int k, int group, int group_lane) {
  return (p * group + group_lane) * PACK + k;
}

// The rare float64 fallback of the warp path: the row's statistics in double, re-read from
// device memory by the group. Returns (scale, shift): outputs are ((double) x - shift) * scale.
// Every lane of the warp calls it. Inlined: as a call (__noinline__) the registers live across it
// were saved to local memory around it (the 2-byte layer_norm spill). Inlined, float32 kernels at
// 8 or 32 values a lane ran 8-13 points faster on one-pass grids (widths 256, 768) but 3-4 slower
// on resident ones; LaunchPlan puts those on one pass. Other cells moved within 2 points (H200,
// docs/PERFORMANCE.md, "Session 5").
template <int OP, typename T>
__device__ __forceinline__ double2 exact_statistics(const T* row, int n, int group, int group_lane,
                                                 double eps) {
  double shift = 0;
  if (OP == kLayerNorm) {
    const double first = n > 0 ? static_cast<double>(widen(row[0])) : 0.0;
    double sum = 0;
    for (int col = group_lane; col < n; col += group) sum += static_cast<double>(widen(row[col])) - first;
    shift = first + group_sum(sum, group) / n;
  }
  double squares = 0;
  for (int col = group_lane; col < n; col += group) {
    const double centered = static_cast<double>(widen(row[col])) - shift;
    squares += centered * centered;
  }
  squares = group_sum(squares, group);
  const double scale = OP == kL2Normalize ? 1.0 / max_nan(sqrt(squares), eps)
                                          : 1.0 / sqrt(squares / n + eps);
  return make_double2(scale, shift);
}

// Normalizes the row slice x (this lane's elements of a row of n, n == 0 for no row) in place,
// with the group's reductions. Widths are multiples of PACK (the host's condition for PACK > 1), so
// one bounds test per pack masks it whole. Rows that need the float64 fallback set use_double, scale_double
// and shift_double: their outputs are ((double) input - shift_double) * scale_double.
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
  if constexpr (OP == kRmsNorm || OP == kL2Normalize) {
    C squares = 0;
#pragma unroll
    for (int i = 0; i < kCols; ++i) squares += x[i] * x[i];
    squares = group_sum(squares, group);
    use_double = n > 0 && !safe_squares(squares, eps, OP == kRmsNorm ? 0x1p-60 : 0x1p-40);
    // Shuffles need every lane of the warp: recompute when any group of the warp needs it.
    if (__any_sync(0xffffffffu, use_double)) {
      const double2 exact = exact_statistics<OP>(row, n, group, group_lane, eps);
      scale_double = exact.x;
    }
    const C scale = OP == kRmsNorm ? C(1) / sqrt_c(squares / n + epsilon)
                                   : C(1) / max_nan(sqrt_c(squares), epsilon);
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
// outputs are bit for bit those of warp_rows. Measured on an H200 against warp_rows (widths
// 32-1024, docs/PERFORMANCE.md, "Session 6"): fp32 layer_norm +13 to +17 points at widths 32-128,
// 2-byte kernels up to +15; a one-tree Chan merge of layer_norm's statistics measured slower.

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

template <int OP, typename T, int PACK, int PACKS, int ROWS, bool RAW>
__device__ __forceinline__ void warp_rows_lockstep(
    const T* __restrict__ input, T* __restrict__ output, const long long* __restrict__ offsets,
    long long rows, int width, int group, double eps,
    const typename Compute<T>::type* __restrict__ weight,
    const typename Compute<T>::type* __restrict__ bias) {
  using C = typename Compute<T>::type;
  constexpr int kCols = PACK * PACKS;
  constexpr bool kRaw = RAW && sizeof(T) == 2 && PACK * sizeof(T) == 16;
  constexpr bool kNorm = OP == kRmsNorm || OP == kL2Normalize || OP == kLayerNorm;
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
    // eight packs: 116 bytes, H200 70-73 % at widths 1792-2048); at three packs, two rows a lane,
    // they took 117 registers (two blocks an SM), with it 80 (three).
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
            for (int k = 0; k < PACK; ++k) squares[r] += value(r, p, k) * value(r, p, k);
          }
        }
        for (int mask = group >> 1; mask > 0; mask >>= 1) {
#pragma unroll
          for (int r = 0; r < ROWS; ++r) squares[r] += __shfl_xor_sync(kAll, squares[r], mask);
        }
      }
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const bool sum_ok = OP != kLayerNorm || (mean[r] == mean[r] && mean[r] <= C(0x1p100f) &&
                                                 mean[r] >= C(-0x1p100f));
        need[r] = n[r] > 0 && !(sum_ok && safe_squares(squares[r], eps,
                                                       OP == kL2Normalize ? 0x1p-40 : 0x1p-60));
        any = any || need[r];
        scale[r] = OP == kL2Normalize ? C(1) / max_nan(sqrt_c(squares[r]), epsilon)
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

// ---------------------------------------------------------------------------------------------
// Block path: a block per row; the row cached in shared memory (or re-read from device memory).

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

    if constexpr (OP == kRmsNorm || OP == kL2Normalize || OP == kLayerNorm) {
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
          for (C value : values) squares += value * value;
        });
      }
      squares = reduce_sum(squares);
      const double eps_floor = OP == kL2Normalize ? 0x1p-40 : 0x1p-60;
      const bool sum_ok =
          OP != kLayerNorm || (mean == mean && mean <= C(0x1p100f) && mean >= C(-0x1p100f));
      if (sum_ok && safe_squares(squares, eps, eps_floor)) {
        const C scale = OP == kL2Normalize ? C(1) / max_nan(sqrt_c(squares), epsilon)
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
            exact += centered * centered;
          }
        });
        exact = reduce_exact(exact);
        const double scale = OP == kL2Normalize ? 1.0 / max_nan(sqrt(exact), eps)
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


// ---------------------------------------------------------------------------------------------
// Warp-row path: unaligned rows of up to 256 packs (widths the warp path cannot pack, too narrow
// for a block), a warp per row. The row is read once into registers: MAXP 16-byte packs a lane
// from the row's first 16-byte boundary (pack i of the row to lane i % 32), and the scalar head
// before that boundary and tail after the last whole pack, one element a lane (at most 2 * PACK - 2
// of them). Every pass then works on registers; the float64 fallback re-reads the row. A warp
// takes warp_row_rows rows at a time, all their loads in flight before the first
// reduction. Input and output share their alignment modulo 16 (the host checks).
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
  if constexpr (OP == kRmsNorm || OP == kL2Normalize || OP == kLayerNorm) {
    C squares = 0;
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
      squares = e * e;  // 0 without an edge element, as are the packs past the row
#pragma unroll
      for (int p = 0; p < MAXP; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) squares += row.value(p, k) * row.value(p, k);
      }
    }
    squares = group_sum(squares, 32);
    const C mean = stats.mean;
    const bool sum_ok =
        OP != kLayerNorm || (mean == mean && mean <= C(0x1p100f) && mean >= C(-0x1p100f));
    stats.needs_double =
        n > 0 && (!sum_ok || !safe_squares(squares, eps, OP == kL2Normalize ? 0x1p-40 : 0x1p-60));
    const C epsilon = static_cast<C>(eps);
    stats.scale = OP == kL2Normalize ? C(1) / max_nan(sqrt_c(squares), epsilon)
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
    if constexpr (OP == kRmsNorm || OP == kL2Normalize) {
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

// Whether the warp-row path holds a row's 16-byte packs raw (as loaded, widened at each use):
// 2-byte rows at four packs a lane, and at two for the norms. H200, session 7 (docs/PERFORMANCE.md),
// against widened rows: two packs, width 300 rms_norm and l2_normalize 59 -> 77 %, width 500 the
// norms +11 to +14 points (softmaxes: -3 to +1, so they stay widened); ptxas then has no spill
// under the 64-register cap, where the widened norms spilled 42-68 bytes.
__host__ __device__ constexpr bool warp_row_raw(int op, int bytes, int maxp) {
  return bytes == 2 && (maxp == 4 || (maxp == 2 && op != kSoftmax && op != kLogSoftmax));
}

// Rows a warp of the warp-row path takes at a time: 2 where a lane holds up to 2 packs a row, and
// for raw 2-byte rows at four packs (H200, width 769: 85-87 % against 84-85 % for one row, or for
// one raw row: 82-84 %). Widened rows measured 4-30 points slower with 4 rows at two packs or 2 at
// four (session 6, widths 300 and 769); raw rows with 3 or 4 rows at two packs spilled 4-480 bytes
// and measured up to 20 points slower than 2 at widths 300 and 500 (session 7).
__host__ __device__ constexpr int warp_row_rows(int op, int bytes, int maxp) {
  return maxp <= 2 || warp_row_raw(op, bytes, maxp) ? 2 : 1;
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
    if constexpr (OP == kRmsNorm || OP == kL2Normalize || OP == kLayerNorm) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (stats[r].needs_double) {  // uniform across the warp: one row, reduced values
          warp_row_exact<OP, T>(slice[r].in, slice[r].out, slice[r].n, lane, eps, weight, bias);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Tile path: contiguous rows whose starts are not 16-byte aligned (widths that are not a multiple
// of the pack, such as 769, or 2-byte 300), staged through shared memory. A block takes `group`
// consecutive rows at a time as one run of memory, which is aligned but at its two ends: it copies
// the run in with 16-byte asynchronous copies (cp.async) and a scalar head and tail, normalizes
// each row in shared memory (a warp per row, the row in registers: VPL values a lane, lane l
// holding columns l, l + 32, ...), and copies the run out with 16-byte stores and a scalar head
// and tail. Device memory sees only aligned 16-byte accesses, wherever the rows start; on the
// warp-row path an unaligned row costs a scalar head and tail of its own and a second access to
// every pack it shares with its neighbour. Input and output share their alignment modulo 16 (the
// host checks). Ragged rows keep the warp-row path.

__device__ __forceinline__ void copy_async_16(void* shared, const void* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(shared))),
               "l"(global)
               : "memory");
#else
  *reinterpret_cast<uint4*>(shared) = *reinterpret_cast<const uint4*>(global);
#endif
}

__device__ __forceinline__ void wait_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// The rare float64 fallback of the tile path: the row's statistics in double from shared memory,
// then every output, in place (each lane rewrites only the columns it read last).
template <int OP, typename T>
__device__ __noinline__ void tile_row_exact(T* row, int n, int lane, double eps,
                                            const typename Compute<T>::type* weight,
                                            const typename Compute<T>::type* bias) {
  using C = typename Compute<T>::type;
  const double2 exact = exact_statistics<OP>(row, n, 32, lane, eps);
  __syncwarp();
  for (int col = lane; col < n; col += 32) {
    C value = static_cast<C>((static_cast<double>(widen(row[col])) - exact.y) * exact.x);
    if (weight != nullptr) value *= weight[col];
    if (bias != nullptr) value += bias[col];
    row[col] = narrow<T>(value);
  }
}

// Sums (or maxima, MAX) of ROWS values over the warp, one shuffle tree level for every row at a
// time, so that the rows' trees overlap.
template <bool MAX, typename C, int ROWS>
__device__ __forceinline__ void warp_reduce_rows(C (&values)[ROWS]) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const C other = __shfl_xor_sync(0xffffffffu, values[r], mask);
      values[r] = MAX ? max_nan(values[r], other) : values[r] + other;
    }
  }
}

// Normalizes ROWS rows of n <= 32 * VPL elements in shared memory, in place, with the warp, in
// lockstep (each step for every row before the next step, so that the rows' reduction chains
// overlap); rows[r] == nullptr for no row.
template <int OP, typename T, int VPL, int ROWS>
__device__ __forceinline__ void tile_row(T* const (&rows)[ROWS], int n, int lane, double eps,
                                         const typename Compute<T>::type* __restrict__ weight,
                                         const typename Compute<T>::type* __restrict__ bias) {
  using C = typename Compute<T>::type;
  C x[ROWS][VPL];
  // Lanes' values past the row (or of no row) are 0 and never stored.
  const int valid = n - lane;
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
#pragma unroll
    for (int j = 0; j < VPL; ++j) {
      x[r][j] = rows[r] != nullptr && 32 * j < valid ? widen(rows[r][lane + 32 * j]) : C(0);
    }
  }
  C scale[ROWS], shift[ROWS], mean[ROWS], maximum[ROWS], inverse[ROWS], log_sum[ROWS];
  bool needs_double[ROWS];
  if constexpr (OP == kRmsNorm || OP == kL2Normalize || OP == kLayerNorm) {
    C squares[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      squares[r] = 0;
      shift[r] = 0;
      mean[r] = 0;
    }
    if constexpr (OP == kLayerNorm) {
      C sum[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        shift[r] = rows[r] != nullptr ? widen(rows[r][0]) : C(0);
        sum[r] = 0;
#pragma unroll
        for (int j = 0; j < VPL; ++j) {
          if (32 * j < valid) sum[r] += x[r][j] - shift[r];
        }
      }
      warp_reduce_rows<false>(sum);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        mean[r] = sum[r] / n;
#pragma unroll
        for (int j = 0; j < VPL; ++j) {
          if (32 * j < valid) {
            const C centered = (x[r][j] - shift[r]) - mean[r];
            squares[r] += centered * centered;
          }
        }
      }
    } else {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
#pragma unroll
        for (int j = 0; j < VPL; ++j) squares[r] += x[r][j] * x[r][j];  // 0 past the row
      }
    }
    warp_reduce_rows<false>(squares);
    const C epsilon = static_cast<C>(eps);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const bool sum_ok = OP != kLayerNorm ||
                          (mean[r] == mean[r] && mean[r] <= C(0x1p100f) && mean[r] >= C(-0x1p100f));
      needs_double[r] =
          !sum_ok || !safe_squares(squares[r], eps, OP == kL2Normalize ? 0x1p-40 : 0x1p-60);
      scale[r] = OP == kL2Normalize ? C(1) / max_nan(sqrt_c(squares[r]), epsilon)
                                    : C(1) / sqrt_c(squares[r] / n + epsilon);
    }
  } else {
    C sum[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      needs_double[r] = false;
      maximum[r] = C(-INFINITY);
#pragma unroll
      for (int j = 0; j < VPL; ++j) {
        if (32 * j < valid) maximum[r] = max_elements(maximum[r], x[r][j]);
      }
    }
    warp_reduce_rows<true>(maximum);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      sum[r] = 0;
#pragma unroll
      for (int j = 0; j < VPL; ++j) {
        if (32 * j < valid) {
          const C e = exp_c(x[r][j] - maximum[r]);
          if constexpr (OP == kSoftmax) x[r][j] = e;  // kept: the output is e / sum
          sum[r] += e;
        }
      }
    }
    warp_reduce_rows<false>(sum);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      if constexpr (OP == kSoftmax) {
        inverse[r] = C(1) / sum[r];
      } else {
        log_sum[r] = log_c(sum[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    if (rows[r] == nullptr) continue;
    if (needs_double[r]) {  // uniform in the warp; the row in shared memory is still the input
      tile_row_exact<OP, T>(rows[r], n, lane, eps, weight, bias);
      continue;
    }
    auto result = [&](int j) {
      if constexpr (OP == kRmsNorm || OP == kL2Normalize) {
        return x[r][j] * scale[r];
      } else if constexpr (OP == kLayerNorm) {
        return ((x[r][j] - shift[r]) - mean[r]) * scale[r];
      } else if constexpr (OP == kSoftmax) {
        return x[r][j] * inverse[r];
      } else {
        return (x[r][j] - maximum[r]) - log_sum[r];  // never x - (max + log(sum))
      }
    };
    // Without a weight or bias the outputs need no loads (with them, ptxas hoists every lane's
    // weight and bias loads, which spilled).
    if (weight == nullptr && bias == nullptr) {
#pragma unroll
      for (int j = 0; j < VPL; ++j) {
        if (32 * j < valid) rows[r][lane + 32 * j] = narrow<T>(result(j));
      }
    } else {
#pragma unroll
      for (int j = 0; j < VPL; ++j) {
        const int col = lane + 32 * j;
        if (32 * j < valid) {
          C value = result(j);
          if (weight != nullptr) value *= weight[col];
          if (bias != nullptr) value += bias[col];
          rows[r][col] = narrow<T>(value);
        }
      }
    }
  }
}

// Where a run of rows lies: `count` rows from `first_row`, n elements; a scalar head up to the
// first 16-byte boundary, `body` 16-byte packs, a scalar tail; `run` its place in a buffer of
// shared memory, where element `head` sits on a 16-byte boundary as in device memory.
template <typename T>
struct TileRun {
  static constexpr int PACK = 16 / sizeof(T);
  int count, n, head, body, tail_start, tail;
  long long start;
  T* run;

  __device__ __forceinline__ TileRun(long long tile, long long rows, int width, int tile_rows_count,
                                     const T* input, T* buffer) {
    const long long first_row = tile * tile_rows_count;
    count = static_cast<int>(min(static_cast<long long>(tile_rows_count), rows - first_row));
    start = first_row * width;
    n = count * width;  // fits: the run fits in shared memory
    const int misaligned =
        static_cast<int>((reinterpret_cast<unsigned long long>(input + start) & 15) / sizeof(T));
    head = min(n, (PACK - misaligned) % PACK);
    body = (n - head) / PACK;
    tail_start = head + body * PACK;
    tail = n - tail_start;
    run = buffer + (PACK - head % PACK) % PACK;
  }
};

// A block takes runs in turn: loads, then the rows, then stores; the SM's other blocks (4 at 64
// registers) overlap their phases with its. Tried and not kept: two buffers a block on a resident
// grid, each block loading its next run while it normalizes the current one (H200, 2026-11-25:
// 57-80 % of the copy against 72-96 % on one pass; docs/PERFORMANCE.md).
template <int OP, typename T, int VPL, int ROWS>
__device__ __forceinline__ void tile_rows(const T* __restrict__ input, T* __restrict__ output,
                                          long long rows, int width, int tile_rows_count,
                                          double eps,
                                          const typename Compute<T>::type* __restrict__ weight,
                                          const typename Compute<T>::type* __restrict__ bias) {
  constexpr int PACK = 16 / sizeof(T);
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int thread = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  const int lane = thread & 31;
  const int warp = thread >> 5;
  const int warps = threads >> 5;
  const long long tiles = (rows + tile_rows_count - 1) / tile_rows_count;
  // Copies a run into shared memory: 16-byte asynchronous copies, a head and tail element a thread.
  // Both edge elements are loaded before either is stored: stored as loaded, the tail's load waited
  // for the head's store (ptxas cannot tell the pointers apart), and 2-byte softmax at width 769
  // measured 90-92 % of the copy against 97 % (H100, 2026-11-25).
  auto load = [&](const TileRun<T>& r) {
    const T* in = input + r.start;
#pragma unroll 4
    for (int i = thread; i < r.body; i += threads) {
      copy_async_16(r.run + r.head + i * PACK, in + r.head + i * PACK);
    }
    T head, tail;
    if (thread < r.head) head = in[thread];
    if (thread < r.tail) tail = in[r.tail_start + thread];
    if (thread < r.head) r.run[thread] = head;
    if (thread < r.tail) r.run[r.tail_start + thread] = tail;
    wait_async_copies();
  };
  auto normalize = [&](const TileRun<T>& r) {
#pragma unroll 1
    for (int first = warp * ROWS; first < r.count; first += warps * ROWS) {
      T* slices[ROWS];
#pragma unroll
      for (int k = 0; k < ROWS; ++k) {
        slices[k] = first + k < r.count ? r.run + (first + k) * width : nullptr;
      }
      tile_row<OP, T, VPL, ROWS>(slices, width, lane, eps, weight, bias);
    }
  };
  auto store = [&](const TileRun<T>& r) {
    T* out = output + r.start;
#pragma unroll 4
    for (int i = thread; i < r.body; i += threads) {
      *reinterpret_cast<uint4*>(out + r.head + i * PACK) =
          *reinterpret_cast<const uint4*>(r.run + r.head + i * PACK);
    }
    if (thread < r.head) out[thread] = r.run[thread];
    if (thread < r.tail) out[r.tail_start + thread] = r.run[r.tail_start + thread];
  };

  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const TileRun<T> r(tile, rows, width, tile_rows_count, input,
                       reinterpret_cast<T*>(shared_bytes));
    load(r);
    __syncthreads();
    normalize(r);
    __syncthreads();
    store(r);
    __syncthreads();  // the next run overwrites shared memory
  }
}

// ---------------------------------------------------------------------------------------------
// Cluster path (Hopper and newer): a row split over CLUSTER blocks of a thread-block cluster, held
// in registers, 64 bytes a thread in 16-byte packs. Wide rows then need neither a shared-memory
// cache nor a second read of device memory, and an SM holds slices of several rows at once, so
// one row's reductions overlap other rows' loads (one 1024-thread block per row left an SM idle
// between its load and store phases). Partial results meet through distributed shared memory.
// Only for batches whose rows all start 16-byte aligned with widths that are multiples of PACK.

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
      squares += centered * centered;
    }
  }
  squares = cluster_reduce<double, false, CLUSTER>(squares, exchange, rank, round);
  const double scale = OP == kL2Normalize ? 1.0 / max_nan(sqrt(squares), eps)
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
    // values a thread measured 83 % of the copy (H100, width 32768) against 96-98 % for the other
    // ops, which have one pass fewer.
    auto total4 = [](const C (&partials)[4]) {
      return (partials[0] + partials[1]) + (partials[2] + partials[3]);
    };
    C shift = 0, mean = 0, scale = 1;
    if constexpr (OP == kRmsNorm || OP == kL2Normalize || OP == kLayerNorm) {
      C squares4[4] = {0, 0, 0, 0};
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
          for (int k = 0; k < PACK; ++k) squares4[p & 3] += value(p, k) * value(p, k);
        }
      }
      const C squares = sum(total4(squares4));
      rewiden();
      const double eps_floor = OP == kL2Normalize ? 0x1p-40 : 0x1p-60;
      const bool sum_ok =
          OP != kLayerNorm || (mean == mean && mean <= C(0x1p100f) && mean >= C(-0x1p100f));
      if (sum_ok && safe_squares(squares, eps, eps_floor)) {
        // rms_norm takes Σ / D as Σ · (1 / D), both rounded (1 / D is normal for any width): a
        // division's out-of-line slow path made ptxas spill 12 bytes in its two-block kernel of 128
        // bytes a thread, the one cell of the H100 table at 96 % (f32 32768; 97 % without). The
        // same change took bf16 32768 layer_norm from 97 % to 93-94 %, so LayerNorm divides.
        const C mean_square =
            OP == kRmsNorm ? __fmul_rn(squares, __frcp_rn(static_cast<C>(n))) : squares / n;
        scale = OP == kL2Normalize ? C(1) / max_nan(sqrt_c(squares), epsilon)
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

// ---------------------------------------------------------------------------------------------
// Entry points (extern "C": stable names for cuModuleGetFunction).

#define EMBEDNORM_SIGNATURE(T)                                                                  \
  (const T* input, T* output, const long long* offsets, long long rows, int width, int group,   \
   double eps, const Compute<T>::type* weight, const Compute<T>::type* bias)

// Which warp kernels run warp_rows_lockstep: 16-byte packs of 4- and 2-byte types (measured in
// session 6, docs/PERFORMANCE.md); the others (scalar packs, float64) keep warp_rows.
__host__ __device__ constexpr bool warp_lockstep(int bytes, int pack) {
  return bytes <= 4 && pack * bytes == 16;
}

// Whether a lockstep kernel keeps 2-byte rows raw in registers: all but the softmaxes at one
// pack a lane, which hold their rows widened (softmax keeps exp(x - max) in place), and f16
// layer_norm at one or two packs, whose three passes would convert each value three times; both
// measured faster widened (f16 layer_norm: +3 to +6 points).
__host__ __device__ constexpr bool warp_raw_rows(int op, int bytes, int packs, bool half) {
  return bytes == 2 && !(packs == 1 && (op == kSoftmax || op == kLogSoftmax)) &&
         !(half && op == kLayerNorm && packs <= 2);
}

// The warp path's rows per lane (all their loads in flight before the first reduction) and
// register cap (the blocks of 256 threads an SM must hold: 4 is 64 registers, 3 is 80, 2 is 128),
// per op, value size and pack.
// Lockstep kernels (session 6, H200, each op and width 32-1024 timed with 1-8 rows and caps 2-4 on
// both grids, docs/PERFORMANCE.md): 4 rows at one pack a lane (fp32 layer_norm 3; 2-byte softmax
// 3), 2 at two packs, 2 for the norms and 1 for the softmaxes at four, 1 at eight (fp32; 2-byte
// rows at six and eight, session 7, not timed with more); caps 4 at one pack, 3 for 2-byte
// layer_norm at one or two packs (f16 at two: 2) and at three (re-widened between passes, 80
// registers; H100, 2026-11-25: bf16 768 94-96 -> 98 %) and for fp32 norms at two, 3 for fp32
// rms_norm and l2_normalize at eight, else 2 (2-byte six and eight packs: 80-128 registers, no
// spill).
// The others (session 4, "Rows per lane"): 4 rows for up to 4 values a lane (LayerNorm 2), 2 rows
// for 8, 1 beyond, at 64 registers (128 beyond). Where that spilled, fewer rows or 80 registers
// measured faster and are taken:
//   - float32 scalar rows, 8 values a lane, rms_norm, layer_norm and l2_normalize: 80 registers;
//   - 2-byte scalar rows (unaligned widths): 1 row for rms_norm from 4 values, layer_norm at 8;
//   - float64: 1 or 2 rows from 4 values a lane; 80 registers for 2 rows of 8 values (softmax,
//     log_softmax) or of 4 (layer_norm).
// A few float64 kernels still spill (layer_norm at 8 values, softmax from 8), less than before.
// LaunchPlan.rowsPerLane mirrors warp_rows_per_lane exactly; each warp kernel's count is also in
// the module as <kernel>_rows, which the GPU tests compare with LaunchPlan.
__host__ __device__ constexpr int warp_rows_per_lane(int op, int bytes, int pack, int packs) {
  const int cols = pack * packs;
  const bool softmaxes = op == kSoftmax || op == kLogSoftmax;
  if (warp_lockstep(bytes, pack)) {
    if (packs == 1) {
      if (bytes == 4) return op == kLayerNorm ? 3 : 4;
      return op == kSoftmax ? 3 : 4;
    }
    if (packs == 2) return 2;
    if (packs == 3 || packs == 4) return softmaxes ? 1 : 2;
    return 1;
  }
  if (cols > 8) return 1;
  if (bytes == 8) {
    if (cols == 8) return softmaxes ? 2 : 1;
    if (cols == 4) return op == kSoftmax ? 1 : 2;
    if (cols == 2 && op == kSoftmax) return 2;
  } else if (bytes == 2 && pack == 1) {
    if (op == kRmsNorm && cols >= 4) return 1;
    if (op == kLayerNorm && cols == 8) return 1;
  }
  if (cols == 8) return 2;
  return op == kLayerNorm ? 2 : 4;
}

__host__ __device__ constexpr int warp_min_blocks(int op, int bytes, int pack, int packs,
                                                  bool half) {
  const int cols = pack * packs;
  const bool norm = op == kRmsNorm || op == kLayerNorm || op == kL2Normalize;
  if (warp_lockstep(bytes, pack)) {
    if (half && op == kLayerNorm && packs == 2) return 2;  // widened rows, 2 a lane
    if (bytes == 4) {
      if (packs == 1) return 4;
      if (packs == 2) return norm ? 3 : 4;
      if (packs == 3 || packs == 4) return 2;
      return op == kRmsNorm || op == kL2Normalize ? 3 : 2;
    }
    if (packs <= 2) return op == kLayerNorm ? 3 : 4;
    if (packs == 3 && op == kLayerNorm) return 3;
    return 2;
  }
  if (cols > 8) return 2;
  if (bytes == 4 && cols == 8 && norm) return 3;
  if (bytes == 8 && ((cols == 8 && !norm) || (cols == 4 && op == kLayerNorm))) return 3;
  return 4;
}

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

#define EMBEDNORM_WARP(OP_NAME, OP, NAME, T, PACK, PACKS)                                       \
  extern "C" __device__ const int                                                               \
      embednorm_warp_##OP_NAME##_##NAME##_p##PACK##_c##PACKS##_rows =                           \
          warp_rows_per_lane(OP, sizeof(T), PACK, PACKS);                                       \
  extern "C" __global__ void                                                                    \
  __launch_bounds__(256, warp_min_blocks(OP, sizeof(T), PACK, PACKS,                           \
                                         std::is_same_v<T, __half>))                            \
      embednorm_warp_##OP_NAME##_##NAME##_p##PACK##_c##PACKS EMBEDNORM_SIGNATURE(T) {           \
    warp_kernel<OP, T, PACK, PACKS>(input, output, offsets, rows, width, group, eps, weight,    \
                                    bias);                                                      \
  }

#define EMBEDNORM_BLOCK_VARIANT(OP_NAME, OP, NAME, T, PACK, SUFFIX, CACHED, ALIGNED)          \
  extern "C" __global__ void __launch_bounds__(1024)                                            \
      embednorm_block_##OP_NAME##_##NAME##_p##PACK##SUFFIX EMBEDNORM_SIGNATURE(T) {             \
    (void)group;                                                                                \
    block_rows<OP, T, PACK, CACHED, ALIGNED>(input, output, offsets, rows, width, eps, weight,  \
                                             bias);                                             \
  }

#define EMBEDNORM_BLOCK(OP_NAME, OP, NAME, T, PACK)                                             \
  EMBEDNORM_BLOCK_VARIANT(OP_NAME, OP, NAME, T, PACK, _cached, true, false)                     \
  EMBEDNORM_BLOCK_VARIANT(OP_NAME, OP, NAME, T, PACK, _uncached, false, false)

// A warp per row with 16-byte packs and a scalar head and tail, held in registers: unaligned rows
// of up to 32 * MAXP packs (LaunchPlan takes the smallest MAXP that holds the widest row). Up to 2
// packs a lane (2 rows a warp) at most 64 registers: uncapped, ptxas took 76-95 for 2-byte rows and
// the SM held 3 blocks instead of 4 (H200, bf16 width 300: 44-50 % against 54-60 %).
#define EMBEDNORM_WARP_ROW_VARIANT(OP_NAME, OP, NAME, T, PACK, MAXP, BOUNDS)                    \
  extern "C" __global__ void BOUNDS                                                             \
      embednorm_warprow_##OP_NAME##_##NAME##_p##PACK##_c##MAXP EMBEDNORM_SIGNATURE(T) {         \
    (void)group;                                                                                \
    warp_row<OP, T, PACK, MAXP>(input, output, offsets, rows, width, eps, weight, bias);        \
  }
#define EMBEDNORM_WARP_ROW(OP_NAME, OP, NAME, T, PACK)                                          \
  EMBEDNORM_WARP_ROW_VARIANT(OP_NAME, OP, NAME, T, PACK, 1, __launch_bounds__(256, 4))          \
  EMBEDNORM_WARP_ROW_VARIANT(OP_NAME, OP, NAME, T, PACK, 2, __launch_bounds__(256, 4))          \
  EMBEDNORM_WARP_ROW_VARIANT(OP_NAME, OP, NAME, T, PACK, 4, __launch_bounds__(256))             \
  EMBEDNORM_WARP_ROW_VARIANT(OP_NAME, OP, NAME, T, PACK, 8, __launch_bounds__(256))
// 16-byte block variants also come without the head and tail bookkeeping, for aligned batches.
#define EMBEDNORM_BLOCK_PACKED(OP_NAME, OP, NAME, T, PACK)                                      \
  EMBEDNORM_BLOCK(OP_NAME, OP, NAME, T, PACK)                                                   \
  EMBEDNORM_WARP_ROW(OP_NAME, OP, NAME, T, PACK)                                                \
  EMBEDNORM_BLOCK_VARIANT(OP_NAME, OP, NAME, T, PACK, _aligned_cached, true, true)              \
  EMBEDNORM_BLOCK_VARIANT(OP_NAME, OP, NAME, T, PACK, _aligned_uncached, false, true)

// Scalar variants (any width, any alignment): up to 8 elements per lane (wider unaligned rows go
// to the block path).
#define EMBEDNORM_SCALAR(OP_NAME, OP, NAME, T)                                                  \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 1, 1)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 1, 2)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 1, 4)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 1, 8)                                                    \
  EMBEDNORM_BLOCK(OP_NAME, OP, NAME, T, 1)

// 16-byte variants of 4- and 8-byte types: up to 8 packs per lane.
#define EMBEDNORM_VECTOR(OP_NAME, OP, NAME, T, PACK)                                            \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, PACK, 1)                                                 \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, PACK, 2)                                                 \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, PACK, 4)                                                 \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, PACK, 8)                                                 \
  EMBEDNORM_BLOCK_PACKED(OP_NAME, OP, NAME, T, PACK)

// 16-byte variants of 2-byte types: 8 elements a pack, up to 8 packs per lane (6 and 8 for rows
// of 129-256 packs, widths 1032-2048, held raw).
#define EMBEDNORM_VECTOR16(OP_NAME, OP, NAME, T)                                                \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 1)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 2)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 3)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 4)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 6)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 8)                                                    \
  EMBEDNORM_BLOCK_PACKED(OP_NAME, OP, NAME, T, 8)


// Tile path: contiguous unaligned rows staged through shared memory, `group` rows a run, VPL values
// a lane (rows of up to 32 * VPL elements), ROWS rows a warp at once. At most 64 registers, so
// that 4 blocks of 256 fit an SM.
#define EMBEDNORM_TILE_VARIANT(OP_NAME, OP, NAME, T, VPL, ROWS)                                 \
  extern "C" __global__ void __launch_bounds__(256, 4)                                          \
      embednorm_tile_##OP_NAME##_##NAME##_v##VPL##_r##ROWS EMBEDNORM_SIGNATURE(T) {             \
    (void)offsets;                                                                              \
    tile_rows<OP, T, VPL, ROWS>(input, output, rows, width, group, eps, weight, bias);          \
  }
#define EMBEDNORM_TILE(OP_NAME, OP, NAME, T)                                                    \
  EMBEDNORM_TILE_VARIANT(OP_NAME, OP, NAME, T, 10, 2)                                           \
  EMBEDNORM_TILE_VARIANT(OP_NAME, OP, NAME, T, 12, 2)                                           \
  EMBEDNORM_TILE_VARIANT(OP_NAME, OP, NAME, T, 16, 2)                                           \
  EMBEDNORM_TILE_VARIANT(OP_NAME, OP, NAME, T, 20, 1)                                           \
  EMBEDNORM_TILE_VARIANT(OP_NAME, OP, NAME, T, 24, 1)                                           \
  EMBEDNORM_TILE_VARIANT(OP_NAME, OP, NAME, T, 28, 1)                                           \
  EMBEDNORM_TILE_VARIANT(OP_NAME, OP, NAME, T, 32, 1)

// Cluster kernels: a row over CLUSTER blocks of up to 1024 threads, 64 bytes a thread.
// Built for Hopper and newer only; the host plans them only there (compute capability 9.0+).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define EMBEDNORM_CLUSTER_KERNEL(OP_NAME, OP, NAME, T, PACK, CLUSTER, BYTES, SUFFIX)            \
  extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(1024, 1)         \
      embednorm_cluster_##OP_NAME##_##NAME##_k##CLUSTER##SUFFIX EMBEDNORM_SIGNATURE(T) {        \
    (void)group;                                                                                \
    cluster_rows<OP, T, PACK, CLUSTER, BYTES>(input, output, offsets, rows, width, eps, weight, \
                                              bias);                                            \
  }
// 64 bytes a thread over 1 to 8 blocks; 128 bytes a thread (_b128) over 1 or 2: blocks of 512
// threads then hold 64 KB of a row, so that rows of 64-128 KB need one block, or a cluster of two
// of which an SM holds two blocks. float32 rows of 64-128 KB take four blocks of 256 instead
// (EMBEDNORM_CLUSTER_QUARTERS; the host's LaunchPlan.wideClusterBlock says why).
#define EMBEDNORM_CLUSTER(OP_NAME, OP, NAME, T, PACK)                                           \
  EMBEDNORM_CLUSTER_KERNEL(OP_NAME, OP, NAME, T, PACK, 1, 64, )                                 \
  EMBEDNORM_CLUSTER_KERNEL(OP_NAME, OP, NAME, T, PACK, 2, 64, )                                 \
  EMBEDNORM_CLUSTER_KERNEL(OP_NAME, OP, NAME, T, PACK, 4, 64, )                                 \
  EMBEDNORM_CLUSTER_KERNEL(OP_NAME, OP, NAME, T, PACK, 8, 64, )                                 \
  EMBEDNORM_CLUSTER_KERNEL(OP_NAME, OP, NAME, T, PACK, 1, 128, _b128)                           \
  EMBEDNORM_CLUSTER_KERNEL(OP_NAME, OP, NAME, T, PACK, 2, 128, _b128)
#define EMBEDNORM_CLUSTER_QUARTERS(OP_NAME, OP, NAME, T, PACK)                                  \
  EMBEDNORM_CLUSTER_KERNEL(OP_NAME, OP, NAME, T, PACK, 4, 128, _b128)
#else
#define EMBEDNORM_CLUSTER(OP_NAME, OP, NAME, T, PACK)
#define EMBEDNORM_CLUSTER_QUARTERS(OP_NAME, OP, NAME, T, PACK)
#endif

#define EMBEDNORM_OP(OP_NAME, OP)                                                               \
  EMBEDNORM_SCALAR(OP_NAME, OP, f32, float)                                                     \
  EMBEDNORM_VECTOR(OP_NAME, OP, f32, float, 4)                                                  \
  EMBEDNORM_WARP(OP_NAME, OP, f32, float, 4, 3)                                                 \
  EMBEDNORM_CLUSTER(OP_NAME, OP, f32, float, 4)                                                 \
  EMBEDNORM_CLUSTER_QUARTERS(OP_NAME, OP, f32, float, 4)                                        \
  EMBEDNORM_TILE(OP_NAME, OP, f32, float)                                                       \
  EMBEDNORM_SCALAR(OP_NAME, OP, f16, __half)                                                    \
  EMBEDNORM_VECTOR16(OP_NAME, OP, f16, __half)                                                  \
  EMBEDNORM_CLUSTER(OP_NAME, OP, f16, __half, 8)                                                \
  EMBEDNORM_TILE(OP_NAME, OP, f16, __half)                                                      \
  EMBEDNORM_SCALAR(OP_NAME, OP, bf16, __nv_bfloat16)                                            \
  EMBEDNORM_VECTOR16(OP_NAME, OP, bf16, __nv_bfloat16)                                          \
  EMBEDNORM_CLUSTER(OP_NAME, OP, bf16, __nv_bfloat16, 8)                                        \
  EMBEDNORM_TILE(OP_NAME, OP, bf16, __nv_bfloat16)                                              \
  EMBEDNORM_SCALAR(OP_NAME, OP, f64, double)                                                    \
  EMBEDNORM_VECTOR(OP_NAME, OP, f64, double, 2)

EMBEDNORM_OP(rms_norm, kRmsNorm)
EMBEDNORM_OP(layer_norm, kLayerNorm)
EMBEDNORM_OP(softmax, kSoftmax)
EMBEDNORM_OP(log_softmax, kLogSoftmax)
EMBEDNORM_OP(l2_normalize, kL2Normalize)

// ---------------------------------------------------------------------------------------------
// The copy ceiling (KernelBenchmark only): a device-to-device copy written as a kernel, timed next
// to the driver's cuMemcpyDtoD, to tell how close to that copy any kernel of ours can get. It moves
// what the normalization kernels move at their best: 16-byte loads and stores, coalesced across
// the warp, kCopyLoads loads in flight per thread before the first store, on a persistent grid
// (the host launches as many blocks as the device holds; each thread strides over the buffer).
// Buffers 16-byte aligned; the last bytes % 16 are copied one byte a thread.
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

// What every path shares: compute types, loads and stores of packs, the math functions, group
// reductions, and the statistics of the rare float64 fallback. Part of embednorm_kernels.cu.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "tuning.cuh"

namespace embednorm {
namespace {

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
// NaN-propagating max takes three. A NaN element still makes the whole row NaN (docs/SEMANTICS.md,
// "NaN and infinities"): exp(NaN - max) makes the sum NaN, and every output carries it.
__device__ __forceinline__ float max_elements(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double max_elements(double a, double b) { return fmax(a, b); }

// e^x as 2^(x log2 e) on the special-function unit: relative error about 2^-22 plus 4e-8 |x|, well
// inside the bounds of docs/SEMANTICS.md, "Accuracy", where outputs matter (|x| <= 100 after the max is subtracted), and
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

// The statistic of a row under OP, as one term an element and their combination: x² summed for
// rms_norm, layer_norm (on centred values) and l2_normalize, |x| summed for l1_normalize, |x| by a
// NaN-propagating max for linf_normalize. Every term is >= 0 (or NaN), so the 0 of an absent
// element (padding) changes neither. norm_of turns the reduced statistic into the p-norm.
template <int OP, typename C>
__device__ __forceinline__ C norm_term(C x) {
  if constexpr ((OP == kL1Normalize || OP == kLinfNormalize) && std::is_same_v<C, float>) {
    return fabsf(x);
  } else if constexpr (OP == kL1Normalize || OP == kLinfNormalize) {
    return fabs(x);
  } else {
    return x * x;
  }
}
template <int OP, typename C>
__device__ __forceinline__ C norm_combine(C a, C b) {
  if constexpr (OP == kLinfNormalize) {
    return max_nan(a, b);
  } else {
    return a + b;
  }
}
template <int OP, typename C>
__device__ __forceinline__ C norm_of(C statistic) {
  if constexpr (OP == kL2Normalize) {
    return sqrt_c(statistic);
  } else {
    return statistic;
  }
}

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

// A row's statistic (norm_term, norm_combine) over the group.
template <int OP, typename C>
__device__ __forceinline__ C group_statistic(C value, int group) {
  if constexpr (OP == kLinfNormalize) {
    return group_max(value, group);
  } else {
    return group_sum(value, group);
  }
}

// The rare float64 fallback's statistics: the row's in double, re-read from memory by a group of
// lanes. Returns (scale, shift): outputs are ((double) x - shift) * scale. Every lane of the warp
// calls it. Inlined: as a call (__noinline__) the registers live across it were saved to local
// memory around it (the 2-byte layer_norm spill). Inlined, float32 warp kernels at 8 or 32 values
// a lane ran 8-13 points faster on one-pass grids but 3-4 slower on resident ones, and the tuning
// puts those on one pass; other kernels moved within 2 points.
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
    squares = norm_combine<OP>(squares, norm_term<OP>(centered));
  }
  squares = group_statistic<OP>(squares, group);
  const double scale = lp_norm(OP) ? 1.0 / max_nan(norm_of<OP>(squares), eps)
                                   : 1.0 / sqrt(squares / n + eps);
  return make_double2(scale, shift);
}

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

}  // namespace
}  // namespace embednorm

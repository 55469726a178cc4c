// Normalize-then-encode: an op's float32 result y, encoded where it is computed (docs/SEMANTICS.md,
// "Encodings"), so that device memory sees the float32 rows read once and the encoded bytes
// written once. Part of encode_kernels.cu. The rules match io.embednorm.engine.RowEncoder bit for
// bit on the same y, NaN payloads included.
#pragma once

#include "block.cuh"
#include "common.cuh"
#include "warp.cuh"

namespace embednorm {
namespace {

// Encoding.ordinal() on the host.
constexpr int kEncodeFloat16 = 0;
constexpr int kEncodeBFloat16 = 1;
constexpr int kEncodeInt8 = 2;
constexpr int kEncodeBinary = 3;

constexpr unsigned kCanonicalNaN = 0x7fc00000u;  // Java's Float.NaN

// Float16.fromFloat: round to nearest even, NaN keeps its top payload bits with the quiet bit set.
__device__ __forceinline__ unsigned short float16_bits(float y) {
  const unsigned bits = __float_as_uint(y);
  const unsigned magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {
    return static_cast<unsigned short>(((bits >> 16) & 0x8000u) | 0x7e00u |
                                       ((magnitude >> 13) & 0x3ffu));
  }
  return __half_as_ushort(__float2half_rn(y));
}

// BFloat16.fromFloat: round to nearest even, NaN keeps its top bits with the quiet bit set.
__device__ __forceinline__ unsigned short bfloat16_bits(float y) {
  const unsigned bits = __float_as_uint(y);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((bits >> 16) | 0x40u);
  return __bfloat16_as_ushort(__float2bfloat16_rn(y));
}

// RowEncoder.int8Scale from the row's largest |y| (NaN-propagating max, so NaN or +inf where the
// row holds one): max|y| / 127 in float32, NaN for a row that is not finite.
__device__ __forceinline__ float int8_scale(float largest) {
  return largest <= 3.40282347e38f ? __fdiv_rn(largest, 127.0f) : __uint_as_float(kCanonicalNaN);
}

// q = round-half-even(y / scale) clamped to [-127, 127]; 0 where the scale is 0 or NaN. `inverse`
// is 1 / scale rounded: y * inverse is within 2^-16 of the rounded quotient for |q| <= 128, so it
// rounds to the same integer (never past 127) unless it lies within 2^-14 of a half-way point or
// is not finite (a subnormal, zero or NaN scale); only those take the division.
//
// The common case (int8_quick_code) is branch-free: adding 1.5 * 2^23 rounds a quotient under
// 2^22 to an integer, half to even, held in the sum's low mantissa bits, so it needs no conversion
// instructions either; the explicit roundings keep the compiler from fusing the steps into an FMA.
// A caller encodes a few values this way and redoes them with int8_code if any asked to divide.
constexpr float kRoundToInteger = 0x1.8p23f;

__device__ __forceinline__ unsigned int8_quick_code(float y, float inverse, bool& divide) {
  const float quotient = __fmul_rn(y, inverse);
  const float shifted = __fadd_rn(quotient, kRoundToInteger);
  divide |= !(fabsf(quotient - __fsub_rn(shifted, kRoundToInteger)) < 0.5f - 0x1p-14f);
  return __float_as_uint(shifted) & 0xffu;
}

// The division, out of line: its instructions and registers stay out of the kernels' hot loops.
__device__ __noinline__ unsigned int8_divided_code(float y, float scale) {
  if (!(scale > 0.0f)) return 0u;
  const int q = __float2int_rn(fminf(127.0f, fmaxf(-127.0f, __fdiv_rn(y, scale))));
  return static_cast<unsigned>(q) & 0xffu;
}

__device__ __forceinline__ unsigned int8_code(float y, float scale, float inverse) {
  bool divide = false;
  const unsigned code = int8_quick_code(y, inverse, divide);
  return divide ? int8_divided_code(y, scale) : code;
}

// The NaN-propagating max of `largest` (>= 0 or NaN) and |y|, for the int8 scale: one instruction
// (any NaN in the row makes the scale NaN, so which NaN does not matter).
__device__ __forceinline__ float max_magnitude(float largest, float y) {
  float result;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(result) : "f"(largest), "f"(fabsf(y)));
  return result;
}

// Writes N consecutive encoded float16/bfloat16/int8 values of y at element `col` of a row whose
// encoded bytes start at `out`; `vector`: the bytes are aligned to their size (one store).
template <int N>
__device__ __forceinline__ void store_codes(const float (&y)[N], int encoding, float scale,
                                            float inverse, unsigned char* out, int col, int n,
                                            bool vector) {
  if (encoding == kEncodeInt8) {
    if constexpr (N == 4) {
      if (vector && col + 4 <= n) {
        unsigned word = 0;
        bool divide = false;
#pragma unroll
        for (int k = 0; k < 4; ++k) word |= int8_quick_code(y[k], inverse, divide) << (8 * k);
        if (divide) {
          word = 0;
#pragma unroll
          for (int k = 0; k < 4; ++k) word |= int8_code(y[k], scale, inverse) << (8 * k);
        }
        *reinterpret_cast<unsigned*>(out + col) = word;
        return;
      }
    }
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (col + k < n) out[col + k] = static_cast<unsigned char>(int8_code(y[k], scale, inverse));
    }
    return;
  }
  unsigned short halves[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    halves[k] = encoding == kEncodeFloat16 ? float16_bits(y[k]) : bfloat16_bits(y[k]);
  }
  if constexpr (N == 4) {
    if (vector && col + 4 <= n) {
      uint2 words;
      words.x = halves[0] | static_cast<unsigned>(halves[1]) << 16;
      words.y = halves[2] | static_cast<unsigned>(halves[3]) << 16;
      *reinterpret_cast<uint2*>(out + 2 * col) = words;
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (col + k < n) *reinterpret_cast<unsigned short*>(out + 2 * (col + k)) = halves[k];
  }
}

// ---------------------------------------------------------------------------------------------
// Warp path: the op's own warp reduction (warp_normalize, one row a group), then the encoding from
// registers. PACK 4: 16-byte loads, rows aligned with widths a multiple of 4, `group` lanes a row;
// PACK 1: any rows, a warp a row (group 32). (Two and four rows a lane at once, loads in flight
// before the first reduction as the unfused kernels take them, measured no faster at width 128.)
// Capped at 64 registers (four blocks of 256 an SM): the int8 encoding's straight-line codes take
// 94 otherwise, and at two blocks an SM every encoding ran 14-18 points slower at widths 128-256.

// Encodes one row slice x (this lane's elements of row `row`, n of them; n == 0 for no row).
template <int OP, int PACK, int PACKS>
__device__ __forceinline__ void encode_warp_row(
    float (&x)[PACK * PACKS], const float* __restrict__ input, unsigned char* __restrict__ values,
    float* __restrict__ scales, const long long* __restrict__ value_starts, long long row,
    bool active, long long start, int n, int width, int group, int group_lane, int lane, double eps,
    const float* __restrict__ weight, const float* __restrict__ bias, int encoding) {
  bool use_double;
  double scale_double, shift_double;
  warp_normalize<OP, float, float, PACK, PACKS>(x, input + start, n, group, group_lane, lane, eps,
                                                use_double, scale_double, shift_double);
  // y as the unfused warp kernel stores it: the float64 fallback's rows, then weight and bias.
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    const int col = column<PACK>(p, 0, group, group_lane);
#pragma unroll
    for (int k = 0; k < PACK; ++k) {
      float value = x[p * PACK + k];
      if (col < n) {
        if (use_double) {
          value = static_cast<float>(
              (static_cast<double>(input[start + col + k]) - shift_double) * scale_double);
        }
        if (weight != nullptr) value *= weight[col + k];
        if (bias != nullptr) value += bias[col + k];
      } else {
        value = 0.0f;
      }
      x[p * PACK + k] = value;
    }
  }
  const long long value_start = value_starts == nullptr ? 0 : (active ? value_starts[row] : 0);
  if (encoding == kEncodeBinary) {
    unsigned char* out =
        values + (value_starts == nullptr ? row * static_cast<long long>((width + 7) / 8)
                                          : value_start);
    if constexpr (PACK == 1) {
      // group 32: lane l holds column p * 32 + l; a ballot gathers 8 columns a byte.
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        const int col = p * 32 + lane;
        const unsigned bits = __ballot_sync(0xffffffffu, col < n && x[p] >= 0.0f);
        if (col < n && (lane & 7) == 0) out[col >> 3] = static_cast<unsigned char>(bits >> lane);
      }
    } else {
      // 4 columns a pack: pack j's nibble goes to byte j / 2, the high half for odd j.
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        unsigned nibble = 0;
#pragma unroll
        for (int k = 0; k < 4; ++k) nibble |= (x[p * 4 + k] >= 0.0f ? 1u : 0u) << k;
        const int col = column<PACK>(p, 0, group, group_lane);
        if (col >= n) nibble = 0;
        if (group > 1) {
          const unsigned other = __shfl_xor_sync(0xffffffffu, nibble, 1);
          if ((group_lane & 1) == 0 && col < n) {
            out[col >> 3] = static_cast<unsigned char>(nibble | other << 4);
          }
        } else if (col < n) {
          // one lane a row: packs p and p + 1 are neighbours
          if ((p & 1) == 0) {
            out[col >> 3] = static_cast<unsigned char>(nibble);
          } else {
            out[col >> 3] |= static_cast<unsigned char>(nibble << 4);
          }
        }
      }
    }
    return;
  }
  float scale = 1.0f;
  if (encoding == kEncodeInt8) {
    // |y| only here: the other encodings do not pay for it (positions past the row hold 0)
    float largest = 0.0f;
#pragma unroll
    for (int i = 0; i < PACK * PACKS; ++i) largest = max_magnitude(largest, x[i]);
    scale = int8_scale(group_max(largest, group));
    if (active && group_lane == 0) scales[row] = scale;
  }
  const float inverse = __frcp_rn(scale);
  const int element_bytes = encoding == kEncodeInt8 ? 1 : 2;
  unsigned char* out =
      values + (value_starts == nullptr ? row * static_cast<long long>(width) * element_bytes
                                        : value_start);
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    const int col = column<PACK>(p, 0, group, group_lane);
    if (col < n) {
      float y[PACK];
#pragma unroll
      for (int k = 0; k < PACK; ++k) y[k] = x[p * PACK + k];
      store_codes<PACK>(y, encoding, scale, inverse, out, col, n, PACK == 4);
    }
  }
}

template <int OP, int PACK, int PACKS>
__device__ __forceinline__ void encode_warp_rows(
    const float* __restrict__ input, unsigned char* __restrict__ values, float* __restrict__ scales,
    const long long* __restrict__ offsets, const long long* __restrict__ value_starts,
    long long rows, int width, int group, double eps, const float* __restrict__ weight,
    const float* __restrict__ bias, int encoding) {
  constexpr int kCols = PACK * PACKS;
  const int lane = threadIdx.x & 31;
  const int group_lane = lane & (group - 1);
  const int groups_per_warp = 32 / group;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;

  for (long long base = warp * groups_per_warp; base < rows; base += warps * groups_per_warp) {
    const long long row = base + lane / group;
    const bool active = row < rows;
    const long long start = active ? row_start<float>(offsets, row, width) : 0;
    const int n = active ? row_width(offsets, row, width) : 0;
    float x[kCols];
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
      const int col = column<PACK>(p, 0, group, group_lane);
      if (col < n) {
        const Pack<float, PACK> pack = *reinterpret_cast<const Pack<float, PACK>*>(input + start + col);
#pragma unroll
        for (int k = 0; k < PACK; ++k) x[p * PACK + k] = pack.values[k];
      } else {
#pragma unroll
        for (int k = 0; k < PACK; ++k) x[p * PACK + k] = 0.0f;
      }
    }
    encode_warp_row<OP, PACK, PACKS>(x, input, values, scales, value_starts, row, active, start, n,
                                     width, group, group_lane, lane, eps, weight, bias, encoding);
  }
}

// ---------------------------------------------------------------------------------------------
// Block path: a block a row. The statistics run as block_rows runs them (the same elements a
// thread, in the same order, the same block reduction), so that y has the bits the unfused block
// kernel of the same block size stores. The row is cached in shared memory (CACHED) or re-read.
// The last pass gives each thread 4 consecutive elements (8 for binary, a byte), computes their y
// and encodes them; int8 first takes the row's largest |y| in a pass of its own.

template <int OP, bool CACHED>
__device__ __forceinline__ void encode_block_rows(
    const float* __restrict__ input, unsigned char* __restrict__ values, float* __restrict__ scales,
    const long long* __restrict__ offsets, const long long* __restrict__ value_starts,
    long long rows, int width, double eps, const float* __restrict__ weight,
    const float* __restrict__ bias, int encoding) {
  using C = float;
  constexpr int PACK = 4;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  __shared__ C scratch[32];
  __shared__ double scratch_double[32];
  const C epsilon = static_cast<C>(eps);
  const int thread = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  auto reduce_sum = [&](C value) { return block_reduce<C, false>(value, scratch); };
  auto reduce_max = [&](C value) { return block_reduce<C, true>(value, scratch); };
  auto reduce_exact = [&](double value) {
    return block_reduce<double, false>(value, scratch_double);
  };
  auto reduce_exact_max = [&](double value) {
    return block_reduce<double, true>(value, scratch_double);
  };

  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long start = row_start<float>(offsets, row, width);
    const int n = row_width(offsets, row, width);
    const int element_bytes = encoding == kEncodeInt8 ? 1 : 2;
    unsigned char* out =
        values + (value_starts != nullptr ? value_starts[row]
                  : encoding == kEncodeBinary
                      ? row * static_cast<long long>((width + 7) / 8)
                      : row * static_cast<long long>(width) * element_bytes);
    if (n == 0) {
      if (encoding == kEncodeInt8 && thread == 0) scales[row] = 0.0f;
      continue;
    }
    const float* in = input + start;
    const int misaligned = static_cast<int>((reinterpret_cast<unsigned long long>(in) & 15) / 4);
    const int head = min(n, (PACK - misaligned) % PACK);
    const int body = (n - head) / PACK;
    const int tail_start = head + body * PACK;
    const int tail = n - tail_start;
    C* cache = reinterpret_cast<C*>(shared_bytes) + (PACK - head % PACK) % PACK;

    auto load = [&](int col, auto& values, bool first) {
      constexpr int N = sizeof(values) / sizeof(values[0]);
      if (CACHED && !first) {
        cache_access<C, N>(cache + col, values, false);
      } else {
        const Pack<float, N> pack = *reinterpret_cast<const Pack<float, N>*>(in + col);
#pragma unroll
        for (int k = 0; k < N; ++k) values[k] = pack.values[k];
        if (CACHED) cache_access<C, N>(cache + col, values, true);
      }
    };
    auto for_each = [&](auto&& visit) {
      for (int i = thread; i < body; i += threads) {
        C chunk[PACK];
        visit(head + i * PACK, chunk);
      }
      if (thread < head) {
        C chunk[1];
        visit(thread, chunk);
      }
      if (thread < tail) {
        C chunk[1];
        visit(tail_start + thread, chunk);
      }
    };

    // The statistics, as block_rows: y = ((double) x - offset) * scale_double when exact, else
    // the op's float expression of x and (shift, mean, scale) or (maximum, inverse, log_sum).
    C shift = 0, mean = 0, scale = 0, maximum = 0, inverse = 0, log_sum = 0;
    bool exact = false;
    double offset = 0, scale_double = 0;
    if constexpr (OP == kRmsNorm || lp_norm(OP) || OP == kLayerNorm) {
      C squares = 0;
      if constexpr (OP == kLayerNorm) {
        shift = in[0];
        C sum = 0;
        for_each([&](int col, auto& chunk) {
          load(col, chunk, true);
          for (C value : chunk) sum += value - shift;
        });
        mean = reduce_sum(sum) / n;
        for_each([&](int col, auto& chunk) {
          load(col, chunk, false);
          for (C value : chunk) {
            const C centered = (value - shift) - mean;
            squares += centered * centered;
          }
        });
      } else {
        for_each([&](int col, auto& chunk) {
          load(col, chunk, true);
          for (C value : chunk) squares = norm_combine<OP>(squares, norm_term<OP>(value));
        });
      }
      squares = OP == kLinfNormalize ? reduce_max(squares) : reduce_sum(squares);
      const double eps_floor = lp_norm(OP) ? 0x1p-40 : 0x1p-60;
      const bool sum_ok =
          OP != kLayerNorm || (mean == mean && mean <= C(0x1p100f) && mean >= C(-0x1p100f));
      if (sum_ok && safe_squares(squares, eps, eps_floor)) {
        scale = lp_norm(OP) ? C(1) / max_nan(norm_of<OP>(squares), epsilon)
                            : C(1) / sqrt_c(squares / n + epsilon);
      } else {
        exact = true;
        if constexpr (OP == kLayerNorm) {
          double sum = 0;
          for_each([&](int col, auto& chunk) {
            load(col, chunk, false);
            for (C value : chunk) sum += static_cast<double>(value) - shift;
          });
          offset = static_cast<double>(shift) + reduce_exact(sum) / n;
        }
        double statistic = 0;
        for_each([&](int col, auto& chunk) {
          load(col, chunk, false);
          for (C value : chunk) {
            const double centered = static_cast<double>(value) - offset;
            statistic = norm_combine<OP>(statistic, norm_term<OP>(centered));
          }
        });
        statistic = OP == kLinfNormalize ? reduce_exact_max(statistic) : reduce_exact(statistic);
        scale_double = lp_norm(OP) ? 1.0 / max_nan(norm_of<OP>(statistic), eps)
                                   : 1.0 / sqrt(statistic / n + eps);
      }
    } else {
      maximum = -INFINITY;
      for_each([&](int col, auto& chunk) {
        load(col, chunk, true);
        for (C value : chunk) maximum = max_elements(maximum, value);
      });
      maximum = reduce_max(maximum);
      C sum = 0;
      for_each([&](int col, auto& chunk) {
        load(col, chunk, false);
        for (C value : chunk) sum += exp_c(value - maximum);
      });
      sum = reduce_sum(sum);
      inverse = C(1) / sum;
      log_sum = log_c(sum);
    }

    // y of element col, from the cache (filled before the reductions' barriers) or device memory.
    auto result = [&](int col) {
      const C value = CACHED ? cache[col] : in[col];
      C y;
      if constexpr (OP == kSoftmax) {
        y = exp_c(value - maximum) * inverse;
      } else if constexpr (OP == kLogSoftmax) {
        y = (value - maximum) - log_sum;
      } else {
        y = exact ? static_cast<C>((static_cast<double>(value) - offset) * scale_double)
            : OP == kLayerNorm ? ((value - shift) - mean) * scale
                               : value * scale;
      }
      if (weight != nullptr) y *= weight[col];
      if (bias != nullptr) y += bias[col];
      return y;
    };

    if (encoding == kEncodeBinary) {
      for (int byte = thread; byte < (n + 7) / 8; byte += threads) {
        unsigned bits = 0;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const int col = byte * 8 + k;
          if (col < n && result(col) >= 0.0f) bits |= 1u << k;
        }
        out[byte] = static_cast<unsigned char>(bits);
      }
    } else {
      float row_scale = 1.0f;
      if (encoding == kEncodeInt8) {
        float largest = 0.0f;
        for (int col = thread; col < n; col += threads) {
          largest = max_magnitude(largest, result(col));
        }
        row_scale = int8_scale(block_reduce<C, true>(largest, scratch));
        if (thread == 0) scales[row] = row_scale;
      }
      const float inverse = __frcp_rn(row_scale);
      const bool vector =
          (reinterpret_cast<unsigned long long>(out) & (encoding == kEncodeInt8 ? 3 : 7)) == 0;
      for (int col = 4 * thread; col < n; col += 4 * threads) {
        float y[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) y[k] = col + k < n ? result(col + k) : 0.0f;
        store_codes<4>(y, encoding, row_scale, inverse, out, col, n, vector);
      }
    }
    __syncthreads();  // the cache is rewritten by the block's next row
  }
}

// ---------------------------------------------------------------------------------------------
// Register path: aligned rows of 513 to 4096 elements, a block a row, the row in registers (PACKS
// 16-byte packs a thread: pack p of thread t holds columns 4 (p * threads + t) ...), one pass over
// the row in device memory, a block for each row (one pass over the batch). The statistics are the
// warp path's, over the block. Against the warp kernels at 768 and the block kernel at 4096 on an
// H200: 14-25 points of a device copy faster; capped at 48 registers (five blocks of 256 an SM):
// 64 ran 6-9 points slower, and 40 spilled in the int8 encoding's loop (10-12 points slower for
// float16 and binary); prefetching a block's next row into registers on a resident grid ran
// slower than all of them. layer_norm, which holds more, gets 64 (at 48 it spilled: 12-15 points
// slower). The float64 fallback's statistics are out of line (register_row_exact_*), which took
// rms_norm's spills away (float16 and binary 3-8 points faster). Each op's register kernel is built
// once per encoding, the encoding a constant: a kernel then carries only its own encoding's code
// (float16 at 768-4096 7-10 points faster, int8 4-9, layer_norm float16 9-10; bytes unchanged).

// The float64 statistics of a register-path row that the float ones cannot hold (rare), out of
// line so that the common path keeps its registers: the row is re-read from device memory, each
// thread taking the elements it holds in registers in the same order, so the sums are the same.
// Every thread of the block calls them.
template <int PACKS, typename Visit>
__device__ __forceinline__ void for_each_held_element(const float* row, int n, Visit&& visit) {
  constexpr int PACK = 4;
  const int thread = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    const int col = (p * threads + thread) * PACK;
#pragma unroll
    for (int k = 0; k < PACK; ++k) {
      if (col < n) visit(static_cast<double>(row[col + k]));
    }
  }
}

// The scaling ops' factor.
template <int OP, int PACKS>
__device__ __noinline__ double register_row_exact_scale(const float* row, int n, double eps,
                                                        double* scratch_double) {
  double statistic = 0;
  for_each_held_element<PACKS>(row, n, [&](double value) {
    statistic = norm_combine<OP>(statistic, norm_term<OP>(value));
  });
  statistic = OP == kLinfNormalize ? block_reduce<double, true>(statistic, scratch_double)
                                   : block_reduce<double, false>(statistic, scratch_double);
  return lp_norm(OP) ? 1.0 / max_nan(norm_of<OP>(statistic), eps) : 1.0 / sqrt(statistic / n + eps);
}

// layer_norm's (offset, scale): y = ((double) x - offset) * scale.
template <int PACKS>
__device__ __noinline__ double2 register_row_exact_layer_norm(const float* row, int n, float shift,
                                                              double eps, double* scratch_double) {
  double sum = 0;
  for_each_held_element<PACKS>(row, n, [&](double value) { sum += value - shift; });
  const double offset =
      static_cast<double>(shift) + block_reduce<double, false>(sum, scratch_double) / n;
  double statistic = 0;
  for_each_held_element<PACKS>(row, n, [&](double value) {
    const double centered = value - offset;
    statistic += centered * centered;
  });
  statistic = block_reduce<double, false>(statistic, scratch_double);
  return make_double2(offset, 1.0 / sqrt(statistic / n + eps));
}

template <int OP, int PACKS>
__device__ __forceinline__ void encode_register_rows(
    const float* __restrict__ input, unsigned char* __restrict__ values, float* __restrict__ scales,
    const long long* __restrict__ offsets, const long long* __restrict__ value_starts,
    long long rows, int width, double eps, const float* __restrict__ weight,
    const float* __restrict__ bias, int encoding) {
  constexpr int PACK = 4;
  constexpr int kCols = PACK * PACKS;
  __shared__ float scratch[32];
  __shared__ double scratch_double[32];
  __shared__ float first;
  const int thread = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  const float epsilon = static_cast<float>(eps);
  auto col_of = [&](int p) { return (p * threads + thread) * PACK; };

  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long start = row_start<float>(offsets, row, width);
    const int n = row_width(offsets, row, width);
    float x[kCols];
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
      if (col_of(p) < n) {
        const Pack<float, PACK> pack =
            *reinterpret_cast<const Pack<float, PACK>*>(input + start + col_of(p));
#pragma unroll
        for (int k = 0; k < PACK; ++k) x[p * PACK + k] = pack.values[k];
      } else {
#pragma unroll
        for (int k = 0; k < PACK; ++k) x[p * PACK + k] = 0.0f;
      }
    }
    // y = x * scale (or the op's float expression), or ((double) x - offset) * scale_double for
    // rows the float statistics cannot hold.
    bool exact = false;
    double offset = 0, scale_double = 0;
    if constexpr (OP == kRmsNorm || lp_norm(OP)) {
      float squares = 0;
#pragma unroll
      for (int i = 0; i < kCols; ++i) squares = norm_combine<OP>(squares, norm_term<OP>(x[i]));
      squares = OP == kLinfNormalize ? block_reduce<float, true>(squares, scratch)
                                     : block_reduce<float, false>(squares, scratch);
      if (n > 0 && !safe_squares(squares, eps, OP == kRmsNorm ? 0x1p-60 : 0x1p-40)) {
        exact = true;
        scale_double = register_row_exact_scale<OP, PACKS>(input + start, n, eps, scratch_double);
      }
      const float scale = OP == kRmsNorm ? 1.0f / sqrt_c(squares / n + epsilon)
                                         : 1.0f / max_nan(norm_of<OP>(squares), epsilon);
#pragma unroll
      for (int i = 0; i < kCols; ++i) x[i] *= scale;
    } else if constexpr (OP == kLayerNorm) {
      if (thread == 0) first = x[0];
      __syncthreads();
      const float shift = first;
      float sum = 0;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          if (col_of(p) < n) sum += x[p * PACK + k] - shift;
        }
      }
      const float mean = block_reduce<float, false>(sum, scratch) / n;
      float squares = 0;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          const float centered = (x[p * PACK + k] - shift) - mean;
          if (col_of(p) < n) squares += centered * centered;
        }
      }
      squares = block_reduce<float, false>(squares, scratch);
      if (n > 0 && (!(mean == mean && mean <= 0x1p100f && mean >= -0x1p100f) ||
                    !safe_squares(squares, eps, 0x1p-60))) {
        exact = true;
        const double2 exact_statistics =
            register_row_exact_layer_norm<PACKS>(input + start, n, shift, eps, scratch_double);
        offset = exact_statistics.x;
        scale_double = exact_statistics.y;
      }
      const float scale = 1.0f / sqrt_c(squares / n + epsilon);
      if (!exact) {
#pragma unroll
        for (int i = 0; i < kCols; ++i) x[i] = ((x[i] - shift) - mean) * scale;
      }
    } else {
      float maximum = -INFINITY;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
#pragma unroll
        for (int k = 0; k < PACK; ++k) {
          if (col_of(p) < n) maximum = max_elements(maximum, x[p * PACK + k]);
        }
      }
      maximum = block_reduce<float, true>(maximum, scratch);
      float sum = 0;
      if constexpr (OP == kSoftmax) {
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            x[p * PACK + k] = exp_c(x[p * PACK + k] - maximum);
            if (col_of(p) < n) sum += x[p * PACK + k];
          }
        }
        const float inverse = 1.0f / block_reduce<float, false>(sum, scratch);
#pragma unroll
        for (int i = 0; i < kCols; ++i) x[i] *= inverse;
      } else {
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
#pragma unroll
          for (int k = 0; k < PACK; ++k) {
            if (col_of(p) < n) sum += exp_c(x[p * PACK + k] - maximum);
          }
        }
        const float log_sum = log_c(block_reduce<float, false>(sum, scratch));
#pragma unroll
        for (int i = 0; i < kCols; ++i) x[i] = (x[i] - maximum) - log_sum;
      }
    }
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
#pragma unroll
      for (int k = 0; k < PACK; ++k) {
        const int col = col_of(p) + k;
        float value = x[p * PACK + k];
        if (col < n) {
          if (exact) {
            // x was scaled in float before the test: re-read the row's input for its bits
            value = static_cast<float>(
                (static_cast<double>(input[start + col]) - offset) * scale_double);
          }
          if (weight != nullptr) value *= weight[col];
          if (bias != nullptr) value += bias[col];
        } else {
          value = 0.0f;
        }
        x[p * PACK + k] = value;
      }
    }
    const long long value_start = value_starts == nullptr ? 0 : value_starts[row];
    if (encoding == kEncodeBinary) {
      unsigned char* out =
          values + (value_starts == nullptr ? row * static_cast<long long>((width + 7) / 8)
                                            : value_start);
      // pack j's nibble goes to byte j / 2: neighbouring threads hold neighbouring packs
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        unsigned nibble = 0;
#pragma unroll
        for (int k = 0; k < PACK; ++k) nibble |= (x[p * PACK + k] >= 0.0f ? 1u : 0u) << k;
        if (col_of(p) >= n) nibble = 0;
        const unsigned other = __shfl_xor_sync(0xffffffffu, nibble, 1);
        if ((thread & 1) == 0 && col_of(p) < n) {
          out[col_of(p) >> 3] = static_cast<unsigned char>(nibble | other << 4);
        }
      }
    } else {
      float scale = 1.0f;
      if (encoding == kEncodeInt8) {
        float largest = 0.0f;
#pragma unroll
        for (int i = 0; i < kCols; ++i) largest = max_magnitude(largest, x[i]);
        scale = int8_scale(block_reduce<float, true>(largest, scratch));
        if (thread == 0) scales[row] = scale;
      }
      const float inverse = __frcp_rn(scale);
      const int element_bytes = encoding == kEncodeInt8 ? 1 : 2;
      unsigned char* out =
          values + (value_starts == nullptr ? row * static_cast<long long>(width) * element_bytes
                                            : value_start);
      const bool vector =
          (reinterpret_cast<unsigned long long>(out) & (encoding == kEncodeInt8 ? 3 : 7)) == 0;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        if (col_of(p) < n) {
          float y[PACK];
#pragma unroll
          for (int k = 0; k < PACK; ++k) y[k] = x[p * PACK + k];
          store_codes<PACK>(y, encoding, scale, inverse, out, col_of(p), n, vector);
        }
      }
    }
  }
}

}  // namespace
}  // namespace embednorm

// Tile path: contiguous rows whose starts are not 16-byte aligned (widths that are not a multiple
// of the pack, such as 769, or 2-byte 300), staged through shared memory. A block takes `group`
// consecutive rows at a time as one run of memory, which is aligned but at its two ends: it copies
// the run in with 16-byte asynchronous copies (cp.async) and a scalar head and tail, normalizes
// each row in shared memory (a warp per row, the row in registers: VPL values a lane, lane l
// holding columns l, l + 32, ...), and copies the run out with 16-byte stores and a scalar head
// and tail. Device memory sees only aligned 16-byte accesses, wherever the rows start; on the
// warp-row path an unaligned row costs a scalar head and tail of its own and a second access to
// every pack it shares with its neighbour. Input and output share their alignment modulo 16 (the
// host checks). Ragged rows keep the warp-row path. Part of embednorm_kernels.cu.
#pragma once

#include "common.cuh"

namespace embednorm {
namespace {

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
  if constexpr (OP == kRmsNorm || lp_norm(OP) || OP == kLayerNorm) {
    C squares[ROWS];  // Σx² of the (centred) rows, or l1's and linf's statistic (norm_term)
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
        for (int j = 0; j < VPL; ++j) {
          squares[r] = norm_combine<OP>(squares[r], norm_term<OP>(x[r][j]));  // 0 past the row
        }
      }
    }
    warp_reduce_rows<OP == kLinfNormalize>(squares);
    const C epsilon = static_cast<C>(eps);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const bool sum_ok = OP != kLayerNorm ||
                          (mean[r] == mean[r] && mean[r] <= C(0x1p100f) && mean[r] >= C(-0x1p100f));
      needs_double[r] =
          !sum_ok || !safe_squares(squares[r], eps, lp_norm(OP) ? 0x1p-40 : 0x1p-60);
      scale[r] = lp_norm(OP) ? C(1) / max_nan(norm_of<OP>(squares[r]), epsilon)
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
      if constexpr (OP == kRmsNorm || lp_norm(OP)) {
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
// registers) overlap their phases with its. Two buffers a block on a resident grid, each block
// loading its next run while it normalizes the current one, measured 15-16 points slower than one
// pass.
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
  // ran 5-7 points slower.
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

}  // namespace
}  // namespace embednorm

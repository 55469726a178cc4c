// embednorm's CUDA kernels: the row-wise normalizations (docs/SEMANTICS.md, "Ops") over a
// batch of rows, one fatbin (build-fatbin.sh). This file instantiates the kernels and exports the
// planner's tables; the headers hold one path each, and are parts of this one translation unit:
//   tuning.cuh    which kernel runs a batch and how it is launched, declared once (exported below)
//   common.cuh    types, loads and stores, reductions, the float64 fallback's statistics
//   warp.cuh      warp path         warp_row.cuh  warp-row path     tile.cuh  tile path
//   cluster.cuh   cluster path      block.cuh     block path
//
// Every kernel has one signature (so that the Java launcher is one piece of code):
//   (const T* input, T* output, const long long* offsets, long long rows, int width,
//    int group, double eps, const C* weight, const C* bias)
// and carries one op, named in the kernel's name (rms_norm, layer_norm, softmax, log_softmax,
// l2_normalize, l1_normalize, linf_normalize): each kernel holds only its op's code, which keeps
// registers, and so occupancy, up.
// Rows are contiguous (offsets == nullptr: row r holds elements [r*width, (r+1)*width)) or ragged
// (row r holds [offsets[r], offsets[r+1]); `width` is then the widest row). C is the compute type:
// float for float32, float16 and bfloat16 (loaded narrow, computed in float, stored narrow once);
// double for float64. weight and bias may be null.
//
// Paths, chosen on the host from the exported tables (docs/ARCHITECTURE.md, "CUDA engine"):
//   embednorm_warp_<op>_<type>_p<PACK>_c<PACKS>: a group of `group` lanes (1..32, a power of two)
//     per row, the row held in registers, PACKS packs of PACK elements per lane; several rows per
//     warp, and 1 to 4 rows per lane at once (more loads in flight), in lockstep for 16-byte packs
//     of 4- and 2-byte types (their reductions overlap).
//   embednorm_warprow_<op>_<type>_p<PACK>_c<PACKS>: unaligned rows, a warp per row in registers,
//     16-byte packs from the row's first 16-byte boundary and a scalar head and tail.
//   embednorm_tile_<op>_<type>_v<VALUES>_r<ROWS>: contiguous unaligned rows, runs of whole rows
//     staged through shared memory with aligned 16-byte copies, a warp per row there.
//   embednorm_cluster_<op>_<type>_k<BLOCKS>[_b128]: compute capability 9.0 and newer, a row in
//     registers over a cluster of 1, 2 or 4 blocks, 64 (or 128) bytes a thread.
//   embednorm_block_<op>_<type>_p<PACK>[_aligned]_cached: a block per row, the row cached in
//     shared memory; _uncached: re-reading device memory; _aligned: rows the host promises
//     16-byte aligned with widths a multiple of PACK (no scalar head and tail).
// PACK > 1 on the warp and cluster paths means 16-byte loads and stores: the host picks it only
// when every row starts 16-byte aligned and every row width is a multiple of PACK; otherwise PACK
// is 1. Only the kernels the planner can pick are built (LaunchPlanTest checks both ways).
//
// float rows whose float sums leave the safe range (overflow, or underflow that eps does not
// dominate) are recomputed in double, as the CPU engine does, so extreme magnitudes stay accurate
// (docs/SEMANTICS.md, "Accuracy").

#include "tuning.cuh"
#include "common.cuh"
#include "warp.cuh"
#include "warp_row.cuh"
#include "tile.cuh"
#include "cluster.cuh"
#include "block.cuh"

using namespace embednorm;

// ---------------------------------------------------------------------------------------------
// Entry points (extern "C": stable names for cuModuleGetFunction).

#define EMBEDNORM_SIGNATURE(T)                                                                  \
  (const T* input, T* output, const long long* offsets, long long rows, int width, int group,   \
   double eps, const Compute<T>::type* weight, const Compute<T>::type* bias)

// A variant the planner never picks for this op and type: not built.
#define EMBEDNORM_SKIP(...)

// Warp path: PACKS packs a lane of PACK elements, rows a lane and register cap from tuning.cuh.
#define EMBEDNORM_WARP(OP_NAME, OP, NAME, T, PACK, PACKS)                                       \
  extern "C" __global__ void                                                                    \
  __launch_bounds__(kWarpBlock, warp_min_blocks(OP, sizeof(T), PACK, PACKS,                     \
                                                std::is_same_v<T, __half>))                     \
      embednorm_warp_##OP_NAME##_##NAME##_p##PACK##_c##PACKS EMBEDNORM_SIGNATURE(T) {           \
    warp_kernel<OP, T, PACK, PACKS>(input, output, offsets, rows, width, group, eps, weight,    \
                                    bias);                                                      \
  }

// Warp-row path: up to 32 * MAXP packs a row. Up to 2 packs a lane (2 rows a warp) at most 64
// registers: uncapped, ptxas took 76-95 for 2-byte rows and the SM held 3 blocks instead of 4
// (10 points slower).
#define EMBEDNORM_WARP_ROW(OP_NAME, OP, NAME, T, PACK, MAXP, BOUNDS)                            \
  extern "C" __global__ void BOUNDS                                                             \
      embednorm_warprow_##OP_NAME##_##NAME##_p##PACK##_c##MAXP EMBEDNORM_SIGNATURE(T) {         \
    (void)group;                                                                                \
    warp_row<OP, T, PACK, MAXP>(input, output, offsets, rows, width, eps, weight, bias);        \
  }

// Tile path: `group` rows a run, VPL values a lane (rows of up to 32 * VPL elements), ROWS rows a
// warp at once. At most 64 registers, so that 4 blocks of 256 fit an SM.
#define EMBEDNORM_TILE(OP_NAME, OP, NAME, T, VPL, ROWS)                                         \
  extern "C" __global__ void __launch_bounds__(kWarpBlock, 4)                                   \
      embednorm_tile_##OP_NAME##_##NAME##_v##VPL##_r##ROWS EMBEDNORM_SIGNATURE(T) {             \
    (void)offsets;                                                                              \
    tile_rows<OP, T, VPL, ROWS>(input, output, rows, width, group, eps, weight, bias);          \
  }
#define EMBEDNORM_TILES(OP_NAME, OP, NAME, T)                                                   \
  EMBEDNORM_TILE(OP_NAME, OP, NAME, T, 10, 2)                                                   \
  EMBEDNORM_TILE(OP_NAME, OP, NAME, T, 12, 2)                                                   \
  EMBEDNORM_TILE(OP_NAME, OP, NAME, T, 16, 2)                                                   \
  EMBEDNORM_TILE(OP_NAME, OP, NAME, T, 20, 1)                                                   \
  EMBEDNORM_TILE(OP_NAME, OP, NAME, T, 24, 1)                                                   \
  EMBEDNORM_TILE(OP_NAME, OP, NAME, T, 28, 1)                                                   \
  EMBEDNORM_TILE(OP_NAME, OP, NAME, T, 32, 1)

// Cluster path: a row over CLUSTER blocks of up to 1024 threads, BYTES a thread. Built for
// compute capability 9.0 and newer only; the host plans them only there.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define EMBEDNORM_CLUSTER(OP_NAME, OP, NAME, T, PACK, CLUSTER, BYTES, SUFFIX)                   \
  extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(1024, 1)         \
      embednorm_cluster_##OP_NAME##_##NAME##_k##CLUSTER##SUFFIX EMBEDNORM_SIGNATURE(T) {        \
    (void)group;                                                                                \
    cluster_rows<OP, T, PACK, CLUSTER, BYTES>(input, output, offsets, rows, width, eps, weight, \
                                              bias);                                            \
  }
#else
#define EMBEDNORM_CLUSTER(OP_NAME, OP, NAME, T, PACK, CLUSTER, BYTES, SUFFIX)
#endif

// Block path: the row cached in shared memory or re-read (CACHED), with a scalar head and tail or
// for aligned batches without (ALIGNED).
#define EMBEDNORM_BLOCK(OP_NAME, OP, NAME, T, PACK, SUFFIX, CACHED, ALIGNED)                    \
  extern "C" __global__ void __launch_bounds__(1024)                                            \
      embednorm_block_##OP_NAME##_##NAME##_p##PACK##SUFFIX EMBEDNORM_SIGNATURE(T) {             \
    (void)group;                                                                                \
    block_rows<OP, T, PACK, CACHED, ALIGNED>(input, output, offsets, rows, width, eps, weight,  \
                                             bias);                                             \
  }
#define EMBEDNORM_BLOCKS(OP_NAME, OP, NAME, T, PACK, CACHED_BLOCK)                              \
  CACHED_BLOCK(OP_NAME, OP, NAME, T, PACK, _cached, true, false)                                \
  EMBEDNORM_BLOCK(OP_NAME, OP, NAME, T, PACK, _uncached, false, false)                          \
  CACHED_BLOCK(OP_NAME, OP, NAME, T, PACK, _aligned_cached, true, true)                         \
  EMBEDNORM_BLOCK(OP_NAME, OP, NAME, T, PACK, _aligned_uncached, false, true)

// Unaligned rows of up to 8 elements a lane (wider ones take the warp-row, tile or block path).
#define EMBEDNORM_SCALAR_WARP(OP_NAME, OP, NAME, T)                                             \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 1, 1)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 1, 2)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 1, 4)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 1, 8)

// float32: 16-byte warp kernels of 1, 2, 3, 4 and 8 packs a lane; warp-row kernels of 4 and 8
// packs (rows of up to 256 elements take the scalar warp kernels); clusters of 1 and 2 blocks of
// 64 bytes a thread, of 1 and 4 of 128.
#define EMBEDNORM_F32(OP_NAME, OP)                                                              \
  EMBEDNORM_SCALAR_WARP(OP_NAME, OP, f32, float)                                                \
  EMBEDNORM_WARP(OP_NAME, OP, f32, float, 4, 1)                                                 \
  EMBEDNORM_WARP(OP_NAME, OP, f32, float, 4, 2)                                                 \
  EMBEDNORM_WARP(OP_NAME, OP, f32, float, 4, 3)                                                 \
  EMBEDNORM_WARP(OP_NAME, OP, f32, float, 4, 4)                                                 \
  EMBEDNORM_WARP(OP_NAME, OP, f32, float, 4, 8)                                                 \
  EMBEDNORM_WARP_ROW(OP_NAME, OP, f32, float, 4, 4, __launch_bounds__(kWarpBlock))              \
  EMBEDNORM_WARP_ROW(OP_NAME, OP, f32, float, 4, 8, __launch_bounds__(kWarpBlock))              \
  EMBEDNORM_TILES(OP_NAME, OP, f32, float)                                                      \
  EMBEDNORM_CLUSTER(OP_NAME, OP, f32, float, 4, 1, 64, )                                        \
  EMBEDNORM_CLUSTER(OP_NAME, OP, f32, float, 4, 2, 64, )                                        \
  EMBEDNORM_CLUSTER(OP_NAME, OP, f32, float, 4, 1, 128, _b128)                                  \
  EMBEDNORM_CLUSTER(OP_NAME, OP, f32, float, 4, 4, 128, _b128)                                  \
  EMBEDNORM_BLOCKS(OP_NAME, OP, f32, float, 4, EMBEDNORM_BLOCK)

// float16 and bfloat16: 16-byte warp kernels of 1, 2, 3 (C3), 4, 6 and 8 packs a lane; warp-row
// kernels of 2, 4 and 8 packs; clusters of 1 and 2 blocks of 64 bytes a thread, of 1 of 128; the
// block path cached (CACHED_BLOCK) or not.
#define EMBEDNORM_HALF(OP_NAME, OP, NAME, T, C3, CACHED_BLOCK)                                  \
  EMBEDNORM_SCALAR_WARP(OP_NAME, OP, NAME, T)                                                   \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 1)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 2)                                                    \
  C3(OP_NAME, OP, NAME, T, 8, 3)                                                                \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 4)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 6)                                                    \
  EMBEDNORM_WARP(OP_NAME, OP, NAME, T, 8, 8)                                                    \
  EMBEDNORM_WARP_ROW(OP_NAME, OP, NAME, T, 8, 2, __launch_bounds__(kWarpBlock, 4))              \
  EMBEDNORM_WARP_ROW(OP_NAME, OP, NAME, T, 8, 4, __launch_bounds__(kWarpBlock))                 \
  EMBEDNORM_WARP_ROW(OP_NAME, OP, NAME, T, 8, 8, __launch_bounds__(kWarpBlock))                 \
  EMBEDNORM_TILES(OP_NAME, OP, NAME, T)                                                         \
  EMBEDNORM_CLUSTER(OP_NAME, OP, NAME, T, 8, 1, 64, )                                           \
  EMBEDNORM_CLUSTER(OP_NAME, OP, NAME, T, 8, 2, 64, )                                           \
  EMBEDNORM_CLUSTER(OP_NAME, OP, NAME, T, 8, 1, 128, _b128)                                     \
  EMBEDNORM_BLOCKS(OP_NAME, OP, NAME, T, 8, CACHED_BLOCK)

// float64: warp kernels of up to 8 packs a lane, the block path beyond.
#define EMBEDNORM_F64(OP_NAME, OP)                                                              \
  EMBEDNORM_SCALAR_WARP(OP_NAME, OP, f64, double)                                               \
  EMBEDNORM_WARP(OP_NAME, OP, f64, double, 2, 1)                                                \
  EMBEDNORM_WARP(OP_NAME, OP, f64, double, 2, 2)                                                \
  EMBEDNORM_WARP(OP_NAME, OP, f64, double, 2, 4)                                                \
  EMBEDNORM_WARP(OP_NAME, OP, f64, double, 2, 8)                                                \
  EMBEDNORM_BLOCKS(OP_NAME, OP, f64, double, 2, EMBEDNORM_BLOCK)

#define EMBEDNORM_OP(OP_NAME, OP, BF16_C3, HALF_CACHED_BLOCK)                                   \
  EMBEDNORM_F32(OP_NAME, OP)                                                                    \
  EMBEDNORM_HALF(OP_NAME, OP, f16, __half, EMBEDNORM_WARP, HALF_CACHED_BLOCK)                   \
  EMBEDNORM_HALF(OP_NAME, OP, bf16, __nv_bfloat16, BF16_C3, HALF_CACHED_BLOCK)                  \
  EMBEDNORM_F64(OP_NAME, OP)

// bfloat16 rms_norm keeps four packs a lane where the others take three (warp_lane_packs), and
// 2-byte layer_norm always re-reads on the block path (block_uncached_from).
EMBEDNORM_OP(rms_norm, kRmsNorm, EMBEDNORM_SKIP, EMBEDNORM_BLOCK)
EMBEDNORM_OP(layer_norm, kLayerNorm, EMBEDNORM_WARP, EMBEDNORM_SKIP)
EMBEDNORM_OP(softmax, kSoftmax, EMBEDNORM_WARP, EMBEDNORM_BLOCK)
EMBEDNORM_OP(log_softmax, kLogSoftmax, EMBEDNORM_WARP, EMBEDNORM_BLOCK)
EMBEDNORM_OP(l2_normalize, kL2Normalize, EMBEDNORM_WARP, EMBEDNORM_BLOCK)
EMBEDNORM_OP(l1_normalize, kL1Normalize, EMBEDNORM_WARP, EMBEDNORM_BLOCK)
EMBEDNORM_OP(linf_normalize, kLinfNormalize, EMBEDNORM_WARP, EMBEDNORM_BLOCK)

// ---------------------------------------------------------------------------------------------
// The planner's tables (tuning.cuh), read by the Java planner with cuModuleGetGlobal.

#define EMBEDNORM_EXPORT(NAME, BUILDER)                                                         \
  extern "C" __device__ const decltype(embednorm::BUILDER()) NAME = embednorm::BUILDER();
EMBEDNORM_TUNING_TABLES(EMBEDNORM_EXPORT)
#undef EMBEDNORM_EXPORT

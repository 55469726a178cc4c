// The tuning of embednorm's kernels, declared once: which kernel runs a batch for each op, element
// type, row width, alignment and kind of device, and how it is launched. The kernels are
// instantiated with these numbers (rows a lane, register caps, raw rows), and embednorm_kernels.cu
// exports the planner's choices as tables (extern "C" __device__, EMBEDNORM_TUNING_TABLES below)
// that the Java planner (LaunchPlan, KernelTuning) reads from the loaded module: no number here is
// copied into Java. print_tuning.cu prints the same tables for the planner's tests.
//
// Why each choice was made is beside it: what was compared, and by how many points of a
// device-to-device copy of the same bytes the choice was faster (KernelBenchmark; how it measures:
// docs/PERFORMANCE.md, "Method"; the kernels' current figures: "GPU kernels"). Dispatch as a
// whole: docs/ARCHITECTURE.md, "CUDA engine".
//
// Host and device code both include this header (compiled by nvcc): everything is constexpr.

#pragma once

#include <climits>

namespace embednorm {

// ---------------------------------------------------------------------------------------------
// Indexes of the tables, in the order of io.embednorm.engine.Op and ElementType (KernelTuning).

constexpr int kRmsNorm = 0;
constexpr int kLayerNorm = 1;
constexpr int kSoftmax = 2;
constexpr int kLogSoftmax = 3;
constexpr int kL2Normalize = 4;
constexpr int kL1Normalize = 5;
constexpr int kLinfNormalize = 6;
constexpr int kOps = 7;

// The p-norm normalizations, x / max(norm, eps): l2_normalize, and l1_normalize and linf_normalize,
// which run l2_normalize's code with Σ|x| or max |x| for Σx² and take its tuning (not timed apart:
// the same loads, registers and reductions, an abs for a multiply).
__host__ __device__ constexpr bool lp_norm(int op) {
  return op == kL2Normalize || op == kL1Normalize || op == kLinfNormalize;
}

constexpr int kF16 = 0;
constexpr int kBF16 = 1;
constexpr int kF32 = 2;
constexpr int kF64 = 3;
constexpr int kTypes = 4;

__host__ __device__ constexpr int type_bytes(int type) {
  return type == kF64 ? 8 : type == kF32 ? 4 : 2;
}

// Elements of one 16-byte pack.
__host__ __device__ constexpr int vector_width(int type) { return 16 / type_bytes(type); }

__host__ __device__ constexpr int ceil_div(int value, int divisor) {
  return (value + divisor - 1) / divisor;
}

__host__ __device__ constexpr int next_pow2(int value) {
  int power = 1;
  while (power < value) power <<= 1;
  return power;
}

__host__ __device__ constexpr int log2_of(int power) {
  int log = 0;
  while ((1 << log) < power) ++log;
  return log;
}

// Threads a block of the warp, warp-row and tile kernels: their launch bound.
constexpr int kWarpBlock = 256;

// Memory classes. Where timings on an H100 80GB HBM3 (3.35 TB/s) and an H200 (4.8 TB/s) chose
// differently, devices whose memory peaks at kFastMemoryGbps or more take the H200's choice.
constexpr int kSlowerMemory = 0;
constexpr int kFastMemory = 1;
constexpr int kMemoryClasses = 2;
constexpr int kFastMemoryGbps = 4000;

// ---------------------------------------------------------------------------------------------
// Warp path: a group of 1 to 32 lanes per row (a power of two), the row in registers, PACKS packs
// a lane of PACK elements (16 bytes' worth where every row is aligned and the width a multiple of
// the pack, else 1); several rows a warp, and 1 to 4 rows a lane at once.

// The most packs a lane holds: wider rows go to the cluster, warp-row, tile or block path.
constexpr int kMaxWarpPacks = 8;

// Which warp kernels run warp_rows_lockstep, whose rows go through each step together so that
// their reductions overlap: 16-byte packs of 4- and 2-byte types. The others (scalar packs,
// float64) keep warp_rows.
__host__ __device__ constexpr bool warp_lockstep(int bytes, int pack) {
  return bytes <= 4 && pack * bytes == 16;
}

// Whether a lockstep kernel keeps 2-byte rows raw in registers (two values a 32-bit word, widened
// in each pass, at half the registers): all but the softmaxes at one pack a lane, which hold their
// rows widened (softmax keeps exp(x - max) in place), and f16 layer_norm at one or two packs, whose
// three passes would convert each value three times; both measured faster widened.
__host__ __device__ constexpr bool warp_raw_rows(int op, int bytes, int packs, bool half) {
  return bytes == 2 && !(packs == 1 && (op == kSoftmax || op == kLogSoftmax)) &&
         !(half && op == kLayerNorm && packs <= 2);
}

// Rows a lane takes at once (all their loads in flight before the first reduction), per op, value
// size and pack, each timed against its neighbours (1 to 8 rows):
//   - lockstep kernels: 4 at one pack a lane (float32 layer_norm 3; 2-byte softmax 3), 2 at two,
//     2 for the norms and 1 for the softmaxes at three and four, 1 from six;
//   - the others: 4 for up to 4 values a lane (layer_norm 2), 2 for 8, 1 beyond; fewer where more
//     spilled: 2-byte scalar rows, 1 for rms_norm from 4 values and layer_norm at 8; float64, 1 or
//     2 from 4 values a lane.
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

// The warp kernels' register cap, as the blocks of 256 threads an SM must hold (4 is 64
// registers, 3 is 80, 2 is 128). Lockstep kernels: 4 at one pack a lane; 3 for 2-byte layer_norm
// at one to three packs (f16 at two, widened: 2) and for float32 norms at two, and for float32
// rms_norm and l2_normalize at eight; else 2 (2-byte rows at six and eight packs take 80-128
// registers without a spill). The others: 4 up to 8 values a lane, 2 beyond; 3 where 64 registers
// spilled (float32 norms at 8 values; float64 at 8 values of the softmaxes, or 4 of layer_norm).
__host__ __device__ constexpr int warp_min_blocks(int op, int bytes, int pack, int packs,
                                                  bool half) {
  const int cols = pack * packs;
  const bool norm = op == kRmsNorm || op == kLayerNorm || lp_norm(op);
  if (warp_lockstep(bytes, pack)) {
    if (half && op == kLayerNorm && packs == 2) return 2;  // widened rows, 2 a lane
    if (bytes == 4) {
      if (packs == 1) return 4;
      if (packs == 2) return norm ? 3 : 4;
      if (packs == 3 || packs == 4) return 2;
      return op == kRmsNorm || lp_norm(op) ? 3 : 2;
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

// Packs a lane for rows of `packs_per_row` packs of `pack` elements.
//   - Rows of at most 32 packs: 1 (a lane a pack), but 2 (half the lanes) for layer_norm from 8
//     packs and log_softmax from 64 values on the lockstep kernels: each lane's work per row (the
//     shuffle trees, a divide and a square root, the fallback test) is then spread over twice the
//     values (layer_norm gained 6-8 points, log_softmax 2-10 from 64 wide; the others nothing).
//   - Wider rows: the next power of two of the packs a lane needs, but 3 on the lockstep kernels
//     (widths 2-byte 513-768, float32 257-384), where four would leave a quarter or more of the
//     lanes' packs empty (up to 13 points faster, but bfloat16 rms_norm lost 4, so it keeps four);
//     and 6 for 2-byte rows of 129-192 packs (widths 1032-1536: 10-20 points faster than eight).
__host__ __device__ constexpr int warp_lane_packs(int op, int type, int pack, int packs_per_row) {
  const bool lockstep = warp_lockstep(type_bytes(type), pack);
  if (packs_per_row <= 32) {
    const bool spread =
        (op == kLayerNorm && packs_per_row >= 8) || (op == kLogSoftmax && packs_per_row * pack >= 64);
    return lockstep && spread ? 2 : 1;
  }
  const int needed = ceil_div(packs_per_row, 32);
  if (needed == 3 && lockstep && !(op == kRmsNorm && type == kBF16)) return 3;
  if ((needed == 5 || needed == 6) && lockstep && type_bytes(type) == 2) return 6;
  return next_pow2(needed);
}

// Whether a warp-path launch takes one pass over the batch (a block for each 256 threads' share of
// rows) rather than only the blocks the device holds at once, each looping over rows: per kernel,
// from timings of both grids. Only the lockstep kernels were timed both ways; the others stay
// resident. "Full" rows fill every lane's packs.
//   - Fast memory, float32: one pass, but layer_norm at one pack a lane (3 rows resident were as
//     fast as 4 on one pass, which spilled), every op at three or four packs and layer_norm at
//     eight only for full rows (rows that leave packs empty ran 1-10 points slower on one pass).
//   - Fast memory, 2-byte types: one pass for rms_norm and l2_normalize (at three, four and eight
//     packs only for full rows) and log_softmax at one and two packs; resident for layer_norm and
//     softmax, for log_softmax from three packs, and for every op at six (4-8 points).
//   - Slower memory: one pass for every lockstep kernel (the resident grids trailed by 4-12
//     points), but at six packs a lane: one pass for full rows; for rows filling at least 3/4 of
//     the packs, for the norms and softmax; resident for emptier rows.
__host__ __device__ constexpr bool warp_one_pass(int memory, int op, int type, int pack, int packs,
                                                 int packs_per_row) {
  if (!warp_lockstep(type_bytes(type), pack)) return false;
  const bool full = packs_per_row == 32 * packs;
  const bool norm = op == kRmsNorm || lp_norm(op);
  if (memory == kSlowerMemory) {
    if (packs != 6 || full) return true;
    const bool mostly_full = 4 * packs_per_row >= 3 * 32 * packs;
    return mostly_full && (norm || op == kSoftmax);
  }
  if (type == kF32) {
    if (packs == 1) return op != kLayerNorm;
    if (packs == 2) return true;
    if (packs == 3 || packs == 4) return full;
    return op != kLayerNorm || full;
  }
  if (packs == 1 || packs == 2) return norm || op == kLogSoftmax;
  if (packs == 6) return false;
  return norm && full;
}

// A warp plan as the table holds it: packs a lane | rows a lane << 4 | log2(lanes a row) << 8 |
// one pass << 12; 0 where the row is too wide for the warp path.
__host__ __device__ constexpr int warp_plan(int memory, int op, int type, bool aligned,
                                            int packs_per_row) {
  const int pack = aligned ? vector_width(type) : 1;
  if (packs_per_row < 1 || packs_per_row > 32 * kMaxWarpPacks) return 0;
  const int packs = warp_lane_packs(op, type, pack, packs_per_row);
  const int group = packs_per_row <= 32 ? next_pow2(ceil_div(packs_per_row, packs)) : 32;
  const int rows = warp_rows_per_lane(op, type_bytes(type), pack, packs);
  const bool one_pass = warp_one_pass(memory, op, type, pack, packs, packs_per_row);
  return packs | rows << 4 | log2_of(group) << 8 | (one_pass ? 1 << 12 : 0);
}

// ---------------------------------------------------------------------------------------------
// Warp-row path: unaligned rows (or ragged batches that are not all aligned) too wide for the warp
// path's scalar packs, up to 256 16-byte packs: a warp per row, the row in registers, 16-byte packs
// from its first 16-byte boundary with a scalar head and tail. Against the block path, which sat
// mostly idle on such rows: float32 up to 14 points faster at width 769, 2-byte up to 16. float64
// keeps the block path (not timed).

constexpr int kMaxWarpRowPacks = 256;

// Whether the warp-row path holds a row's 16-byte packs raw (as loaded, widened at each use):
// 2-byte rows at four packs a lane, and at two for the norms (11-18 points faster than widened,
// where those spilled under the 64-register cap; the softmaxes moved within 3 points and stay
// widened).
__host__ __device__ constexpr bool warp_row_raw(int op, int bytes, int maxp) {
  return bytes == 2 && (maxp == 4 || (maxp == 2 && op != kSoftmax && op != kLogSoftmax));
}

// Rows a warp of the warp-row path takes at a time: 2 where a lane holds up to 2 packs a row, and
// for raw 2-byte rows at four packs (a point or two faster than one). Widened rows ran 4-30 points
// slower with 4 rows at two packs or 2 at four; raw rows with 3 or 4 rows at two packs spilled.
__host__ __device__ constexpr int warp_row_rows(int op, int bytes, int maxp) {
  return maxp <= 2 || warp_row_raw(op, bytes, maxp) ? 2 : 1;
}

// Packs a lane for an unaligned row of `vector_packs` 16-byte packs: the fewest (1, 2, 4 or 8)
// that hold it; 0 where another path takes the row (float64, rows the warp path's scalar packs
// hold, wider rows).
__host__ __device__ constexpr int warp_row_plan(int type, int vector_packs) {
  if (type == kF64 || vector_packs * vector_width(type) <= 32 * kMaxWarpPacks ||
      vector_packs > kMaxWarpRowPacks) {
    return 0;
  }
  return next_pow2(ceil_div(vector_packs, 32));
}

// ---------------------------------------------------------------------------------------------
// Tile path: contiguous rows of 257-1024 elements whose width is not a multiple of the pack (so
// their starts are not aligned), float32 and 2-byte types: runs of whole rows staged through
// shared memory with aligned 16-byte copies, a warp per row there, VALUES values a lane (rows of up
// to 32 * VALUES), ROWS rows a warp at once. Against the warp-row path: 6-13 points faster for
// float32 and the 2-byte norms, as fast or faster for every 2-byte op. On fast memory the 2-byte
// layer_norm, softmax and log_softmax are bound by the tile kernels' instructions from 385 wide
// and keep the warp-row path (5-10 points), which holds rows raw.

// A tile plan as the table holds it, for rows needing `values_needed` values a lane (a warp per
// row): values a lane | rows a warp << 8; 0 where the tile path does not apply. A row takes the
// tile kernel of the fewest values a lane that hold it (10, 12, 16, 20, 24, 28 or 32), so that
// lanes issue few instructions past its end (the 2-byte kernels are bound by them); rows of up to
// 16 a lane go two a warp at once.
__host__ __device__ constexpr int tile_plan(int memory, int op, int type, int values_needed) {
  constexpr int kValues[] = {10, 12, 16, 20, 24, 28, 32};
  const bool heavy = op == kLayerNorm || op == kSoftmax || op == kLogSoftmax;
  if (type == kF64 || values_needed <= 8 || values_needed > 32) return 0;  // widths 257-1024
  if (type_bytes(type) == 2 && heavy && values_needed > 12 && memory == kFastMemory) return 0;
  int values = 0;
  for (int i = 6; i >= 0; --i) {
    if (kValues[i] >= values_needed) values = kValues[i];
  }
  return values | (values <= 16 ? 2 : 1) << 8;
}

// Bytes of rows a block stages at a time at most (but at least 8 rows, a multiple of the block's
// 8 warps): 40 KiB of 2-byte rows, 24 KiB of float32 ones. 2-byte rows cost twice the instructions
// a byte, and their blocks need more rows each to keep loads in flight (runs of 37-49 KB were 5-7
// points faster than 24-29 KB); float32 runs of 8 rows (16-33 KB) 1-3 points faster than 16-24.
__host__ __device__ constexpr int tile_bytes(int type) {
  return type == kF64 ? 0 : type == kF32 ? 24 << 10 : 40 << 10;
}

// ---------------------------------------------------------------------------------------------
// Cluster path (compute capability 9.0 and newer): aligned float32 and 2-byte rows wider than the
// warp path holds, in registers over one block or a cluster of blocks that exchange partial sums
// through distributed shared memory. Wider rows take the block path.

constexpr int kClusterMinComputeCapability = 90;

// Bytes of a row a thread holds on the kernels without a _b suffix: four 16-byte packs.
constexpr int kClusterBytes = 64;

// Threads of a cluster-path block for rows that need more than one: 1024-thread blocks (used only
// past two blocks of 512) hold an SM alone.
constexpr int kClusterBlock = 512;

// The most blocks a row takes: clusters of 4 and 8 blocks measured slower than 2 larger ones.
constexpr int kMaxPlannedCluster = 2;

struct ClusterPlan {
  int block;     // threads a block
  int blocks;    // blocks a row (a cluster); 0 where the cluster path does not apply
  int bytes;     // bytes of the row a thread holds: kClusterBytes, or 128 (the _b128 kernels)
  int resident;  // 1: a persistent grid (as many clusters as the device holds, each looping)
};

// The cluster launch for aligned rows that need `threads` threads of kClusterBytes.
//   - Up to 512 threads of 64 bytes: one block a row, the fewest threads (a power of two) that
//     hold it, a block a row (5-10 points faster than a persistent grid). Rows under 128 threads
//     keep the block path, whose persistent blocks amortize per-row work better there.
//   - Beyond, two blocks of 512, then of 1024, on a persistent grid (a cluster a row measured
//     10-30 points slower there).
//   - On slower memory, rows beyond 512 threads of 64 bytes take 128 bytes a thread, a cluster a
//     row (1-3 points faster than a persistent grid there): float32 8193-16384 and 2-byte
//     16385-32768 wide in one block of 512, float32 16385-32768 in four blocks of 256; 3-6 points
//     faster than 64 bytes. Four blocks of 256 beat two of 512 by half a point at float32 32768,
//     but lost at 16384, which keeps one block of 512. 2-byte rows that would need two blocks
//     keep 64 bytes (not timed), and so does fast memory.
__host__ __device__ constexpr ClusterPlan cluster_plan(int memory, int type, int threads) {
  const ClusterPlan none{0, 0, 0, 0};
  if (type == kF64 || threads < 128) return none;
  if (threads > kClusterBlock) {
    const int wide_blocks = ceil_div(ceil_div(threads, 2), kClusterBlock);
    const bool wide = memory == kSlowerMemory && (type == kF32 || wide_blocks == 1);
    if (wide_blocks <= kMaxPlannedCluster && wide) {
      const int block = type == kF32 && wide_blocks == 2 ? kClusterBlock / 2 : kClusterBlock;
      return ClusterPlan{block, wide_blocks * kClusterBlock / block, 2 * kClusterBytes, 0};
    }
  }
  int block = threads <= 2 * kClusterBlock ? kClusterBlock : 2 * kClusterBlock;
  const int blocks = threads <= kClusterBlock ? 1 : next_pow2(ceil_div(threads, block));
  if (blocks > kMaxPlannedCluster) return none;
  block = block < next_pow2(threads) ? block : next_pow2(threads);
  return ClusterPlan{block, blocks, kClusterBytes, blocks > 1 || block > kClusterBlock ? 1 : 0};
}

// ---------------------------------------------------------------------------------------------
// Block path: a block per row, the row cached in shared memory (as floats, or doubles) or re-read
// through L2; everything else (float64 rows too wide for the warp path among them).

// Threads a block for rows of `vector_packs` 16-byte packs: about 8 packs a thread, at least 128
// (64 for rows under 256 packs), at most 1024 (the launch bound).
__host__ __device__ constexpr int block_threads(int vector_packs) {
  const int threads = next_pow2(ceil_div(vector_packs, 8));
  const int least = vector_packs < 256 ? 64 : 128;
  return threads > 1024 ? 1024 : threads < least ? least : threads;
}

// The width from which the block path re-reads rows rather than caching them: 2-byte rows cache as
// floats, twice their size, and from 16384 wide, and always for layer_norm (whose passes read the
// cache three times), re-reading through L2 measured faster.
__host__ __device__ constexpr int block_uncached_from(int op, int type) {
  if (type_bytes(type) != 2) return INT_MAX;
  return op == kLayerNorm ? 0 : 16384;
}

// ---------------------------------------------------------------------------------------------
// The exported tables. Every one is an array of int; KernelTuning.java names the layout of each.

template <int N>
struct Table {
  int values[N];
};

// Runs of a function of a row's size, as segments {last size, fields...}: a row takes the first
// segment whose last size is at least its own; the last segment ends at INT_MAX; unused segments
// are zero.
constexpr int kSegments = 12;

// Version of the tables' layout: KernelTuning refuses tables of another.
constexpr int kTuningFormat = 1;

constexpr int kScalarFormat = 0;
constexpr int kScalarWarpBlock = 1;
constexpr int kScalarFastMemoryGbps = 2;
constexpr int kScalarClusterMinComputeCapability = 3;
constexpr int kScalarClusterBytes = 4;
constexpr int kScalars = 5;

constexpr Table<kScalars> scalars() {
  Table<kScalars> table{};
  table.values[kScalarFormat] = kTuningFormat;
  table.values[kScalarWarpBlock] = kWarpBlock;
  table.values[kScalarFastMemoryGbps] = kFastMemoryGbps;
  table.values[kScalarClusterMinComputeCapability] = kClusterMinComputeCapability;
  table.values[kScalarClusterBytes] = kClusterBytes;
  return table;
}

// [memory class][op][type][aligned][packs of the widest row, 0 to 256]: warp_plan.
constexpr int kWarpColumns = 32 * kMaxWarpPacks + 1;
constexpr Table<kMemoryClasses * kOps * kTypes * 2 * kWarpColumns> warp_plans() {
  Table<kMemoryClasses * kOps * kTypes * 2 * kWarpColumns> table{};
  int at = 0;
  for (int memory = 0; memory < kMemoryClasses; ++memory) {
    for (int op = 0; op < kOps; ++op) {
      for (int type = 0; type < kTypes; ++type) {
        for (int aligned = 0; aligned < 2; ++aligned) {
          for (int packs = 0; packs < kWarpColumns; ++packs) {
            table.values[at++] = warp_plan(memory, op, type, aligned == 1, packs);
          }
        }
      }
    }
  }
  return table;
}

// [type][16-byte packs of the widest row, 0 to 256]: warp_row_plan.
constexpr int kWarpRowColumns = kMaxWarpRowPacks + 1;
constexpr Table<kTypes * kWarpRowColumns> warp_row_plans() {
  Table<kTypes * kWarpRowColumns> table{};
  for (int type = 0; type < kTypes; ++type) {
    for (int packs = 0; packs < kWarpRowColumns; ++packs) {
      table.values[type * kWarpRowColumns + packs] = packs == 0 ? 0 : warp_row_plan(type, packs);
    }
  }
  return table;
}

// [memory class][op][type][values a lane needed, 0 to 32]: tile_plan.
constexpr int kTileColumns = 33;
constexpr Table<kMemoryClasses * kOps * kTypes * kTileColumns> tile_plans() {
  Table<kMemoryClasses * kOps * kTypes * kTileColumns> table{};
  int at = 0;
  for (int memory = 0; memory < kMemoryClasses; ++memory) {
    for (int op = 0; op < kOps; ++op) {
      for (int type = 0; type < kTypes; ++type) {
        for (int values = 0; values < kTileColumns; ++values) {
          table.values[at++] = tile_plan(memory, op, type, values);
        }
      }
    }
  }
  return table;
}

// [type]: tile_bytes.
constexpr Table<kTypes> tile_bytes_table() {
  Table<kTypes> table{};
  for (int type = 0; type < kTypes; ++type) table.values[type] = tile_bytes(type);
  return table;
}

// [memory class][type][segment]{last threads, block, blocks, bytes, resident}: cluster_plan by the
// threads of kClusterBytes a row needs (blocks 0: the cluster path does not apply). Past 2048
// threads no row takes it.
constexpr int kClusterFields = 5;
constexpr int kClusterMaxThreads = 2048;
constexpr Table<kMemoryClasses * kTypes * kSegments * kClusterFields> cluster_plans() {
  Table<kMemoryClasses * kTypes * kSegments * kClusterFields> table{};
  for (int memory = 0; memory < kMemoryClasses; ++memory) {
    for (int type = 0; type < kTypes; ++type) {
      int* segments = table.values + (memory * kTypes + type) * kSegments * kClusterFields;
      int count = 0;
      for (int threads = 1; threads <= kClusterMaxThreads + 1; ++threads) {
        const ClusterPlan plan = cluster_plan(memory, type, threads);
        const int fields[kClusterFields] = {threads, plan.block, plan.blocks, plan.bytes,
                                            plan.resident};
        bool same = count > 0;
        for (int f = 1; f < kClusterFields && same; ++f) {
          same = segments[(count - 1) * kClusterFields + f] == fields[f];
        }
        if (same) {
          segments[(count - 1) * kClusterFields] = threads;
        } else {
          for (int f = 0; f < kClusterFields; ++f) segments[count * kClusterFields + f] = fields[f];
          ++count;
        }
      }
      segments[(count - 1) * kClusterFields] = INT_MAX;  // no row past the last takes it either
    }
  }
  return table;
}

// [segment]{last vector packs, threads}: block_threads.
constexpr int kBlockFields = 2;
constexpr Table<kSegments * kBlockFields> block_thread_plans() {
  Table<kSegments * kBlockFields> table{};
  int count = 0;
  for (int packs = 1; packs <= 8192 + 1; ++packs) {
    const int threads = block_threads(packs);
    if (count > 0 && table.values[(count - 1) * kBlockFields + 1] == threads) {
      table.values[(count - 1) * kBlockFields] = packs;
    } else {
      table.values[count * kBlockFields] = packs;
      table.values[count * kBlockFields + 1] = threads;
      ++count;
    }
  }
  table.values[(count - 1) * kBlockFields] = INT_MAX;  // 1024 threads beyond
  return table;
}

// [op][type]: block_uncached_from.
constexpr Table<kOps * kTypes> block_uncached_widths() {
  Table<kOps * kTypes> table{};
  for (int op = 0; op < kOps; ++op) {
    for (int type = 0; type < kTypes; ++type) {
      table.values[op * kTypes + type] = block_uncached_from(op, type);
    }
  }
  return table;
}

// The tables the kernels export, by name: X(name, builder).
#define EMBEDNORM_TUNING_TABLES(X)                            \
  X(embednorm_tuning_scalars, scalars)                        \
  X(embednorm_warp_plans, warp_plans)                         \
  X(embednorm_warp_row_plans, warp_row_plans)                 \
  X(embednorm_tile_plans, tile_plans)                         \
  X(embednorm_tile_bytes, tile_bytes_table)                   \
  X(embednorm_cluster_plans, cluster_plans)                   \
  X(embednorm_block_threads, block_thread_plans)              \
  X(embednorm_block_uncached_from, block_uncached_widths)

}  // namespace embednorm

package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Op;

/**
 * Which kernel runs a batch and how it is launched: chosen by row width (DESIGN.md §5). Narrow rows
 * go to the warp path (a group of 1 to 32 lanes per row, the row in registers, several rows per
 * warp); wider rows, on Hopper and newer, to a thread-block cluster per row with the row in
 * registers; elsewhere, and for unaligned rows, to a block per row with the row cached in shared
 * memory, and rows too wide for shared memory to the uncached block path. Unaligned rows of up to
 * 256 packs take a warp per row (the warp-row path), or where they are contiguous, runs of rows
 * staged through shared memory (the tile path).
 *
 * @param kernel the kernel's name in the module
 * @param path {@code warp}, {@code warp-row}, {@code tile}, {@code cluster}, {@code block-cached}
 *     or {@code block-uncached}
 * @param group lanes per row on the warp path, blocks per row on the cluster path, rows a block
 *     stages at a time on the tile path (1 elsewhere)
 * @param pack elements per load: 16 bytes' worth, or 1 for unaligned rows
 */
public record LaunchPlan(
    String kernel, String path, int grid, int block, int sharedBytes, int group, int pack) {

  /** Threads per block of the warp kernels (their launch bound). */
  static final int WARP_PATH_BLOCK = 256;

  /** Bytes of a row each thread of the cluster path holds: four 16-byte packs. */
  static final int CLUSTER_BYTES_PER_THREAD = 64;

  /** The most blocks of a row the cluster kernels take (the portable cluster size limit). */
  static final int MAX_CLUSTER = 8;

  /** The most blocks of a row the planner uses: 4 and 8 measured slower on an H200. */
  static final int MAX_PLANNED_CLUSTER = 2;

  /**
   * Threads per block on the cluster path for rows that need more than one block: 1024-thread
   * blocks (the launch bound, used only past 8 blocks of 512) hold an SM alone.
   */
  static final int CLUSTER_BLOCK = 512;

  static final int MAX_CLUSTER_BLOCK = 1024;

  /** Blocks of a cluster-path launch with a block per row; the kernel loops over more rows. */
  private static final long MAX_ROWS_PER_LAUNCH = 1L << 28;

  /**
   * The least peak memory bandwidth (bytes a second) at which the warp path mixes one-pass and
   * resident grids as timed on an H200 (see {@link #onePassWarpGrid}); below it, one pass.
   */
  static final long MIXED_WARP_GRID_BANDWIDTH = 4_000_000_000_000L;

  /** The most blocks of a one-pass warp-path launch; the kernels loop over further rows. */
  private static final long MAX_WARP_BLOCKS = 1L << 28;

  /**
   * {@code -Dembednorm.gpu.warpGrid=resident} or {@code =onePass} plans every warp-path launch on
   * that grid (see {@link #onePassWarpGrid}), and {@code =mixed} the H200's per-kernel mix on any
   * device, for comparisons; by default each kernel gets the one measured faster on memory of the
   * device's speed.
   */
  private static final String WARP_GRID =
      ComparisonSwitch.read("embednorm.gpu.warpGrid", "planned", "onePass", "resident", "mixed");

  /**
   * {@code -Dembednorm.gpu.clusterWide=false} keeps 64 bytes a thread on the cluster path
   * everywhere, {@code =true} takes 128 for every op and type on any device, for comparisons (see
   * {@link #wideClusterThreads}).
   */
  private static final String WIDE_CLUSTER_THREADS =
      ComparisonSwitch.read("embednorm.gpu.clusterWide", "planned", "false", "true");

  /**
   * {@code -Dembednorm.gpu.clusterGrid=perRow} launches a cluster per row on every cluster-path
   * plan, {@code =resident} a persistent grid wherever a row takes two blocks or a 1024-thread one
   * (see {@link #cluster}), for comparisons.
   */
  private static final String CLUSTER_GRID =
      ComparisonSwitch.read("embednorm.gpu.clusterGrid", "planned", "perRow", "resident");

  /**
   * {@code -Dembednorm.gpu.wideClusterBlock=512} or {@code =256} holds every row of 128 bytes a
   * thread in blocks of that many threads, for comparisons (see {@link #wideClusterBlock}).
   */
  private static final String WIDE_CLUSTER_BLOCK =
      ComparisonSwitch.read("embednorm.gpu.wideClusterBlock", "planned", "512", "256");

  /** {@code -Dembednorm.gpu.clusterPath=false} plans the block path instead, for comparisons. */
  private static final boolean CLUSTER_PATH_ENABLED =
      ComparisonSwitch.readBoolean("embednorm.gpu.clusterPath", true);

  /**
   * {@code -Dembednorm.gpu.warpRowTypes=twoByte} plans unaligned float32 rows on the block path, as
   * before the warp-row path held rows in registers, for comparisons; by default float32 and 2-byte
   * rows of up to {@link #MAX_WARP_ROW_PACKS} packs take the warp-row path.
   */
  private static final boolean WARP_ROW_FLOAT32 =
      !"twoByte".equals(ComparisonSwitch.read("embednorm.gpu.warpRowTypes", "all", "twoByte"));

  /** The suffix of each element type's kernels. */
  static String typeName(ElementType type) {
    switch (type) {
      case FLOAT16:
        return "f16";
      case BFLOAT16:
        return "bf16";
      case FLOAT64:
        return "f64";
      case FLOAT32:
      default:
        return "f32";
    }
  }

  /** Elements in one 16-byte load. */
  static int vectorWidth(ElementType type) {
    return 16 / type.byteWidth();
  }

  /** The widest row, in 16-byte packs, of the warp-row path (8 packs a lane). */
  static final int MAX_WARP_ROW_PACKS = 256;

  /**
   * The warp-row kernel for rows of up to {@code maxWidth} elements: the fewest packs a lane
   * ({@code _c1} to {@code _c8}) that hold the row's whole 16-byte packs.
   */
  static String warpRowKernel(Op op, ElementType type, int maxWidth) {
    int lanePacks = nextPowerOfTwo(Math.max(1, ceilDiv(ceilDiv(maxWidth, vectorWidth(type)), 32)));
    return "embednorm_warprow_"
        + kernelStem(op, type)
        + "_p"
        + vectorWidth(type)
        + "_c"
        + lanePacks;
  }

  /**
   * {@code -Dembednorm.gpu.sixPacks=false} plans eight packs a lane instead of six for 2-byte rows
   * of 129-192 packs, for comparisons (see {@link #lanePacks}).
   */
  private static final boolean SIX_PACKS =
      ComparisonSwitch.readBoolean("embednorm.gpu.sixPacks", true);

  /**
   * {@code -Dembednorm.gpu.twoByteWarpPacks=4} plans 2-byte rows of more than 128 packs (widths
   * 1032-2048) on the block path, as before the eight-packs kernels, for comparisons.
   */
  private static final int TWO_BYTE_WARP_PACKS =
      Integer.getInteger("embednorm.gpu.twoByteWarpPacks", 8);

  /**
   * The most packs a lane holds on the warp path: wider rows go to the cluster or block path. 8 for
   * every type; 2-byte rows of 16-byte packs took at most 4 before session 7, so their rows of
   * 129-256 packs (widths 1032-2048) ran on the block path.
   */
  static int maxWarpPacks(ElementType type, int pack) {
    return pack == 1 ? 8 : (type.byteWidth() == 2 ? TWO_BYTE_WARP_PACKS : 8);
  }

  /**
   * Whether a warp kernel runs the kernels' lockstep loop (warp_lockstep in the kernels): 16-byte
   * packs of 4- and 2-byte types.
   */
  static boolean lockstep(ElementType type, int pack) {
    return type.byteWidth() <= 4 && pack * type.byteWidth() == 16;
  }

  /**
   * Rows a lane holds at once on the warp path: warp_rows_per_lane in the kernels, which says why
   * (measured per op, value size and pack). Each warp kernel also carries its count as {@code
   * <kernel>_rows}; the GPU tests check that the two agree.
   */
  static int rowsPerLane(Op op, ElementType type, int pack, int packs) {
    int columns = pack * packs;
    boolean softmaxes = op == Op.SOFTMAX || op == Op.LOG_SOFTMAX;
    if (lockstep(type, pack)) {
      if (packs == 1) {
        if (type.byteWidth() == 4) {
          return op == Op.LAYER_NORM ? 3 : 4;
        }
        return op == Op.SOFTMAX ? 3 : 4;
      }
      if (packs == 2) {
        return 2;
      }
      if (packs == 3 || packs == 4) {
        return softmaxes ? 1 : 2;
      }
      return 1;
    }
    if (columns > 8) {
      return 1;
    }
    if (type.byteWidth() == 8) {
      if (columns == 8) {
        return softmaxes ? 2 : 1;
      }
      if (columns == 4) {
        return op == Op.SOFTMAX ? 1 : 2;
      }
      if (columns == 2 && op == Op.SOFTMAX) {
        return 2;
      }
    } else if (type.byteWidth() == 2 && pack == 1) {
      if (op == Op.RMS_NORM && columns >= 4) {
        return 1;
      }
      if (op == Op.LAYER_NORM && columns == 8) {
        return 1;
      }
    }
    if (columns == 8) {
      return 2;
    }
    return op == Op.LAYER_NORM ? 2 : 4;
  }

  /**
   * Packs a lane holds on the warp path for rows of more than 32 packs: the next power of two of
   * the packs a lane needs, but 3 on the lockstep kernels (widths 2-byte 513-768, float32 257-384,
   * where four packs a lane would leave a quarter or more of them empty). H200, three packs against
   * four (docs/PERFORMANCE.md, "Session 6, three packs a lane"): float32 layer_norm at 300 77 -> 88
   * %, 2-byte softmaxes at 768 77-84 -> 90-91 %, the rest 0 to +5; but bfloat16 rms_norm at 768 93
   * -> 89 %, so it keeps four. Likewise 6 for 2-byte rows of 129-192 packs (widths 1032-1536): at
   * 1280-1536 six packs against eight measured softmax 88-92 against 70-80 %, layer_norm 82-92
   * against 68-84 % (session 7).
   */
  static int lanePacks(Op op, ElementType type, int pack, int packsPerRow) {
    int needed = ceilDiv(packsPerRow, 32);
    boolean three =
        needed == 3 && lockstep(type, pack) && !(op == Op.RMS_NORM && type == ElementType.BFLOAT16);
    if (three) {
      return 3;
    }
    if ((needed == 5 || needed == 6) && SIX_PACKS && sixPacks(type, pack)) {
      return 6;
    }
    return nextPowerOfTwo(needed);
  }

  /**
   * Whether the warp path has kernels of six packs a lane for a type and pack: the 2-byte lockstep
   * kernels (rows of 129-192 packs, widths 1032-1536).
   */
  static boolean sixPacks(ElementType type, int pack) {
    return type.byteWidth() == 2 && lockstep(type, pack);
  }

  /**
   * Packs a lane holds on the warp path for rows of at most 32 packs: 1 (a lane per pack), but 2
   * (half the lanes) for layer_norm from 8 packs and log_softmax from 64 values, on the lockstep
   * kernels. Each lane's work per row (the shuffle trees, a divide and a square root, the fallback
   * test) is then spread over twice the values. Measured on an H200 (docs/PERFORMANCE.md, "Session
   * 6", widths 32-256): layer_norm fp32 90 -> 96-98 %, bf16 and f16 82-84 -> 90-92 % from 64 wide;
   * log_softmax +2 to +10 from 64 wide; the other ops and narrower rows gained nothing.
   */
  static int minWarpPacks(Op op, ElementType type, int pack, int packsPerRow) {
    if (!lockstep(type, pack)) {
      return 1;
    }
    if ((op == Op.LAYER_NORM && packsPerRow >= 8)
        || (op == Op.LOG_SOFTMAX && packsPerRow * pack >= 64)) {
      return 2;
    }
    return 1;
  }

  /**
   * Whether a warp-path launch takes one pass over the batch (a block for each 256 threads' share
   * of rows) rather than only the blocks the device holds at once, each looping over rows. Chosen
   * per kernel from timings of both on an H200 (docs/PERFORMANCE.md, "Session 6"), for the lockstep
   * kernels (16-byte packs of 4- and 2-byte types); every other warp kernel stays resident (not
   * timed both ways). (A copy kernel reaches 96-99 % of the device copy on one pass, 91-93 %
   * resident.)
   *
   * <ul>
   *   <li>float32: one pass, but layer_norm at one pack a lane (3 rows resident: 90-91 %, as fast
   *       as 4 rows on one pass, which spilled), and at four or eight packs only where the widest
   *       row fills every lane's packs (so do all ops at four packs; session 5: at width 300, 53 of
   *       128 packs empty, one pass was 1.4-6 points slower; width 768, eight packs not full:
   *       layer_norm one pass 84 % against 94 % resident).
   *   <li>2-byte types: one pass for rms_norm and l2_normalize (96-98 % against 87-94 %; at four
   *       packs only where rows are full: width 768 85-87 % one pass against 94 % resident) and
   *       log_softmax at one and two packs; resident for layer_norm and softmax, and for
   *       log_softmax at four packs. At six packs resident for all (session 7, width 1536 full:
   *       norms 92-93 % resident against 88 % one pass); at eight, one pass for the norms where
   *       rows are full (width 2048: 96 % against 91-92 %), the others resident (softmax 89-90
   *       against 83-84 %, layer_norm and log_softmax 2-5 points).
   * </ul>
   *
   * <p>That mix holds on devices whose memory peaks at {@link #MIXED_WARP_GRID_BANDWIDTH} or more
   * (the H200's 4.8 TB/s). On slower memory (an H100 80GB HBM3, 3.35 TB/s; 2026-11-25,
   * docs/PERFORMANCE.md) every lockstep kernel takes one pass, but at six packs a lane:
   *
   * <ul>
   *   <li>3 rounds at widths 32-2048: one pass 96-100 % in every op and type, where the mix left
   *       2-byte layer_norm and softmax resident at 88-92 % and float32 layer_norm at 768 at 92 %.
   *   <li>Six packs (2-byte 1032-1536), 2 rounds: one pass for every op where rows are full (1536:
   *       94-100 % against 83-92 %); for rows filling at least 3/4 of the lanes' packs (1280) one
   *       pass for the norms and softmax (93-100 % against 88-92 %), resident for layer_norm and
   *       log_softmax (93-94 % against 86-93 %); for emptier rows (1032, 129 of 192 packs) resident
   *       (layer_norm 82-85 % against 79-81, log_softmax 86-89 against 74-83; softmax alone lost,
   *       88-89 against 91-94).
   * </ul>
   *
   * @param packsPerRow the widest row's packs, at most {@code 32 * packs}
   */
  static boolean onePassWarpGrid(
      Op op, ElementType type, int pack, int packs, int packsPerRow, CudaContext context) {
    if (WARP_GRID.equals("onePass") || WARP_GRID.equals("resident")) {
      return WARP_GRID.equals("onePass");
    }
    if (!lockstep(type, pack)) {
      return false;
    }
    boolean fullRows = packsPerRow == 32 * packs;
    boolean norm = op == Op.RMS_NORM || op == Op.L2_NORMALIZE;
    if (!WARP_GRID.equals("mixed") && context.memoryBandwidth() < MIXED_WARP_GRID_BANDWIDTH) {
      if (packs != 6 || fullRows) {
        return true;
      }
      boolean mostlyFull = 4 * packsPerRow >= 3 * 32 * packs;
      return mostlyFull && (norm || op == Op.SOFTMAX);
    }
    if (type == ElementType.FLOAT32) {
      return switch (packs) {
        case 1 -> op != Op.LAYER_NORM;
        case 2 -> true;
        case 3, 4 -> fullRows;
        default -> op != Op.LAYER_NORM || fullRows;
      };
    }
    return switch (packs) {
      case 1, 2 -> norm || op == Op.LOG_SOFTMAX;
      case 6 -> false;
      default -> norm && fullRows;
    };
  }

  /** The kernel's name prefix for an op and type, e.g. {@code rms_norm_f32}. */
  static String kernelStem(Op op, ElementType type) {
    return op.sqlName() + "_" + typeName(type);
  }

  /** {@code -Dembednorm.gpu.tilePath=false} plans the warp-row path instead, for comparisons. */
  private static final boolean TILE_PATH_ENABLED =
      ComparisonSwitch.readBoolean("embednorm.gpu.tilePath", true);

  /**
   * Bytes of rows a block of the tile path stages through shared memory at a time at most, when set
   * ({@code -Dembednorm.gpu.tileBytes}, for comparisons); see {@link #tileBytes}.
   */
  private static final Integer TILE_BYTES_SET = Integer.getInteger("embednorm.gpu.tileBytes");

  /** The widest row of the tile path: 32 values a lane. */
  static final int MAX_TILE_WIDTH = 1024;

  /**
   * Plans a launch over a batch: ragged rows as by {@link #plan}, contiguous ones as by {@link
   * #planContiguous} (only they can take the tile path).
   */
  static LaunchPlan planBatch(
      Op op,
      ElementType type,
      int maxWidth,
      long rows,
      boolean vectorizable,
      boolean ragged,
      CudaContext context,
      KernelModule module) {
    return ragged
        ? plan(op, type, maxWidth, rows, vectorizable, context, module)
        : planContiguous(op, type, maxWidth, rows, vectorizable, context, module);
  }

  /**
   * Plans a launch over {@code rows} contiguous rows of {@code width} elements (row {@code r} at
   * element {@code r * width}). Rows that do not allow 16-byte access row by row (widths that are
   * not a multiple of the pack) take the tile path, which stages runs of whole rows through shared
   * memory with aligned 16-byte copies; every other batch is planned as by {@link #plan}.
   */
  static LaunchPlan planContiguous(
      Op op,
      ElementType type,
      int width,
      long rows,
      boolean vectorizable,
      CudaContext context,
      KernelModule module) {
    LaunchPlan tile = tilePlan(op, type, width, rows, vectorizable, context, module);
    return tile != null ? tile : plan(op, type, width, rows, vectorizable, context, module);
  }

  /**
   * The tile path for contiguous rows that the warp path cannot pack and that are too narrow for a
   * block per row: widths of 257 to {@link #MAX_TILE_WIDTH} elements that are not a multiple of the
   * pack, float32 and 2-byte types. Returns null where it does not apply. {@code group} carries the
   * rows a block stages at a time (see {@link #tileBytes}).
   *
   * <p>Measured against the warp-row path (2026-11-25, docs/PERFORMANCE.md): on an H100 (3.35 TB/s)
   * 96-99 % of the copy against 85-90 % for float32 at 383-1023 and 2-byte norms, and as fast or
   * faster for every 2-byte op (width 300: 94-99 % against 76-86 %). On an H200 (4.8 TB/s) the
   * 2-byte layer_norm, softmax and log_softmax are bound by the tile kernels' instructions from 511
   * wide (73-85 % against 82-87 % on the warp-row path, which holds rows raw), so on memory of
   * {@link #MIXED_WARP_GRID_BANDWIDTH} or more they keep the warp-row path from 385 wide; their
   * rows of up to 384 (72-79 % against 56-77 %) and every other cell (90-96 % against 76-88 %) take
   * the tile path there too.
   */
  static LaunchPlan tilePlan(
      Op op,
      ElementType type,
      int width,
      long rows,
      boolean vectorizable,
      CudaContext context,
      KernelModule module) {
    if (vectorizable || !TILE_PATH_ENABLED || !tileFits(type, width)) {
      return null;
    }
    boolean heavy = op == Op.LAYER_NORM || op == Op.SOFTMAX || op == Op.LOG_SOFTMAX;
    if (type.byteWidth() == 2
        && heavy
        && width > 384
        && context.memoryBandwidth() >= MIXED_WARP_GRID_BANDWIDTH) {
      return null; // the warp-row path (see above)
    }
    return tile(tileKernel(op, type, width), type, width, rows, tileBytes(type));
  }

  /**
   * The tile path's run of rows a block at most, in bytes: 40 KiB of 2-byte rows, 24 KiB of float32
   * ones (but at least 8 rows). 2-byte rows cost twice the instructions a byte, and their blocks
   * need more rows each to keep loads in flight. H100, 2026-11-25 (docs/PERFORMANCE.md): runs of
   * 37-49 KB against 24-29 KB, bf16 300 layer_norm 95-97 % against 90 %, 701 softmax 95 % against
   * 89-91 %; float32 runs of 8 rows (16-33 KB) at 96-99 % against 93-98 % for 16-24.
   */
  static int tileBytes(ElementType type) {
    if (TILE_BYTES_SET != null) {
      return TILE_BYTES_SET;
    }
    return type.byteWidth() == 2 ? 40 << 10 : 24 << 10;
  }

  /** Whether the tile path's kernels hold rows of {@code width} elements of {@code type}. */
  static boolean tileFits(ElementType type, int width) {
    return type != ElementType.FLOAT64 && width > 256 && width <= MAX_TILE_WIDTH;
  }

  /**
   * A tile-path launch of {@code kernel} staging runs of rows of at most {@code tileBytes} (but at
   * least 8 rows; a multiple of the block's 8 warps), a block a run: one pass over the batch.
   */
  static LaunchPlan tile(String kernel, ElementType type, int width, long rows, int tileBytes) {
    int tileRows = tileRows(type, width, tileBytes);
    int sharedBytes = tileRows * width * type.byteWidth() + 16;
    int grid = (int) Math.min(ceilDiv(rows, tileRows), MAX_WARP_BLOCKS);
    return new LaunchPlan(
        kernel, "tile", grid, WARP_PATH_BLOCK, sharedBytes, tileRows, vectorWidth(type));
  }

  /** Rows of a run: a multiple of the block's 8 warps, at least 8, up to {@code tileBytes}. */
  private static int tileRows(ElementType type, int width, int tileBytes) {
    int warps = WARP_PATH_BLOCK / 32;
    int tileRows = Math.max(warps, tileBytes / (width * type.byteWidth()));
    return tileRows - tileRows % warps;
  }

  /**
   * Values a lane holds on the tile path: each kernel's, from the fewest. Rows of up to 16 a lane
   * go two a warp at once.
   */
  private static final int[] TILE_LANE_VALUES = {10, 12, 16, 20, 24, 28, 32};

  /**
   * The tile kernel for rows of {@code width}: the fewest values a lane that hold the row, so that
   * lanes issue few instructions for values past the row (the 2-byte kernels are bound by them).
   */
  static String tileKernel(Op op, ElementType type, int width) {
    int needed = ceilDiv(width, 32);
    int values = TILE_LANE_VALUES[TILE_LANE_VALUES.length - 1];
    for (int candidate : TILE_LANE_VALUES) {
      if (candidate >= needed) {
        values = candidate;
        break;
      }
    }
    return tileKernelHolding(op, type, values);
  }

  /** The tile kernel of {@code values} a lane. */
  static String tileKernelHolding(Op op, ElementType type, int values) {
    return "embednorm_tile_"
        + kernelStem(op, type)
        + "_v"
        + values
        + (values <= 16 ? "_r2" : "_r1");
  }

  /**
   * Plans a launch over {@code rows} rows at most {@code maxWidth} wide (at least 1).
   *
   * @param vectorizable whether every row starts 16-byte aligned and every width is a multiple of
   *     {@link #vectorWidth}: the warp path's condition for 16-byte access (the block path has it
   *     at any alignment)
   */
  static LaunchPlan plan(
      Op op,
      ElementType type,
      int maxWidth,
      long rows,
      boolean vectorizable,
      CudaContext context,
      KernelModule module) {
    String name = kernelStem(op, type);
    int pack = vectorizable ? vectorWidth(type) : 1;
    int maxPacks = maxWarpPacks(type, pack);
    int packsPerRow = ceilDiv(maxWidth, pack);
    if (packsPerRow <= 32 * maxPacks) {
      int packs =
          packsPerRow <= 32
              ? minWarpPacks(op, type, pack, packsPerRow)
              : lanePacks(op, type, pack, packsPerRow);
      int group = packsPerRow <= 32 ? nextPowerOfTwo(ceilDiv(packsPerRow, packs)) : 32;
      String kernel = "embednorm_warp_" + name + "_p" + pack + "_c" + packs;
      long rowsPerBlock =
          (WARP_PATH_BLOCK / 32L) * (32 / group) * rowsPerLane(op, type, pack, packs);
      long blocks = ceilDiv(rows, rowsPerBlock);
      int grid =
          onePassWarpGrid(op, type, pack, packs, packsPerRow, context)
              ? (int) Math.min(blocks, MAX_WARP_BLOCKS)
              : grid(blocks, occupancy(module, kernel, WARP_PATH_BLOCK, 0), context);
      return new LaunchPlan(kernel, "warp", grid, WARP_PATH_BLOCK, 0, group, pack);
    }
    LaunchPlan cluster = clusterPlan(op, type, maxWidth, rows, vectorizable, context, module);
    if (cluster != null) {
      return cluster;
    }
    // The block path reads 16-byte packs at any width and row start (scalar head and tail), given
    // input and output aligned alike modulo 16, which every caller's device buffers are.
    // Unaligned rows too wide for the scalar groups, up to 256 packs: a warp per row with 16-byte
    // packs and a scalar head and tail, held in registers (a block would sit mostly idle on them).
    // H200, width 769: float32 85-87 % against 73-86 % on the block path; bf16 83-85 % against
    // 67-77 % for the warp-row kernel that re-read the row each pass (docs/PERFORMANCE.md).
    // float64 keeps the block path (not measured).
    int vectorPacks = ceilDiv(maxWidth, vectorWidth(type));
    if (!vectorizable
        && vectorPacks <= MAX_WARP_ROW_PACKS
        && (type.byteWidth() == 2 || (WARP_ROW_FLOAT32 && type == ElementType.FLOAT32))) {
      String kernel = warpRowKernel(op, type, maxWidth);
      int grid =
          grid(
              ceilDiv(rows, WARP_PATH_BLOCK / 32L),
              occupancy(module, kernel, WARP_PATH_BLOCK, 0),
              context);
      return new LaunchPlan(kernel, "warp-row", grid, WARP_PATH_BLOCK, 0, 32, vectorWidth(type));
    }
    // Aligned batches skip the head and tail bookkeeping (measured ~8 points on an H200).
    String variant = vectorizable ? "_aligned" : "";
    pack = vectorWidth(type);
    packsPerRow = ceilDiv(maxWidth, pack);
    // About 8 packs a thread, at least 128 threads (64 for rows under 256 packs); measured on an
    // H200 (docs/PERFORMANCE.md).
    int block =
        Math.max(
            packsPerRow < 256 ? 64 : 128, Math.min(1024, nextPowerOfTwo(ceilDiv(packsPerRow, 8))));
    String cached = "embednorm_block_" + name + "_p" + pack + variant + "_cached";
    int computeBytes = type == ElementType.FLOAT64 ? 8 : 4;
    long cacheBytes = ((long) maxWidth + pack) * computeBytes;
    // 2-byte rows cache as floats, twice their size: from 16384 wide, and always for LayerNorm
    // (whose passes read the cache three times), re-reading through L2 measured faster.
    boolean preferUncached = type.byteWidth() == 2 && (maxWidth >= 16384 || op == Op.LAYER_NORM);
    if (!preferUncached && cacheBytes <= module.dynamicSharedMemoryLimit(cached)) {
      int active = occupancy(module, cached, block, (int) cacheBytes);
      if (active > 0) {
        return new LaunchPlan(
            cached, "block-cached", grid(rows, active, context), block, (int) cacheBytes, 1, pack);
      }
    }
    String uncached = "embednorm_block_" + name + "_p" + pack + variant + "_uncached";
    int active = Math.max(1, occupancy(module, uncached, block, 0));
    return new LaunchPlan(
        uncached, "block-uncached", grid(rows, active, context), block, 0, 1, pack);
  }

  /**
   * The cluster path for rows wider than the warp path holds, where the device has thread-block
   * clusters (compute capability 9.0+): a row in registers over up to {@link #MAX_CLUSTER} blocks,
   * {@link #CLUSTER_BYTES_PER_THREAD} bytes a thread. Needs 16-byte aligned rows whose widths are
   * multiples of the pack; float64 keeps the block path. Returns null where it does not apply.
   */
  static LaunchPlan clusterPlan(
      Op op,
      ElementType type,
      int maxWidth,
      long rows,
      boolean vectorizable,
      CudaContext context,
      KernelModule module) {
    if (!vectorizable
        || type == ElementType.FLOAT64
        || context.computeCapability() < 90
        || !CLUSTER_PATH_ENABLED) {
      return null;
    }
    // Measured on an H200 (docs/PERFORMANCE.md): one block per row up to 512 threads; beyond,
    // two blocks of 512, then of 1024. Rows under 128 threads keep the block path, whose
    // persistent blocks amortize per-row work better there.
    int threads = ceilDiv(maxWidth, clusterElementsPerThread(type));
    if (threads < 128) {
      return null;
    }
    if (threads > CLUSTER_BLOCK) {
      int wideThreads = ceilDiv(maxWidth, 2 * clusterElementsPerThread(type));
      int wideCluster = ceilDiv(wideThreads, CLUSTER_BLOCK);
      if (wideCluster <= MAX_PLANNED_CLUSTER && wideClusterThreads(type, wideCluster, context)) {
        int block = wideClusterBlock(type, wideCluster);
        return cluster(
            op,
            type,
            rows,
            block,
            wideCluster * CLUSTER_BLOCK / block,
            2 * CLUSTER_BYTES_PER_THREAD,
            context,
            module);
      }
    }
    int block = threads <= 2 * CLUSTER_BLOCK ? CLUSTER_BLOCK : MAX_CLUSTER_BLOCK;
    int cluster = threads <= CLUSTER_BLOCK ? 1 : nextPowerOfTwo(ceilDiv(threads, block));
    if (cluster > MAX_PLANNED_CLUSTER) {
      return null; // wider rows: the block path (4 and 8 blocks measured slower than 2 larger ones)
    }
    return cluster(
        op, type, rows, Math.min(block, nextPowerOfTwo(threads)), cluster, context, module);
  }

  /**
   * Whether rows of more than 512 threads' worth at 64 bytes a thread (float32 8193-32768 wide,
   * 2-byte 16385-32768) take the cluster kernels of 128 bytes a thread over {@code blocks} blocks
   * of up to 512: one block per row (two blocks an SM) where 64 bytes a thread took a cluster of
   * two blocks of 512, or two such blocks where 64 bytes took two of 1024 (one an SM). Measured on
   * an H100 (docs/PERFORMANCE.md, 2026-11-25, evening), % of the copy, four rounds: float32 16384
   * 96-98 % against 90-93 %; float32 32768 94-98 % against 89-94 %; 2-byte 32768 96-98 % against
   * 90-93 % (LayerNorm 92-97 % against 90-93 %). Not on memory of {@link
   * #MIXED_WARP_GRID_BANDWIDTH} or more (not timed there), nor for 2-byte rows that would need two
   * blocks (not timed).
   */
  static boolean wideClusterThreads(ElementType type, int blocks, CudaContext context) {
    if (!WIDE_CLUSTER_THREADS.equals("planned")) {
      return WIDE_CLUSTER_THREADS.equals("true");
    }
    return context.memoryBandwidth() < MIXED_WARP_GRID_BANDWIDTH
        && (type == ElementType.FLOAT32 || blocks == 1);
  }

  /**
   * Threads per block for rows of 128 bytes a thread that take {@code blocks} blocks of 512: 256
   * for float32 rows of two (widths 16385-32768, then over a cluster of four), else 512. H100,
   * 2026-11-26 (docs/PERFORMANCE.md), two turns of five rounds, % of the copy: float32 32768 at
   * 97.5-98.2 % in every op against 97.0-97.8 % on two blocks of 512. A cut-off session had seen
   * float32 16384 lose 0.5-1.3 points on two blocks of 256 and bfloat16 32768 layer_norm 8 points
   * (its files were lost), so those keep blocks of 512.
   */
  static int wideClusterBlock(ElementType type, int blocks) {
    if (!WIDE_CLUSTER_BLOCK.equals("planned")) {
      return Integer.parseInt(WIDE_CLUSTER_BLOCK);
    }
    return type == ElementType.FLOAT32 && blocks == 2 ? CLUSTER_BLOCK / 2 : CLUSTER_BLOCK;
  }

  /** Elements of a row each thread of the cluster path holds. */
  static int clusterElementsPerThread(ElementType type) {
    return CLUSTER_BYTES_PER_THREAD / type.byteWidth();
  }

  /**
   * A cluster-path launch of {@code cluster} blocks of {@code block} threads per row. Clusters of
   * several blocks, and 1024-thread blocks, of 64 bytes a thread run on a persistent grid (as many
   * as the device holds, each looping over rows; see {@link #residentClusterGrid}). Single blocks
   * of up to 512 threads get a block per row, which measured 5-10 points faster than a persistent
   * grid.
   */
  static LaunchPlan cluster(
      Op op,
      ElementType type,
      long rows,
      int block,
      int cluster,
      CudaContext context,
      KernelModule module) {
    return cluster(op, type, rows, block, cluster, CLUSTER_BYTES_PER_THREAD, context, module);
  }

  /**
   * A cluster-path launch whose threads hold {@code bytesPerThread} bytes of a row: 64, or 128 (the
   * {@code _b128} kernels, of 1, 2 or 4 blocks).
   */
  static LaunchPlan cluster(
      Op op,
      ElementType type,
      long rows,
      int block,
      int cluster,
      int bytesPerThread,
      CudaContext context,
      KernelModule module) {
    String kernel =
        "embednorm_cluster_"
            + kernelStem(op, type)
            + "_k"
            + cluster
            + (bytesPerThread == CLUSTER_BYTES_PER_THREAD ? "" : "_b" + bytesPerThread);
    long clusters = Math.min(rows, MAX_ROWS_PER_LAUNCH);
    if (residentClusterGrid(block, cluster, bytesPerThread)) {
      long resident = (long) occupancy(module, kernel, block, 0) * context.multiprocessors();
      clusters = Math.min(rows, Math.max(1, resident / cluster));
    }
    return new LaunchPlan(
        kernel, "cluster", (int) clusters * cluster, block, 0, cluster, vectorWidth(type));
  }

  /**
   * Whether a cluster-path launch runs on a persistent grid: rows of two blocks, or of a
   * 1024-thread block, of 64 bytes a thread (a cluster per row measured 10-30 points slower there
   * on an H200). Rows of 128 bytes a thread over several blocks get a cluster per row, which
   * measured 1-3 points faster on an H100 (float32 32768 over two blocks of 512: 94-98 % against
   * 93-95 %).
   */
  private static boolean residentClusterGrid(int block, int cluster, int bytesPerThread) {
    if (CLUSTER_GRID.equals("perRow")) {
      return false;
    }
    boolean shared = cluster > 1 || block > CLUSTER_BLOCK;
    if (CLUSTER_GRID.equals("resident")) {
      return shared;
    }
    return shared && bytesPerThread == CLUSTER_BYTES_PER_THREAD;
  }

  static int grid(long blocksNeeded, int activePerMultiprocessor, CudaContext context) {
    long resident = (long) Math.max(1, activePerMultiprocessor) * context.multiprocessors();
    return (int) Math.max(1, Math.min(blocksNeeded, resident));
  }

  static int occupancy(KernelModule module, String kernel, int block, int sharedBytes) {
    int[] blocks = new int[1];
    cuOccupancyMaxActiveBlocksPerMultiprocessor(
        blocks, module.function(kernel), block, sharedBytes);
    return blocks[0];
  }

  static int nextPowerOfTwo(int value) {
    return value <= 1 ? 1 : Integer.highestOneBit(value - 1) << 1;
  }

  private static int ceilDiv(int value, int divisor) {
    return (value + divisor - 1) / divisor;
  }

  private static long ceilDiv(long value, long divisor) {
    return (value + divisor - 1) / divisor;
  }
}

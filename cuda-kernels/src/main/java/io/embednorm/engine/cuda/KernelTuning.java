package io.embednorm.engine.cuda;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Op;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The kernels' launch tuning, as the tables that {@code embednorm_kernels.cu} exports: which kernel
 * runs a row of each op, type and width on each path, with how many lanes, rows, threads and
 * blocks. {@code src/main/cuda/tuning.cuh} declares every number (and says why); this class knows
 * only the tables' layout. {@link KernelModule} reads them from the loaded module; tests without a
 * GPU read the same tables as {@code print_tuning.cu} prints them.
 */
final class KernelTuning {
  /** The exported tables, by name (EMBEDNORM_TUNING_TABLES in tuning.cuh). */
  static final List<String> TABLES =
      List.of(
          "embednorm_tuning_scalars",
          "embednorm_warp_plans",
          "embednorm_warp_row_plans",
          "embednorm_tile_plans",
          "embednorm_tile_bytes",
          "embednorm_cluster_plans",
          "embednorm_block_threads",
          "embednorm_block_uncached_from");

  /** The layout this class reads (kTuningFormat). */
  private static final int FORMAT = 1;

  private static final int MEMORY_CLASSES = 2;
  private static final int OPS = 7;
  private static final int TYPES = 4;
  private static final int CLUSTER_FIELDS = 5;
  private static final int BLOCK_FIELDS = 2;

  /** A warp-path launch: packs a lane, rows a lane, lanes a row, one pass or resident. */
  record Warp(int packs, int rowsPerLane, int group, boolean onePass) {}

  /** A tile-path launch: values a lane, rows a warp at once, bytes of rows a block stages. */
  record Tile(int values, int rowsPerWarp, int bytes) {}

  /** A cluster-path launch: threads a block, blocks a row, bytes a thread, persistent grid. */
  record Cluster(int block, int blocks, int bytesPerThread, boolean resident) {}

  private final int warpBlock;
  private final long fastMemoryBandwidth;
  private final int clusterMinComputeCapability;
  private final int clusterBytes;
  private final int[] warpPlans;
  private final int warpColumns;
  private final int[] warpRowPlans;
  private final int warpRowColumns;
  private final int[] tilePlans;
  private final int tileColumns;
  private final int[] tileBytes;
  private final int[] clusterPlans;
  private final int clusterSegments;
  private final int[] blockThreads;
  private final int[] blockUncachedFrom;

  private KernelTuning(Map<String, int[]> tables) {
    int[] scalars = tables.get("embednorm_tuning_scalars");
    if (scalars.length < 5 || scalars[0] != FORMAT) {
      throw new EmbedNormException(
          "Cannot read the kernels' tuning: its tables have format "
              + (scalars.length == 0 ? "none" : scalars[0])
              + ", this jar reads format "
              + FORMAT);
    }
    warpBlock = scalars[1];
    fastMemoryBandwidth = scalars[2] * 1_000_000_000L;
    clusterMinComputeCapability = scalars[3];
    clusterBytes = scalars[4];
    warpPlans = tables.get("embednorm_warp_plans");
    warpColumns = columns(warpPlans, MEMORY_CLASSES * OPS * TYPES * 2, "embednorm_warp_plans");
    warpRowPlans = tables.get("embednorm_warp_row_plans");
    warpRowColumns = columns(warpRowPlans, TYPES, "embednorm_warp_row_plans");
    tilePlans = tables.get("embednorm_tile_plans");
    tileColumns = columns(tilePlans, MEMORY_CLASSES * OPS * TYPES, "embednorm_tile_plans");
    tileBytes = tables.get("embednorm_tile_bytes");
    columns(tileBytes, TYPES, "embednorm_tile_bytes");
    clusterPlans = tables.get("embednorm_cluster_plans");
    clusterSegments =
        columns(clusterPlans, MEMORY_CLASSES * TYPES * CLUSTER_FIELDS, "embednorm_cluster_plans");
    blockThreads = tables.get("embednorm_block_threads");
    columns(blockThreads, BLOCK_FIELDS, "embednorm_block_threads");
    blockUncachedFrom = tables.get("embednorm_block_uncached_from");
    columns(blockUncachedFrom, OPS * TYPES, "embednorm_block_uncached_from");
  }

  /**
   * The tuning in {@code tables}, each table by name as its int values.
   *
   * @throws EmbedNormException when a table is missing or its size does not fit the layout
   */
  static KernelTuning of(Function<String, int[]> tables) {
    Map<String, int[]> read = new HashMap<>();
    for (String name : TABLES) {
      read.put(name, tables.apply(name));
    }
    return new KernelTuning(read);
  }

  /** The tuning as print_tuning.cu prints it: a line a table, its name then its values. */
  static KernelTuning parse(String text) {
    Map<String, int[]> tables = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] fields = line.trim().split(" +");
      int[] values = new int[fields.length - 1];
      for (int i = 0; i < values.length; i++) {
        values[i] = Integer.parseInt(fields[i + 1]);
      }
      tables.put(fields[0], values);
    }
    return of(
        name -> {
          int[] values = tables.get(name);
          if (values == null) {
            throw new EmbedNormException("Cannot read the kernels' tuning: no table " + name);
          }
          return values;
        });
  }

  /** Threads a block of the warp, warp-row and tile kernels. */
  int warpBlock() {
    return warpBlock;
  }

  /** Whether memory of {@code bandwidth} bytes a second takes the fast-memory plans. */
  boolean fastMemory(long bandwidth) {
    return bandwidth >= fastMemoryBandwidth;
  }

  /** The least peak memory bandwidth, in bytes a second, of fast memory. */
  long fastMemoryBandwidth() {
    return fastMemoryBandwidth;
  }

  int clusterMinComputeCapability() {
    return clusterMinComputeCapability;
  }

  /**
   * The warp-path launch of rows of at most {@code packsPerRow} packs (16 bytes' worth where {@code
   * aligned}, else one element), or null where they are too wide for it.
   */
  Warp warp(boolean fast, Op op, ElementType type, boolean aligned, int packsPerRow) {
    if (packsPerRow < 1 || packsPerRow >= warpColumns) {
      return null;
    }
    int row = ((memory(fast) * OPS + op(op)) * TYPES + type(type)) * 2 + (aligned ? 1 : 0);
    int entry = warpPlans[row * warpColumns + packsPerRow];
    if (entry == 0) {
      return null;
    }
    return new Warp(entry & 15, entry >> 4 & 15, 1 << (entry >> 8 & 15), (entry >> 12 & 1) == 1);
  }

  /**
   * Packs a lane of the warp-row kernel for unaligned rows of at most {@code vectorPacks} 16-byte
   * packs, or 0 where another path takes them.
   */
  int warpRowPacks(ElementType type, int vectorPacks) {
    if (vectorPacks < 1 || vectorPacks >= warpRowColumns) {
      return 0;
    }
    return warpRowPlans[type(type) * warpRowColumns + vectorPacks];
  }

  /**
   * The tile-path launch of contiguous unaligned rows that need {@code valuesNeeded} values a lane
   * of a warp, or null where the tile path does not apply.
   */
  Tile tile(boolean fast, Op op, ElementType type, int valuesNeeded) {
    if (valuesNeeded < 1 || valuesNeeded >= tileColumns) {
      return null;
    }
    int row = (memory(fast) * OPS + op(op)) * TYPES + type(type);
    int entry = tilePlans[row * tileColumns + valuesNeeded];
    return entry == 0 ? null : new Tile(entry & 255, entry >> 8, tileBytes[type(type)]);
  }

  /** Threads of the cluster kernels' unsuffixed size a row of {@code width} needs. */
  long clusterThreads(ElementType type, int width) {
    return ((long) width * type.byteWidth() + clusterBytes - 1) / clusterBytes;
  }

  /** The cluster-path launch of aligned rows of {@code threads} threads, or null for none. */
  Cluster cluster(boolean fast, ElementType type, long threads) {
    int first = (memory(fast) * TYPES + type(type)) * clusterSegments;
    for (int segment = first; segment < first + clusterSegments; segment++) {
      int at = segment * CLUSTER_FIELDS;
      if (threads <= clusterPlans[at]) {
        return clusterPlans[at + 2] == 0
            ? null
            : new Cluster(
                clusterPlans[at + 1],
                clusterPlans[at + 2],
                clusterPlans[at + 3],
                clusterPlans[at + 4] == 1);
      }
    }
    return null;
  }

  /** The cluster kernels' name suffix for {@code bytesPerThread}: none, or {@code _b128}. */
  String clusterSuffix(int bytesPerThread) {
    return bytesPerThread == clusterBytes ? "" : "_b" + bytesPerThread;
  }

  /** Threads a block of the block path for rows of {@code vectorPacks} 16-byte packs. */
  int blockThreads(int vectorPacks) {
    for (int at = 0; at < blockThreads.length; at += BLOCK_FIELDS) {
      if (vectorPacks <= blockThreads[at]) {
        return blockThreads[at + 1];
      }
    }
    return blockThreads[blockThreads.length - 1];
  }

  /** Whether the block path may cache rows of {@code width} in shared memory. */
  boolean blockCaches(Op op, ElementType type, int width) {
    return width < blockUncachedFrom[op(op) * TYPES + type(type)];
  }

  private static int columns(int[] table, int rows, String name) {
    if (table.length == 0 || table.length % rows != 0) {
      throw new EmbedNormException(
          "Cannot read the kernels' tuning: "
              + name
              + " has "
              + table.length
              + " values, not a multiple of "
              + rows);
    }
    return table.length / rows;
  }

  private static int memory(boolean fast) {
    return fast ? 1 : 0;
  }

  /** The op's index in the tables (kRmsNorm ... kLinfNormalize). */
  private static int op(Op op) {
    return switch (op) {
      case RMS_NORM -> 0;
      case LAYER_NORM -> 1;
      case SOFTMAX -> 2;
      case LOG_SOFTMAX -> 3;
      case L2_NORMALIZE -> 4;
      case L1_NORMALIZE -> 5;
      case LINF_NORMALIZE -> 6;
    };
  }

  /** The type's index in the tables (kF16 ... kF64). */
  private static int type(ElementType type) {
    return switch (type) {
      case FLOAT16 -> 0;
      case BFLOAT16 -> 1;
      case FLOAT32 -> 2;
      case FLOAT64 -> 3;
    };
  }
}

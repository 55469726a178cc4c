package io.embednorm.engine.cuda;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Op;

/**
 * Which kernel runs a batch and how it is launched (docs/ARCHITECTURE.md, "CUDA engine"). The
 * choices are the kernels' own: {@code src/main/cuda/tuning.cuh} declares them, the module exports
 * them as tables ({@link KernelTuning}), and this class looks a batch up in them, names the kernel
 * and sizes its grid for the device. In order: contiguous unaligned rows of 257-1024 elements take
 * the tile path where the tables say so; rows the warp path holds take it; wider aligned rows, on
 * devices with thread-block clusters, the cluster path; unaligned rows of up to 256 16-byte packs
 * the warp-row path; everything else the block path.
 *
 * @param kernel the kernel's name in the module
 * @param path {@code warp}, {@code warp-row}, {@code tile}, {@code cluster}, {@code block-cached}
 *     or {@code block-uncached}
 * @param group lanes per row on the warp path, blocks per row on the cluster path, rows a block
 *     stages at a time on the tile path (32 on the warp-row path, 1 on the block path)
 * @param pack elements per load: 16 bytes' worth, or 1 for unaligned rows on the warp path
 */
public record LaunchPlan(
    String kernel, String path, int grid, int block, int sharedBytes, int group, int pack) {

  /** The most blocks of a one-pass launch and clusters of a launch; kernels loop over more rows. */
  private static final long MAX_GRID = 1L << 28;

  /** The suffix of each element type's kernels. */
  static String typeName(ElementType type) {
    return switch (type) {
      case FLOAT16 -> "f16";
      case BFLOAT16 -> "bf16";
      case FLOAT32 -> "f32";
      case FLOAT64 -> "f64";
    };
  }

  /** Elements in one 16-byte load. */
  static int vectorWidth(ElementType type) {
    return 16 / type.byteWidth();
  }

  /**
   * Plans a launch over {@code rows} rows at most {@code maxWidth} wide (at least 1).
   *
   * @param vectorizable whether every row starts 16-byte aligned and every width is a multiple of
   *     {@link #vectorWidth}: the condition for 16-byte packs on the warp and cluster paths (the
   *     other paths take them at any alignment, given input and output aligned alike modulo 16)
   * @param ragged whether rows sit at offsets of their own; only contiguous rows of one width can
   *     take the tile path
   */
  static LaunchPlan planBatch(
      Op op,
      ElementType type,
      int maxWidth,
      long rows,
      boolean vectorizable,
      boolean ragged,
      LaunchTarget target) {
    KernelTuning tuning = target.tuning();
    boolean fast = tuning.fastMemory(target.memoryBandwidth());
    String stem = op.sqlName() + "_" + typeName(type);
    int vector = vectorWidth(type);
    if (!ragged && !vectorizable) {
      KernelTuning.Tile tile = tuning.tile(fast, op, type, ceilDiv(maxWidth, 32));
      if (tile != null) {
        return tile(stem, tile, type, maxWidth, rows, target);
      }
    }
    int pack = vectorizable ? vector : 1;
    KernelTuning.Warp warp = tuning.warp(fast, op, type, vectorizable, ceilDiv(maxWidth, pack));
    if (warp != null) {
      return warp(stem, warp, pack, rows, target);
    }
    if (vectorizable && target.computeCapability() >= tuning.clusterMinComputeCapability()) {
      KernelTuning.Cluster cluster =
          tuning.cluster(fast, type, tuning.clusterThreads(type, maxWidth));
      if (cluster != null) {
        return cluster(stem, cluster, vector, rows, target);
      }
    }
    int vectorPacks = ceilDiv(maxWidth, vector);
    if (!vectorizable) {
      int lanePacks = tuning.warpRowPacks(type, vectorPacks);
      if (lanePacks != 0) {
        String kernel = "embednorm_warprow_" + stem + "_p" + vector + "_c" + lanePacks;
        int block = tuning.warpBlock();
        int grid = grid(ceilDiv(rows, block / 32L), target.occupancy(kernel, block, 0), target);
        return new LaunchPlan(kernel, "warp-row", grid, block, 0, 32, vector);
      }
    }
    return block(op, type, stem, maxWidth, vectorPacks, rows, vectorizable, target);
  }

  /**
   * A warp-path launch: on one pass, a block for each block's share of rows; resident, only the
   * blocks the device holds at once, each looping over rows.
   */
  private static LaunchPlan warp(
      String stem, KernelTuning.Warp warp, int pack, long rows, LaunchTarget target) {
    String kernel = "embednorm_warp_" + stem + "_p" + pack + "_c" + warp.packs();
    int block = target.tuning().warpBlock();
    long rowsPerBlock = (block / 32L) * (32 / warp.group()) * warp.rowsPerLane();
    long blocks = ceilDiv(rows, rowsPerBlock);
    int grid =
        warp.onePass()
            ? (int) Math.min(blocks, MAX_GRID)
            : grid(blocks, target.occupancy(kernel, block, 0), target);
    return new LaunchPlan(kernel, "warp", grid, block, 0, warp.group(), pack);
  }

  /**
   * A tile-path launch, one pass over the batch: a block stages runs of whole rows of at most the
   * tuning's bytes, but at least a row for each of its warps, in a multiple of its warps.
   */
  private static LaunchPlan tile(
      String stem,
      KernelTuning.Tile tile,
      ElementType type,
      int width,
      long rows,
      LaunchTarget target) {
    String kernel = "embednorm_tile_" + stem + "_v" + tile.values() + "_r" + tile.rowsPerWarp();
    int block = target.tuning().warpBlock();
    int warps = block / 32;
    int runRows = Math.max(warps, tile.bytes() / (width * type.byteWidth()));
    runRows -= runRows % warps;
    // The kernel shifts a run by up to 15 bytes so that its 16-byte packs stay aligned.
    int sharedBytes = runRows * width * type.byteWidth() + 16;
    int grid = (int) Math.min(ceilDiv(rows, runRows), MAX_GRID);
    return new LaunchPlan(kernel, "tile", grid, block, sharedBytes, runRows, vectorWidth(type));
  }

  /**
   * A cluster-path launch: a cluster a row, or on a persistent grid as many clusters as the device
   * holds at once, each looping over rows.
   */
  private static LaunchPlan cluster(
      String stem, KernelTuning.Cluster cluster, int vector, long rows, LaunchTarget target) {
    String kernel =
        "embednorm_cluster_"
            + stem
            + "_k"
            + cluster.blocks()
            + target.tuning().clusterSuffix(cluster.bytesPerThread());
    long clusters = Math.min(rows, MAX_GRID);
    if (cluster.resident()) {
      long resident =
          (long) target.occupancy(kernel, cluster.block(), 0) * target.multiprocessors();
      clusters = Math.min(rows, Math.max(1, resident / cluster.blocks()));
    }
    return new LaunchPlan(
        kernel,
        "cluster",
        (int) clusters * cluster.blocks(),
        cluster.block(),
        0,
        cluster.blocks(),
        vector);
  }

  /**
   * A block-path launch on a persistent grid: the row cached in shared memory where the tuning
   * allows it and it fits, else re-read. Aligned batches take the kernels without the scalar head
   * and tail.
   */
  private static LaunchPlan block(
      Op op,
      ElementType type,
      String stem,
      int maxWidth,
      int vectorPacks,
      long rows,
      boolean vectorizable,
      LaunchTarget target) {
    KernelTuning tuning = target.tuning();
    int vector = vectorWidth(type);
    int block = tuning.blockThreads(vectorPacks);
    String kernel = "embednorm_block_" + stem + "_p" + vector + (vectorizable ? "_aligned" : "");
    // The cache holds the row in the compute type (float, or double for float64 rows), shifted
    // by up to a pack so that its packs stay aligned.
    long cacheBytes = ((long) maxWidth + vector) * (type == ElementType.FLOAT64 ? 8 : 4);
    if (tuning.blockCaches(op, type, maxWidth)
        && cacheBytes <= target.dynamicSharedMemoryLimit(kernel + "_cached")) {
      int active = target.occupancy(kernel + "_cached", block, (int) cacheBytes);
      if (active > 0) {
        return new LaunchPlan(
            kernel + "_cached",
            "block-cached",
            grid(rows, active, target),
            block,
            (int) cacheBytes,
            1,
            vector);
      }
    }
    int active = Math.max(1, target.occupancy(kernel + "_uncached", block, 0));
    return new LaunchPlan(
        kernel + "_uncached", "block-uncached", grid(rows, active, target), block, 0, 1, vector);
  }

  /** Blocks of a persistent grid: as many as the device holds at once, at most those needed. */
  private static int grid(long blocksNeeded, int activePerMultiprocessor, LaunchTarget target) {
    long resident = (long) Math.max(1, activePerMultiprocessor) * target.multiprocessors();
    return (int) Math.max(1, Math.min(blocksNeeded, resident));
  }

  private static int ceilDiv(int value, int divisor) {
    return (value + divisor - 1) / divisor;
  }

  private static long ceilDiv(long value, long divisor) {
    return (value + divisor - 1) / divisor;
  }
}

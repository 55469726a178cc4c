package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD32;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.NarrowReference;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import io.embednorm.engine.cpu.CpuEngine;
import io.embednorm.engine.cpu.NarrowComparison;
import io.embednorm.engine.cpu.NormalizationVariants;
import io.embednorm.engine.cpu.ReferenceNormalization;
import io.embednorm.engine.cpu.RowComparison;
import io.embednorm.engine.cpu.RowDistribution;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CUDA kernels against the float64 reference and the CPU engine (the bounds of
 * docs/SEMANTICS.md, "Accuracy"), across every dispatch boundary, every kernel forced onto rows it
 * can hold, unaligned starts, ragged rows and the edge cases. Device outputs are poisoned with NaN
 * bytes before every run, so an unwritten element fails. Skipped (not passed) where no GPU is
 * usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class CudaEngineGpuTest {
  /**
   * Checked before the class's set-up, so that without a GPU each test is reported as skipped
   * rather than the class as zero tests.
   */
  static boolean gpuUsable() {
    return CudaEngine.unavailableReason() == null;
  }

  /**
   * Both sides of each boundary: group sizes, 16-byte packs, warp/block (1024), cache limits, 64 or
   * 128 bytes a thread on the cluster path (float32 8192 | 8196, 2-byte 16384 | 16392), and rows
   * that leave lanes of a 512-thread block past their end (12000, 20000).
   */
  private static final int[] WIDTHS = {
    1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300, 511,
    512, 513, 767, 768, 769, 1023, 1024, 1025, 2047, 2048, 2049, 4096, 4097, 8192, 8196, 12000,
    16384, 16392, 20000, 32768, 32769, 65537
  };

  private static final ElementType[] TYPES = ElementType.values();
  private static CudaEngine engine;
  private static final CpuEngine CPU = new CpuEngine();

  /** Poisoned bytes after a launch's output rows, which no kernel may write. */
  private static final int GUARD_BYTES = 64;

  @BeforeAll
  static void requireGpu() {
    String why = CudaEngine.unavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    System.setProperty(InternalSwitches.GPU_POISON_OUTPUTS.name(), "true");
    engine = new CudaEngine(0);
  }

  static Stream<Arguments> typesAndOps() {
    return Arrays.stream(TYPES)
        .flatMap(type -> Arrays.stream(Op.values()).map(op -> Arguments.of(type, op)));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("typesAndOps")
  void everyWidthMatchesTheReferenceAndTheCpuEngine(ElementType type, Op op) {
    AtomicLong allowances = new AtomicLong();
    AtomicLong elements = new AtomicLong();
    long[] seeds = TestSeeds.seeds();
    // Seeds and widths in parallel: each pair draws from a random source of its own, so the rows
    // are those of a serial run, and generating them is much of the time that is left.
    IntStream.range(0, seeds.length * WIDTHS.length)
        .parallel()
        .forEach(
            pair -> {
              long seed = seeds[pair / WIDTHS.length];
              int width = WIDTHS[pair % WIDTHS.length];
              long[] counted = new long[1];
              Random random = new Random(TestSeeds.mix(seed, type.ordinal(), op.ordinal(), width));
              int rows = Math.max(2, Math.min(64, (1 << 16) / width));
              for (Normalization normalization : NormalizationVariants.of(op, width, random)) {
                RowDistribution distribution =
                    width % 3 == 0 ? RowDistribution.MIXED_MAGNITUDES : RowDistribution.NORMAL;
                double[][] values = randomRows(random, distribution, rows, width);
                Rows gpu = Rows.fixed(type, values);
                Rows cpu = gpu.copy();
                engine.normalize(normalization, gpu.batch());
                CPU.normalize(normalization, cpu.batch());
                String where =
                    String.format("seed %d, %s, %s, width %d", seed, type, normalization, width);
                Expected expected = gpu.expected(op, normalization);
                gpu.assertMatches(expected, where, counted);
                cpu.assertMatches(expected, where + " (cpu)", counted);
                elements.addAndGet(2L * rows * width);
              }
              allowances.addAndGet(counted[0]);
            });
    assertThat(allowances.get())
        .as("16-bit outputs that needed the near-zero allowance, of %d", elements.get())
        .isLessThanOrEqualTo(elements.get() / 1000);
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("typesAndOps")
  void everyDispatchPathGivesTheSameAnswer(ElementType type, Op op) {
    int vector = LaunchPlan.vectorWidth(type);
    long[] seeds = TestSeeds.seeds();
    int[] widths = {
      1, 5, 32, 33, 128, 257, 300, 383, 511, 513, 701, 768, 769, 1023, 1024, 1025, 1032, 1536, 2048,
      4096, 4099
    };
    // Seeds and widths in parallel, as in everyWidthMatchesTheReferenceAndTheCpuEngine: one pair's
    // checks and driver calls overlap another's; each pair's launches wait for their own results.
    IntStream.range(0, seeds.length * widths.length)
        .parallel()
        .forEach(
            pair -> {
              long seed = seeds[pair / widths.length];
              int width = widths[pair % widths.length];
              CudaContext context = CudaContext.of(0);
              KernelModule module = KernelModule.of(context);
              Random random =
                  new Random(TestSeeds.mix(seed, type.ordinal(), op.ordinal(), width, 7));
              Normalization normalization = NormalizationVariants.of(op, width, random).get(0);
              double[][] values = randomRows(random, RowDistribution.NORMAL, 37, width);
              List<LaunchPlan> forced = forcedPlans(op, type, width, context, module.tuning());
              LaunchPlan planned =
                  LaunchPlan.planBatch(op, type, width, 37, width % vector == 0, false, module);
              assertThat(forced).extracting(LaunchPlan::kernel).contains(planned.kernel());
              // One reference and one set of device buffers for every kernel: they all run these
              // rows.
              Rows rows = Rows.fixed(type, values);
              Expected expected = rows.expected(op, normalization);
              try (DeviceBuffer input = new DeviceBuffer(rows.bytes(), "input");
                  DeviceBuffer output = new DeviceBuffer(rows.bytes() + GUARD_BYTES, "output")) {
                for (LaunchPlan plan : forced) {
                  rows.poisonOutput();
                  launchOnDevice(module, plan, normalization, rows, 0, input, output);
                  rows.assertMatches(
                      expected,
                      String.format(
                          "seed %d, %s, %s, width %d, %s", seed, type, normalization, width, plan),
                      new long[1]);
                }
              }
            });
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("typesAndOps")
  void unalignedRowStartsTakeTheScalarPath(ElementType type, Op op) {
    CudaContext context = CudaContext.of(0);
    KernelModule module = KernelModule.of(context);
    long seed = TestSeeds.seeds()[TestSeeds.seeds().length - 1];
    for (int shift = 1; shift < LaunchPlan.vectorWidth(type); shift++) {
      for (int width : new int[] {8, 64, 300, 768, 769, 4096}) {
        Random random = new Random(TestSeeds.mix(seed, type.ordinal(), op.ordinal(), width, shift));
        Normalization normalization = Normalization.of(op);
        Rows rows = Rows.fixed(type, randomRows(random, RowDistribution.NORMAL, 19, width));
        LaunchPlan plan = LaunchPlan.planBatch(op, type, width, 19, false, false, module);
        if (plan.path().equals("warp")) {
          assertThat(plan.pack()).as(plan.toString()).isEqualTo(1);
        }
        launchOnDevice(context, module, plan, normalization, rows, shift);
        rows.assertMatchesReference(
            op,
            normalization,
            String.format("seed %d, %s, width %d, start shifted by %d", seed, type, width, shift),
            new long[1]);
      }
    }
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("typesAndOps")
  void raggedRowsIncludingEmptyOnes(ElementType type, Op op) {
    for (long seed : TestSeeds.seeds()) {
      Random random = new Random(TestSeeds.mix(seed, type.ordinal(), op.ordinal(), 99));
      for (int maximum : new int[] {40, 1500, 40000}) {
        int rows = maximum > 10000 ? 5 : 60;
        double[][] values = new double[rows][];
        for (int row = 0; row < rows; row++) {
          int width = row % 7 == 3 ? 0 : 1 + random.nextInt(maximum);
          values[row] = RowDistribution.NORMAL.doubles(random, width);
        }
        Rows gpu = Rows.ragged(type, values, 3);
        engine.normalize(Normalization.of(op), gpu.batch());
        gpu.assertMatchesReference(
            op,
            Normalization.of(op),
            String.format("seed %d, %s, ragged up to %d", seed, type, maximum),
            new long[1]);
        gpu.assertGapsUntouched();
      }
    }
  }

  @Test
  void edgeCasesFollowIeeeLikeTheReference() {
    double nan = Double.NaN;
    double infinity = Double.POSITIVE_INFINITY;
    for (int width : new int[] {7, 600, 5000, 12000, 20000, 70000}) {
      List<double[]> cases = new ArrayList<>();
      cases.add(filled(width, 0.0));
      cases.add(filled(width, -infinity));
      cases.add(withAt(filled(width, 1.0), width / 2, nan));
      cases.add(withAt(filled(width, 1.0), width - 1, infinity));
      cases.add(withAt(ramp(width), 0, -infinity));
      cases.add(scaled(ramp(width), 1e30));
      cases.add(scaled(ramp(width), 1e-30));
      cases.add(offset(ramp(width), 1e6, 0.5 / width));
      for (Op op : Op.values()) {
        for (Normalization normalization :
            op.takesEpsilon()
                ? List.of(Normalization.of(op), Normalization.of(op).withEpsilon(0))
                : List.of(Normalization.of(op))) {
          for (ElementType type : TYPES) {
            Rows rows = Rows.fixed(type, cases.toArray(new double[0][]));
            engine.normalize(normalization, rows.batch());
            rows.assertMatchesReference(
                op, normalization, type + " " + normalization + " width " + width, new long[1]);
          }
        }
      }
    }
  }

  /** The tables the planner reads from the module are those the planner's tests read. */
  @Test
  void theModuleExportsTheTablesThePlannerTestsRead() {
    assumeTrue(KernelDescription.present(), "the build described no kernels");
    KernelModule module = KernelModule.of(CudaContext.of(0));
    for (String table : KernelTuning.TABLES) {
      assertThat(module.table(table)).as(table).isEqualTo(KernelDescription.table(table));
    }
  }

  /** Every kernel the build lists (every one the planner can pick, LaunchPlanTest) loads. */
  @Test
  void everyKernelThePlannerCanPickIsInTheModule() {
    assumeTrue(KernelDescription.present(), "the build described no kernels");
    CudaContext context = CudaContext.of(0);
    KernelModule module = KernelModule.of(context);
    int loaded = 0;
    for (String kernel : KernelDescription.kernels()) {
      if (kernel.startsWith("embednorm_cluster_")
          && context.computeCapability() < module.tuning().clusterMinComputeCapability()) {
        continue;
      }
      assertThat(module.function(kernel)).as(kernel).isNotNull();
      loaded++;
    }
    assertThat(loaded).isGreaterThan(300);
  }

  @Test
  void weightOfTheWrongLengthNamesOpRowAndLengths() {
    Rows rows = Rows.ragged(ElementType.FLOAT32, new double[][] {{1, 2}, {3, 4, 5}}, 0);
    Normalization normalization = Normalization.of(Op.RMS_NORM).withWeight(new double[] {1, 1});
    assertThatThrownBy(() -> engine.normalize(normalization, rows.batch().withFirstRowIndex(40)))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot apply rms_norm to row 41: weight has 2 elements but the row has 3");
  }

  /**
   * The warp path's grid follows the memory's peak bandwidth: one pass for every lockstep kernel
   * below the tuning's fast-memory bandwidth (an H100), the timed mix above it (an H200, where
   * 2-byte layer_norm stays resident). A driver that reported no memory clock would send every
   * device down the one-pass branch; the bandwidth must be a real one.
   */
  @Test
  void warpGridFollowsTheMemoryBandwidth() {
    CudaContext context = CudaContext.of(0);
    KernelModule module = KernelModule.of(context);
    assertThat(context.memoryBandwidth())
        .as("peak memory bandwidth")
        .isBetween(100_000_000_000L, 100_000_000_000_000L);
    // The two devices the grids were timed on must land on their own sides of the line.
    String name = CudaAvailability.get().deviceName();
    if (name.contains("H200")) {
      assertThat(context.memoryBandwidth()).as(name).isGreaterThan(4_500_000_000_000L);
    } else if (name.contains("H100 80GB HBM3")) {
      assertThat(context.memoryBandwidth())
          .as(name)
          .isBetween(3_000_000_000_000L, 3_500_000_000_000L);
    }
    long rows = 1 << 20;
    LaunchPlan plan =
        LaunchPlan.planBatch(Op.LAYER_NORM, ElementType.BFLOAT16, 128, rows, true, true, module);
    // A resident grid holds at most 2048 / 256 = 8 blocks an SM; one pass over 2^20 rows of 16
    // packs needs thousands.
    boolean onePass = plan.grid() > context.multiprocessors() * 8;
    assertThat(onePass)
        .as(
            "one pass (%s, grid %d), memory %d B/s",
            plan.kernel(), plan.grid(), context.memoryBandwidth())
        .isEqualTo(context.memoryBandwidth() < module.tuning().fastMemoryBandwidth());
  }

  @Test
  void wideRowsTakeClusterKernelsOf128BytesAThreadOnSlowerMemory() {
    CudaContext context = CudaContext.of(0);
    KernelModule module = KernelModule.of(context);
    assumeTrue(context.computeCapability() >= 90, "clusters need compute capability 9.0");
    boolean fastMemory = module.tuning().fastMemory(context.memoryBandwidth());
    for (Op op : Op.values()) {
      for (int width : new int[] {8192, 16384, 32768}) {
        LaunchPlan plan =
            LaunchPlan.planBatch(op, ElementType.FLOAT32, width, 1000, true, true, module);
        String where = String.format("%s %d: %s", op, width, plan);
        boolean wide = !fastMemory && width > 8192;
        assertThat(plan.kernel().endsWith("_b128")).as(where).isEqualTo(wide);
        // 128 bytes a thread: 16384 in one block of 512, 32768 in four of 256.
        int blocks = width == 8192 || (width == 16384 && wide) ? 1 : (wide ? 4 : 2);
        assertThat(plan.group()).as(where).isEqualTo(blocks);
        if (wide) {
          assertThat(plan.block()).as(where).isEqualTo(width == 32768 ? 256 : 512);
        }
        // Rows of 128 bytes a thread over several blocks get a cluster per row, of 64 bytes a
        // persistent grid.
        long grid = blocks == 1 || wide ? 1000L * blocks : -1;
        if (grid > 0) {
          assertThat(plan.grid()).as(where).isEqualTo(grid);
        } else {
          assertThat(plan.grid()).as(where).isLessThan(1000 * blocks);
        }
      }
      for (ElementType type : new ElementType[] {ElementType.BFLOAT16, ElementType.FLOAT16}) {
        for (int width : new int[] {16384, 32768, 65536}) {
          LaunchPlan plan = LaunchPlan.planBatch(op, type, width, 1000, true, true, module);
          String where = String.format("%s %s %d: %s", op, type, width, plan);
          boolean wide = !fastMemory && width == 32768;
          assertThat(plan.kernel().endsWith("_b128")).as(where).isEqualTo(wide);
          assertThat(plan.group()).as(where).isEqualTo(width == 16384 || wide ? 1 : 2);
        }
      }
    }
  }

  @Test
  void unalignedContiguousRowsTakeTheTilePathByTypeOpAndBandwidth() {
    CudaContext context = CudaContext.of(0);
    KernelModule module = KernelModule.of(context);
    boolean fastMemory = module.tuning().fastMemory(context.memoryBandwidth());
    for (Op op : Op.values()) {
      boolean heavy = op == Op.LAYER_NORM || op == Op.SOFTMAX || op == Op.LOG_SOFTMAX;
      for (ElementType type : new ElementType[] {ElementType.FLOAT32, ElementType.BFLOAT16}) {
        for (int width : new int[] {300, 769}) {
          boolean aligned = width % LaunchPlan.vectorWidth(type) == 0;
          String contiguous =
              LaunchPlan.planBatch(op, type, width, 1000, aligned, false, module).path();
          String ragged = LaunchPlan.planBatch(op, type, width, 1000, aligned, true, module).path();
          String where = String.format("%s %s %d", op, type, width);
          assertThat(ragged).as(where).isNotEqualTo("tile");
          boolean warpRowOnFastMemory = type.byteWidth() == 2 && heavy && width > 384;
          assertThat(contiguous)
              .as(where)
              .isEqualTo(
                  aligned ? "warp" : fastMemory && warpRowOnFastMemory ? "warp-row" : "tile");
        }
      }
    }
  }

  /** More than 2^31 elements in one launch: 64-bit indexing end to end. */
  @Test
  void moreThanTwoToTheThirtyOneElements() {
    CudaContext context = CudaContext.of(0);
    KernelModule module = KernelModule.of(context);
    int width = 1024;
    long rows = (1L << 21) + 3;
    long bytes = rows * width * Float.BYTES;
    try (DeviceBuffer input = new DeviceBuffer(bytes, "input");
        DeviceBuffer output = new DeviceBuffer(bytes, "output")) {
      cuMemsetD32(input.pointer(), Float.floatToRawIntBits(-2.5f), rows * width);
      cuMemsetD8(output.pointer(), (byte) 0xff, bytes);
      List<LaunchPlan> plans = new ArrayList<>();
      plans.add(
          LaunchPlan.planBatch(
              Op.L2_NORMALIZE, ElementType.FLOAT32, width, rows, true, true, module));
      if (context.computeCapability() >= 90) {
        // Two blocks of 32 threads per row, and more rows than clusters in one launch.
        String kernel = "embednorm_cluster_l2_normalize_f32_k2";
        int clusters = Math.max(1, module.occupancy(kernel, 32, 0) * context.multiprocessors() / 2);
        plans.add(new LaunchPlan(kernel, "cluster", 2 * clusters, 32, 0, 2, 4));
      }
      // The tile path over the same bytes as rows of 1023 (unaligned starts).
      int tileWidth = width - 1;
      long tileRows = rows * width / tileWidth;
      plans.add(
          LaunchPlan.planBatch(
              Op.L2_NORMALIZE, ElementType.FLOAT32, tileWidth, tileRows, false, false, module));
      assertThat(plans.get(plans.size() - 1).path()).isEqualTo("tile");
      for (LaunchPlan plan : plans) {
        boolean tile = plan.path().equals("tile");
        int launchWidth = tile ? tileWidth : width;
        long launchRows = tile ? tileRows : rows;
        assertThat(launchRows * launchWidth).isGreaterThan(1L << 31);
        cuMemsetD8(output.pointer(), (byte) 0xff, bytes);
        CudaLauncher.launch(
            plan,
            module,
            new CUstream(),
            Normalization.of(Op.L2_NORMALIZE),
            input.pointer(),
            output.pointer(),
            new CUdeviceptr(),
            launchRows,
            launchWidth,
            new CUdeviceptr(),
            new CUdeviceptr());
        cuCtxSynchronize();
        float expected = (float) (-1 / Math.sqrt(launchWidth));
        for (long row : new long[] {0, launchRows / 2, launchRows - 1}) {
          float[] values = new float[launchWidth];
          cuMemcpyDtoH(
              Pointer.to(values),
              output.pointer().withByteOffset(row * launchWidth * 4),
              launchWidth * 4L);
          for (float value : values) {
            assertThat(value).as("row %d, %s", row, plan).isCloseTo(expected, within(expected));
          }
        }
      }
    }
  }

  private static org.assertj.core.data.Offset<Float> within(float expected) {
    return org.assertj.core.data.Offset.offset(Math.abs(expected) * 1e-5f);
  }

  /**
   * Launches of every kernel that can run a row of {@code width}, on small grids that loop over
   * rows: the planned shapes on each path, and others (lanes, packs or blocks past the row's end).
   * Of those, the kernels the fatbin holds.
   */
  private static List<LaunchPlan> forcedPlans(
      Op op, ElementType type, int width, CudaContext context, KernelTuning tuning) {
    List<LaunchPlan> plans = new ArrayList<>();
    String name = op.sqlName() + "_" + LaunchPlan.typeName(type);
    int vector = LaunchPlan.vectorWidth(type);
    int warpBlock = tuning.warpBlock();
    for (int pack : width % vector == 0 ? new int[] {1, vector} : new int[] {1}) {
      int packsPerRow = (width + pack - 1) / pack;
      KernelTuning.Warp warp = tuning.warp(false, op, type, pack > 1, packsPerRow);
      if (warp != null) {
        int group = packsPerRow <= 32 ? nextPowerOfTwo(packsPerRow) : 32;
        int packs = packsPerRow <= 32 ? 1 : warp.packs();
        // Three packs a lane and four (lanes' last pack past the row) alike, wherever three fit;
        // six and eight alike wherever six fit.
        boolean lockstep = type.byteWidth() <= 4 && pack * type.byteWidth() == 16;
        boolean threeFit = packsPerRow > 64 && packsPerRow <= 96 && lockstep;
        boolean sixFit =
            packsPerRow > 128 && packsPerRow <= 192 && lockstep && type.byteWidth() == 2;
        int[] forced = threeFit ? new int[] {3, 4} : sixFit ? new int[] {6, 8} : new int[] {packs};
        for (int lane : forced) {
          plans.add(
              new LaunchPlan(
                  "embednorm_warp_" + name + "_p" + pack + "_c" + lane,
                  "warp",
                  3,
                  warpBlock,
                  0,
                  group,
                  pack));
        }
        if (packsPerRow >= 2 && packsPerRow <= 32) {
          // Two packs a lane over half the lanes (the planner's shape for layer_norm and
          // log_softmax from 8 packs or 64 values).
          plans.add(
              new LaunchPlan(
                  "embednorm_warp_" + name + "_p" + pack + "_c2",
                  "warp",
                  3,
                  warpBlock,
                  0,
                  nextPowerOfTwo((packsPerRow + 1) / 2),
                  pack));
        }
        if (packsPerRow <= 16) {
          // A wider group than needed: lanes past the row's end must be masked off.
          plans.add(
              new LaunchPlan(
                  "embednorm_warp_" + name + "_p" + pack + "_c1",
                  "warp",
                  2,
                  warpBlock,
                  0,
                  32,
                  pack));
        }
      }
    }
    // A warp per row with 16-byte packs and a scalar head and tail in registers, for unaligned
    // rows: the fewest packs a lane that hold the row, and eight (lanes past the row).
    int vectorPacks = (width + vector - 1) / vector;
    if (vectorPacks <= 32 * 8) {
      int fitting = nextPowerOfTwo((vectorPacks + 31) / 32);
      for (int lanePacks : fitting == 8 ? new int[] {8} : new int[] {fitting, 8}) {
        String kernel = "embednorm_warprow_" + name + "_p" + vector + "_c" + lanePacks;
        plans.add(new LaunchPlan(kernel, "warp-row", 3, warpBlock, 0, 32, vector));
      }
    }
    // The tile path for contiguous unaligned rows, on small grids that loop over runs: the
    // planner's kernel and the one of 32 values a lane (most of them past the row).
    KernelTuning.Tile fitting = tuning.tile(false, op, type, (width + 31) / 32);
    if (width % vector != 0 && fitting != null) {
      KernelTuning.Tile widest = tuning.tile(false, op, type, 32);
      for (KernelTuning.Tile tile :
          fitting.equals(widest) ? List.of(fitting) : List.of(fitting, widest)) {
        String kernel = "embednorm_tile_" + name + "_v" + tile.values() + "_r" + tile.rowsPerWarp();
        // Runs of 1 row (a head and tail at every row), 3 (warps without a row), and the
        // planner's size.
        int planned = Math.max(8, tile.bytes() / (width * type.byteWidth())) / 8 * 8;
        for (int runRows : new int[] {1, 3, planned}) {
          plans.add(
              new LaunchPlan(
                  kernel,
                  "tile",
                  3,
                  warpBlock,
                  runRows * width * type.byteWidth() + 16,
                  runRows,
                  vector));
        }
      }
    }
    // The cluster path (compute capability 9.0 and newer): aligned rows in registers over 1 to 4
    // blocks, most of them with lanes past the row's end to mask off, a cluster a row and on a
    // grid of 3 clusters that loop over rows.
    if (width % vector == 0
        && type != ElementType.FLOAT64
        && context.computeCapability() >= tuning.clusterMinComputeCapability()) {
      for (int bytes : new int[] {64, 128}) {
        int threads = (width * type.byteWidth() + bytes - 1) / bytes;
        for (int cluster = 1; cluster <= 4; cluster *= 2) {
          int block = Math.max(32, nextPowerOfTwo((threads + cluster - 1) / cluster));
          if (block <= (bytes == 64 ? 1024 : 512)) {
            String kernel =
                "embednorm_cluster_" + name + "_k" + cluster + (bytes == 64 ? "" : "_b128");
            for (int clusters : new int[] {37, 3}) {
              plans.add(
                  new LaunchPlan(kernel, "cluster", clusters * cluster, block, 0, cluster, vector));
            }
          }
        }
      }
    }
    // The block path takes 16-byte packs at any width (scalar head and tail).
    int computeBytes = type == ElementType.FLOAT64 ? 8 : 4;
    for (String kernel :
        width % vector == 0
            ? List.of("_p" + vector, "_p" + vector + "_aligned")
            : List.of("_p" + vector)) {
      for (int block : new int[] {64, 1024}) {
        plans.add(
            new LaunchPlan(
                "embednorm_block_" + name + kernel + "_cached",
                "block-cached",
                5,
                block,
                (width + vector) * computeBytes,
                1,
                vector));
        plans.add(
            new LaunchPlan(
                "embednorm_block_" + name + kernel + "_uncached",
                "block-uncached",
                5,
                block,
                0,
                1,
                vector));
      }
    }
    Set<String> built = KernelDescription.kernels();
    plans.removeIf(plan -> !built.contains(plan.kernel()));
    return plans;
  }

  private static int nextPowerOfTwo(int value) {
    return value <= 1 ? 1 : Integer.highestOneBit(value - 1) << 1;
  }

  /**
   * Copies {@code rows} to the device {@code shift} elements past an allocation's start, launches
   * {@code plan} over them with the output poisoned, and copies the result back into the rows.
   */
  private static void launchOnDevice(
      CudaContext context,
      KernelModule module,
      LaunchPlan plan,
      Normalization normalization,
      Rows rows,
      int shift) {
    context.makeCurrent();
    long padding = (long) shift * rows.type.byteWidth();
    try (DeviceBuffer input = new DeviceBuffer(rows.bytes() + padding, "input");
        DeviceBuffer output = new DeviceBuffer(rows.bytes() + padding + GUARD_BYTES, "output")) {
      launchOnDevice(module, plan, normalization, rows, shift, input, output);
    }
  }

  /**
   * As above, in device buffers the caller allocated (of the sizes above) and may use for several
   * launches: each launch copies the input again and poisons the whole output first.
   */
  private static void launchOnDevice(
      KernelModule module,
      LaunchPlan plan,
      Normalization normalization,
      Rows rows,
      int shift,
      DeviceBuffer input,
      DeviceBuffer output) {
    ElementType type = rows.type;
    long bytes = rows.bytes();
    long padding = (long) shift * type.byteWidth();
    int width = rows.values[0].length;
    try (DeviceBuffer weight = parameter(normalization.weight(), type);
        DeviceBuffer bias = parameter(normalization.bias(), type)) {
      CUdeviceptr in = input.pointer().withByteOffset(padding);
      CUdeviceptr out = output.pointer().withByteOffset(padding);
      cuMemcpyHtoD(in, Pointer.to(rows.input.duplicate().clear()), bytes);
      cuMemsetD8(output.pointer(), (byte) 0xff, bytes + padding + GUARD_BYTES);
      CudaLauncher.launch(
          plan,
          module,
          new CUstream(),
          normalization,
          in,
          out,
          new CUdeviceptr(),
          rows.values.length,
          width,
          weight == null ? new CUdeviceptr() : weight.pointer(),
          bias == null ? new CUdeviceptr() : bias.pointer());
      cuCtxSynchronize();
      cuMemcpyDtoH(Pointer.to(rows.output.duplicate().clear()), out, bytes);
      byte[] before = new byte[(int) padding];
      byte[] after = new byte[GUARD_BYTES];
      if (padding > 0) {
        cuMemcpyDtoH(Pointer.to(before), output.pointer(), padding);
      }
      cuMemcpyDtoH(Pointer.to(after), out.withByteOffset(bytes), GUARD_BYTES);
      for (byte[] guard : List.of(before, after)) {
        int poisoned = 0;
        while (poisoned < guard.length && guard[poisoned] == (byte) 0xff) {
          poisoned++;
        }
        assertThat(poisoned)
            .as(
                "%s wrote a byte outside the rows (%s them): poisoned bytes of %d",
                plan, guard == before ? "before" : "after", guard.length)
            .isEqualTo(guard.length);
      }
    }
  }

  private static DeviceBuffer parameter(double[] values, ElementType type) {
    if (values == null) {
      return null;
    }
    long bytes = (long) values.length * (type == ElementType.FLOAT64 ? 8 : 4);
    DeviceBuffer buffer = new DeviceBuffer(bytes, "parameter");
    cuMemcpyHtoD(buffer.pointer(), CudaLauncher.hostParameter(values, type), bytes);
    return buffer;
  }

  private static double[][] randomRows(
      Random random, RowDistribution distribution, int rows, int width) {
    double[][] values = new double[rows][];
    for (int row = 0; row < rows; row++) {
      values[row] = distribution.doubles(random, width);
    }
    return values;
  }

  private static double[] filled(int width, double value) {
    double[] row = new double[width];
    Arrays.fill(row, value);
    return row;
  }

  private static double[] ramp(int width) {
    double[] row = new double[width];
    for (int i = 0; i < width; i++) {
      row[i] = (i % 13) - 6.5 + i * 1e-3;
    }
    return row;
  }

  private static double[] withAt(double[] row, int index, double value) {
    row[index] = value;
    return row;
  }

  private static double[] scaled(double[] row, double factor) {
    for (int i = 0; i < row.length; i++) {
      row[i] *= factor;
    }
    return row;
  }

  private static double[] offset(double[] row, double mean, double step) {
    for (int i = 0; i < row.length; i++) {
      row[i] = mean + (i % 2 == 0 ? 1 : -1) * step * i;
    }
    return row;
  }

  /**
   * Rows encoded in one element type, in direct little-endian buffers: the input, and an output
   * poisoned with NaN bytes (elements between ragged rows must stay poisoned).
   */
  private static final class Rows {
    private final ElementType type;
    private final double[][] values;
    private final long[] starts;
    private final int elementCount;
    private final ByteBuffer input;
    private final ByteBuffer output;
    private final boolean ragged;

    private Rows(ElementType type, double[][] values, int gap, boolean ragged) {
      // elementCount is where the last row ends.
      this.type = type;
      this.values = values;
      this.ragged = ragged;
      this.starts = new long[values.length + 1];
      long position = gap;
      for (int row = 0; row < values.length; row++) {
        starts[row] = position;
        position += values[row].length;
      }
      starts[values.length] = position;
      this.elementCount = Math.toIntExact(position);
      this.input = ByteBuffer.allocateDirect(elementCount * type.byteWidth() + 8);
      this.output = ByteBuffer.allocateDirect(elementCount * type.byteWidth() + 8);
      input.order(ByteOrder.LITTLE_ENDIAN);
      output.order(ByteOrder.LITTLE_ENDIAN);
      poisonOutput();
      // Rows in parallel: they are disjoint, and the 16-bit rounding search is slow.
      IntStream.range(0, values.length)
          .parallel()
          .forEach(
              row -> {
                for (int i = 0; i < values[row].length; i++) {
                  values[row][i] = store(input, (int) starts[row] + i, values[row][i]);
                }
              });
    }

    /** The same rows and input bytes, with an output of its own, poisoned. */
    private Rows(Rows rows) {
      this.type = rows.type;
      this.values = rows.values;
      this.ragged = rows.ragged;
      this.starts = rows.starts;
      this.elementCount = rows.elementCount;
      this.input = ByteBuffer.allocateDirect(rows.input.capacity());
      this.output = ByteBuffer.allocateDirect(rows.output.capacity());
      input.order(ByteOrder.LITTLE_ENDIAN);
      output.order(ByteOrder.LITTLE_ENDIAN);
      input.put(0, rows.input, 0, rows.input.capacity());
      poisonOutput();
    }

    static Rows fixed(ElementType type, double[][] values) {
      return new Rows(type, values, 0, false);
    }

    /** Rows one after another from element {@code gap} (odd starts when {@code gap} is odd). */
    static Rows ragged(ElementType type, double[][] values, int gap) {
      return new Rows(type, values, gap, true);
    }

    /** The bytes from the first element to the end of the last row. */
    long bytes() {
      return (long) elementCount * type.byteWidth();
    }

    /** A copy of these rows' input with a fresh poisoned output, for a second engine. */
    Rows copy() {
      return new Rows(this);
    }

    /** Fills the whole output with NaN bytes again, as a fresh {@code Rows} has it. */
    void poisonOutput() {
      byte[] poison = new byte[output.capacity()];
      Arrays.fill(poison, (byte) 0xff);
      output.put(0, poison);
    }

    RowBatch batch() {
      if (!ragged) {
        return RowBatch.fixedWidth(type, values.length, values[0].length, input, output);
      }
      int[] offsets = new int[values.length + 1];
      for (int row = 0; row < values.length; row++) {
        offsets[row] = (int) starts[row];
      }
      offsets[values.length] = (int) starts[values.length];
      return RowBatch.ragged(type, IntBuffer.wrap(offsets), input, output);
    }

    /** Writes {@code value} rounded to this type; returns the value the type holds. */
    private double store(ByteBuffer buffer, int index, double value) {
      switch (type) {
        case FLOAT64:
          buffer.putDouble(index * 8, value);
          return value;
        case FLOAT32:
          buffer.putFloat(index * 4, (float) value);
          return (float) value;
        default:
          short bits = narrow().round(value);
          buffer.putShort(index * 2, bits);
          return narrow().value(bits);
      }
    }

    private NarrowReference narrow() {
      return type == ElementType.FLOAT16 ? NarrowReference.FLOAT16 : NarrowReference.BFLOAT16;
    }

    /**
     * The float64 reference of these rows under {@code normalization}, rows in parallel, for every
     * output that runs them with it: the reference and the 16-bit rounding search are most of the
     * GPU suite's time.
     */
    Expected expected(Op op, Normalization normalization) {
      boolean wide = type == ElementType.FLOAT64;
      double[] weight =
          wide ? normalization.weight() : ReferenceNormalization.widen(normalization.floatWeight());
      double[] bias =
          wide ? normalization.bias() : ReferenceNormalization.widen(normalization.floatBias());
      double[][] reference = new double[values.length][];
      short[][] rounded = new short[values.length][];
      IntStream.range(0, values.length)
          .parallel()
          .forEach(
              row -> {
                if (values[row].length == 0) {
                  reference[row] = new double[0];
                  rounded[row] = new short[0];
                  return;
                }
                reference[row] =
                    ReferenceNormalization.apply(
                        op, values[row], normalization.epsilon(), weight, bias);
                if (type.byteWidth() == 2) {
                  rounded[row] = NarrowComparison.rounded(narrow(), reference[row]);
                }
              });
      return new Expected(values, reference, rounded);
    }

    void assertMatchesReference(
        Op op, Normalization normalization, String where, long[] allowances) {
      assertMatches(expected(op, normalization), where, allowances);
    }

    /** Checks every row against {@code expected}, in parallel; the first failing row reported. */
    void assertMatches(Expected expected, String where, long[] allowances) {
      if (expected.values() != values) {
        throw new IllegalArgumentException("the reference is of other rows");
      }
      long[][] rowAllowances = new long[values.length][1];
      String failure =
          IntStream.range(0, values.length)
              .parallel()
              .mapToObj(
                  row -> {
                    String violation = rowViolation(expected, row, rowAllowances[row]);
                    return violation == null ? null : where + ", row " + row + ": " + violation;
                  })
              .filter(Objects::nonNull)
              .findFirst()
              .orElse(null);
      for (long[] counted : rowAllowances) {
        allowances[0] += counted[0];
      }
      assertThat(failure).isNull();
    }

    private String rowViolation(Expected expected, int row, long[] allowances) {
      int width = values[row].length;
      if (width == 0) {
        return null;
      }
      boolean wide = type == ElementType.FLOAT64;
      double[] reference = expected.reference()[row];
      int start = (int) starts[row];
      if (type == ElementType.FLOAT32 || type == ElementType.FLOAT64) {
        double[] actual = new double[width];
        for (int i = 0; i < width; i++) {
          actual[i] = wide ? output.getDouble((start + i) * 8) : output.getFloat((start + i) * 4);
        }
        return wide
            ? RowComparison.firstViolation(reference, actual)
            : RowComparison.firstViolation(
                reference, actual, RowComparison.FLOAT32_RELATIVE, RowComparison.FLOAT32_ABSOLUTE);
      }
      return NarrowComparison.firstViolation(
          narrow(), reference, expected.rounded()[row], output, start, allowances);
    }

    /** The elements before the first row and the bytes after the last are still poisoned. */
    void assertGapsUntouched() {
      for (int i = 0; i < starts[0] * type.byteWidth(); i++) {
        assertThat(output.get(i)).as("byte %d before the first row", i).isEqualTo((byte) 0xff);
      }
      for (int i = elementCount * type.byteWidth(); i < output.capacity(); i++) {
        assertThat(output.get(i)).as("byte %d after the last row", i).isEqualTo((byte) 0xff);
      }
    }
  }

  /**
   * The float64 reference of some rows' values under one normalization, by row, and for 16-bit rows
   * the reference correctly rounded to their type (null otherwise).
   */
  private record Expected(double[][] values, double[][] reference, short[][] rounded) {}
}

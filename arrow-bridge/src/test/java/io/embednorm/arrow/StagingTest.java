package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.GpuFaults;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The staging of ordinary (not pinned) Arrow memory through pinned slots, on CI: a test GPU that
 * copies host memory on lane threads and completes chunks out of step ({@link HostCopyGpuEngine}),
 * counted host memory standing for pinned memory ({@link CountingHostMemory}), a real allocator (a
 * leak fails its close), and slots of an odd size smaller than a chunk. Every output is the CPU
 * engine's bit for bit with each element's lowest bit flipped (the test GPU's mark); every slot
 * goes back to the pool and every "pinned" byte is freed when the normalizer closes.
 */
class StagingTest {
  private static final long SEED = TestSeeds.seeds()[TestSeeds.seeds().length - 1];

  /** Slots of an odd size: rows never divide them, and 64 KiB chunks are cut to them. */
  private static final long SLOT_BYTES = (24 << 10) + 8;

  private static final long CHUNK_BYTES = 64 << 10;
  private static final int WIDTH = 37;

  private BufferAllocator allocator;
  private CountingHostMemory memory;
  private HostCopyGpuEngine gpu;
  private StagingPool pool;
  private ArrowNormalizer staged;
  private ArrowNormalizer cpu;

  @BeforeEach
  void open() {
    System.out.println("StagingTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
    GpuFaults.reset();
    allocator = new RootAllocator();
    cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
  }

  private void openStaged(int poolSlots, int maximumDelayMicros) {
    memory = new CountingHostMemory();
    gpu = new HostCopyGpuEngine(SEED, maximumDelayMicros);
    pool = new StagingPool(memory, SLOT_BYTES, poolSlots * 2 * SLOT_BYTES);
    staged =
        new ArrowNormalizer(
            allocator,
            DeviceEngines.ofGpus(List.<NormalizationEngine>of(gpu), "test", List.of(pool)),
            ArrowNormalizer.DEFAULT_CHUNK_BYTES,
            CHUNK_BYTES);
  }

  @AfterEach
  void close() {
    System.clearProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name());
    GpuFaults.reset();
    if (staged != null) {
      assertThat(pool.slotsInUse()).as("slots not given back").isZero();
      staged.close();
      assertThat(pool.outstandingBytes()).as("slot bytes after close").isZero();
      assertThat(memory.allocatedBytes()).as("pinned bytes after close").isZero();
    }
    cpu.close();
    allocator.close(); // throws on a leak, failing the test
  }

  static List<Arguments> opsTypesAndLayouts() {
    List<Arguments> cases = new ArrayList<>();
    for (Op op : Op.values()) {
      for (ElementType type :
          new ElementType[] {ElementType.FLOAT32, ElementType.FLOAT16, ElementType.FLOAT64}) {
        for (Layout layout : Layout.values()) {
          cases.add(Arguments.of(op, type, layout));
        }
      }
    }
    return cases;
  }

  @ParameterizedTest(name = "{0} on {2} of {1}")
  @MethodSource("opsTypesAndLayouts")
  void stagedRowsAreTheGpusBitForBit(Op op, ElementType type, Layout layout) {
    openStaged(16, 300);
    long seed = TestSeeds.mix(SEED, op.ordinal(), type.ordinal(), layout.ordinal());
    Double[][] rows = rows(new Random(seed), layout, type, 700);
    Normalization step = Normalization.of(op);
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (FieldVector input = TestColumns.build(allocator, "x", layout, type, rows);
        FieldVector onCpu = cpu.normalize(input, step);
        FieldVector onGpu = staged.normalize(input, List.of(step), metrics)) {
      assertSameAsGpu(onGpu, onCpu, "seed " + seed);
      long bytes = elementBytes(input);
      assertThat(metrics.cpuFallbackCalls()).as(metrics.toString()).isZero();
      assertThat(metrics.stagedBytes()).as(metrics.toString()).isEqualTo(2 * bytes);
      assertThat(metrics.pinnedBytes()).as(metrics.toString()).isZero();
      assertThat(metrics.chunks())
          .as("chunks no larger than a slot: %s", metrics)
          .isGreaterThanOrEqualTo((bytes + SLOT_BYTES - 1) / SLOT_BYTES);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void rowsWiderThanASlotGoInSlotsOfTheirOwn(Layout layout) {
    openStaged(2, 300);
    int wide = (int) (SLOT_BYTES / Float.BYTES) + 101;
    Random random = new Random(TestSeeds.mix(SEED, layout.ordinal()));
    Double[][] rows =
        TestColumns.gaussianRows(
            random,
            ElementType.FLOAT32,
            12,
            row -> layout == Layout.FIXED_SIZE_LIST || row % 3 == 0 ? wide : random.nextInt(90));
    rows[4] = null;
    Normalization step = Normalization.of(Op.LAYER_NORM);
    try (FieldVector input = TestColumns.build(allocator, "x", layout, ElementType.FLOAT32, rows);
        FieldVector onCpu = cpu.normalize(input, step);
        FieldVector onGpu = staged.normalize(input, List.of(step), new NormalizationMetrics())) {
      assertSameAsGpu(onGpu, onCpu, "seed " + SEED);
    }
    assertThat(pool.outstandingBytes())
        .as("wide slots are freed after their chunk")
        .isLessThanOrEqualTo(2 * 2 * (SLOT_BYTES + 16 + 4096));
  }

  static Layout[] layouts() {
    return Layout.values();
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void eightThreadsShareThreeSlots() throws Exception {
    openStaged(3, 200);
    ExecutorService threads = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> callers = new ArrayList<>();
      for (int thread = 0; thread < 8; thread++) {
        long seed = TestSeeds.mix(SEED, thread);
        callers.add(threads.submit(() -> callMany(seed, 12)));
      }
      for (Future<?> caller : callers) {
        caller.get();
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(pool.outstandingBytes()).isLessThanOrEqualTo(3 * 2 * (SLOT_BYTES + 16 + 4096));
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aThousandSmallBatchesLeaveNothingBehind() {
    openStaged(16, 0);
    Random random = new Random(SEED);
    Normalization step = Normalization.of(Op.RMS_NORM);
    for (int batch = 0; batch < 1000; batch++) {
      Double[][] rows = TestColumns.gaussianRows(random, ElementType.FLOAT32, 9, row -> 16);
      rows[batch % 9] = null;
      try (FieldVector input =
              TestColumns.build(allocator, "x", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, rows);
          FieldVector onGpu = staged.normalize(input, List.of(step), new NormalizationMetrics())) {
        if (batch % 100 == 0) {
          try (FieldVector onCpu = cpu.normalize(input, step)) {
            assertSameAsGpu(onGpu, onCpu, "batch " + batch + ", seed " + SEED);
          }
        }
      }
      assertThat(pool.slotsInUse()).as("slots in use after batch %d", batch).isZero();
    }
    assertThat(allocator.getAllocatedMemory()).as("Arrow bytes left").isZero();
    assertThat(pool.outstandingBytes()).as("one slot, kept for the next call").isPositive();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void aGpuFaultAtEnqueueMidCallGivesTheCpuEnginesBitsAndEverySlotBack(Layout layout) {
    openStaged(16, 300);
    System.setProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name(), "4");
    assertFallsBackWhole(layout);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void aGpuFaultOnALaneMidCallGivesTheCpuEnginesBitsAndEverySlotBack(Layout layout) {
    openStaged(16, 300);
    gpu.failChunkAsync(4);
    assertFallsBackWhole(layout);
  }

  @Test
  void aRowThatDoesNotFitTheWeightFailsTheCallAndEverySlotGoesBack() {
    openStaged(16, 300);
    Random random = new Random(SEED);
    Double[][] rows = TestColumns.gaussianRows(random, ElementType.FLOAT32, 3000, row -> WIDTH);
    rows[2500] = new Double[WIDTH + 1];
    java.util.Arrays.fill(rows[2500], 1.0);
    double[] weight = new double[WIDTH];
    java.util.Arrays.fill(weight, 2.0);
    Normalization step = Normalization.of(Op.RMS_NORM).withWeight(weight);
    try (FieldVector input =
        TestColumns.build(allocator, "x", Layout.LIST, ElementType.FLOAT32, rows)) {
      assertThatThrownBy(() -> staged.normalize(input, List.of(step), new NormalizationMetrics()))
          .isInstanceOf(EmbedNormException.class)
          .hasMessageContaining("row 2500");
    }
  }

  /**
   * Pinned memory goes to the device in place, side by side: a pinned input with an ordinary output
   * stages only the output, and the converse; both pinned take no slot.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void pinnedSidesGoInPlaceAndOnlyOrdinarySidesAreStaged(Layout layout) {
    openStaged(16, 300);
    Random random = new Random(TestSeeds.mix(SEED, layout.ordinal()));
    Double[][] rows = rows(random, layout, ElementType.FLOAT32, 1500);
    Normalization step = Normalization.of(Op.LOG_SOFTMAX);
    try (BufferAllocator pinned = CountingPinnedAllocator.over(memory);
        ArrowNormalizer onPinned = normalizerOn(pinned, memory);
        FieldVector ordinaryInput =
            TestColumns.build(allocator, "x", layout, ElementType.FLOAT32, rows);
        FieldVector pinnedInput =
            TestColumns.build(pinned, "x", layout, ElementType.FLOAT32, rows);
        FieldVector onCpu = cpu.normalize(ordinaryInput, step)) {
      long bytes = elementBytes(ordinaryInput);
      NormalizationMetrics both = new NormalizationMetrics();
      NormalizationMetrics outputStaged = new NormalizationMetrics();
      NormalizationMetrics inputStaged = new NormalizationMetrics();
      try (FieldVector a = onPinned.normalize(pinnedInput, List.of(step), both);
          FieldVector b = staged.normalize(pinnedInput, List.of(step), outputStaged);
          FieldVector c = onPinned.normalize(ordinaryInput, List.of(step), inputStaged)) {
        assertSameAsGpu(a, onCpu, "both pinned, seed " + SEED);
        assertSameAsGpu(b, onCpu, "output staged, seed " + SEED);
        assertSameAsGpu(c, onCpu, "input staged, seed " + SEED);
      }
      assertThat(both.pinnedBytes()).as(both.toString()).isEqualTo(2 * bytes);
      assertThat(both.stagedBytes()).as(both.toString()).isZero();
      assertThat(outputStaged.pinnedBytes()).as(outputStaged.toString()).isEqualTo(bytes);
      assertThat(outputStaged.stagedBytes()).as(outputStaged.toString()).isEqualTo(bytes);
      assertThat(inputStaged.pinnedBytes()).as(inputStaged.toString()).isEqualTo(bytes);
      assertThat(inputStaged.stagedBytes()).as(inputStaged.toString()).isEqualTo(bytes);
    }
  }

  /** A second normalizer with an engine and a pool of its own over {@code memory}. */
  private static ArrowNormalizer normalizerOn(
      BufferAllocator allocator, CountingHostMemory memory) {
    return new ArrowNormalizer(
        allocator,
        DeviceEngines.ofGpus(
            List.<NormalizationEngine>of(new HostCopyGpuEngine(SEED, 300)),
            "test",
            List.of(new StagingPool(memory, SLOT_BYTES, 4 * 2 * SLOT_BYTES))),
        ArrowNormalizer.DEFAULT_CHUNK_BYTES,
        CHUNK_BYTES);
  }

  /** Fails a chunk of a call of several: the output is the CPU engine's, bit for bit. */
  private void assertFallsBackWhole(Layout layout) {
    Random random = new Random(TestSeeds.mix(SEED, layout.ordinal()));
    Double[][] rows = rows(random, layout, ElementType.FLOAT32, 3000);
    Normalization step = Normalization.of(Op.SOFTMAX);
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (FieldVector input = TestColumns.build(allocator, "x", layout, ElementType.FLOAT32, rows);
        FieldVector onCpu = cpu.normalize(input, step);
        FieldVector onGpu = staged.normalize(input, List.of(step), metrics)) {
      assertThat(metrics.cpuFallbackCalls()).as(metrics.toString()).isEqualTo(1);
      assertThat(ElementBits.elementBytes(onGpu))
          .as("the CPU engine's bits, no row of the GPU's (seed %d)", SEED)
          .isEqualTo(ElementBits.elementBytes(onCpu));
      assertThat(ElementBits.nullRows(onGpu)).isEqualTo(ElementBits.nullRows(onCpu));
    }
    assertThat(pool.slotsInUse()).as("slots in use after the failed call").isZero();
  }

  /** Normalizes {@code calls} columns of random sizes, comparing each with the CPU engine's. */
  private Void callMany(long seed, int calls) {
    Random random = new Random(seed);
    Normalization step = Normalization.of(Op.L2_NORMALIZE);
    for (int call = 0; call < calls; call++) {
      Layout layout = Layout.values()[call % 2];
      Double[][] rows = rows(random, layout, ElementType.FLOAT32, 50 + random.nextInt(900));
      try (FieldVector input =
              TestColumns.build(allocator, "x", layout, ElementType.FLOAT32, rows);
          FieldVector onCpu = cpu.normalize(input, step);
          FieldVector onGpu = staged.normalize(input, List.of(step), new NormalizationMetrics())) {
        assertSameAsGpu(onGpu, onCpu, "call " + call + ", seed " + seed);
      }
    }
    return null;
  }

  private static void assertSameAsGpu(FieldVector onGpu, FieldVector onCpu, String context) {
    assertThat(ElementBits.elementBytes(onGpu))
        .as("%s: the CPU engine's bits, lowest flipped in valid rows", context)
        .isEqualTo(ElementBits.lowestBitsFlipped(onCpu));
    assertThat(ElementBits.nullRows(onGpu)).as(context).isEqualTo(ElementBits.nullRows(onCpu));
  }

  private static long elementBytes(FieldVector input) {
    ListColumn column = ListColumn.of(input);
    return column.boundary(column.rows()) * column.type().byteWidth();
  }

  /** Gaussian rows with a null row and a row holding a null element; ragged in a list. */
  private static Double[][] rows(Random random, Layout layout, ElementType type, int count) {
    Double[][] rows =
        TestColumns.gaussianRows(
            random,
            type,
            count,
            row -> layout == Layout.LIST && row % 3 == 2 ? random.nextInt(2 * WIDTH) : WIDTH);
    rows[7] = null;
    rows[10][3] = null;
    return rows;
  }
}

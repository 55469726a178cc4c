package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Auto's rule in the Arrow API ({@link ArrowNormalizer#deviceFor}): on a GPU normalizer built under
 * {@code auto}, calls on fewer bytes than the limit run on the CPU engine, larger ones on the GPU
 * (here a host-copy stand-in whose chunks the metrics count); calls on memory that is not pinned
 * run on a CPU engine of enough threads, or below the staged limit; a normalizer whose GPU was
 * asked for sends every call to the GPU. Results are checked against the float64 reference either
 * way.
 */
class AutoDeviceTest {
  private static final long SEED = TestSeeds.seeds()[0];
  private static final int WIDTH = 128;
  private static final long LIMIT_BYTES = 64L << 10;
  private static final Normalization STEP = Normalization.of(Op.RMS_NORM);

  private RootAllocator allocator;
  private CountingHostMemory memory;

  @BeforeEach
  void open() {
    System.out.println("AutoDeviceTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
    allocator = new RootAllocator();
    memory = new CountingHostMemory();
  }

  @AfterEach
  void close() {
    assertThat(memory.allocatedBytes()).as("pinned bytes after close").isZero();
    allocator.close(); // throws on a leak, failing the test
  }

  @Test
  void autoRunsCallsBelowTheLimitOnTheCpuAndTheOthersOnTheGpu() {
    try (ArrowNormalizer auto =
        normalizer(new AutoCallRule(LIMIT_BYTES, 0, Integer.MAX_VALUE, 1))) {
      Random random = new Random(SEED);
      int smallRows = (int) (LIMIT_BYTES / (WIDTH * Float.BYTES)) - 1;
      int largeRows = smallRows + 1;
      NormalizationMetrics small = normalizeAndCheck(auto, random, smallRows, Device.CPU);
      assertThat(small.smallCallsOnCpu()).as(small.toString()).isEqualTo(1);
      assertThat(small.chunks()).as(small.toString()).isZero();
      NormalizationMetrics large = normalizeAndCheck(auto, random, largeRows, Device.GPU);
      assertThat(large.smallCallsOnCpu()).as(large.toString()).isZero();
      assertThat(large.chunks()).as(large.toString()).isPositive();
    }
  }

  @Test
  void callsOnMemoryThatIsNotPinnedRunOnTheCpuBelowTheStagedLimit() {
    long stagedLimit = 4 * LIMIT_BYTES;
    int belowRows = (int) (stagedLimit / (WIDTH * Float.BYTES)) - 1;
    try (ArrowNormalizer auto =
        normalizer(new AutoCallRule(LIMIT_BYTES, stagedLimit, Integer.MAX_VALUE, 4))) {
      Random random = new Random(SEED + 3);
      NormalizationMetrics below = normalizeAndCheck(auto, random, belowRows, Device.CPU);
      assertThat(below.stagedCallsOnCpu()).as(below.toString()).isEqualTo(1);
      assertThat(below.smallCallsOnCpu()).as(below.toString()).isZero();
      assertThat(below.chunks()).as(below.toString()).isZero();
      NormalizationMetrics above = normalizeAndCheck(auto, random, belowRows + 1, Device.GPU);
      assertThat(above.stagedCallsOnCpu()).as(above.toString()).isZero();
      assertThat(above.stagedBytes()).as(above.toString()).isPositive();
    }
  }

  @Test
  void aCpuEngineOfEnoughThreadsTakesEveryCallOnMemoryThatIsNotPinned() {
    int rows = (int) (4 * LIMIT_BYTES / (WIDTH * Float.BYTES));
    Random random = new Random(SEED + 4);
    try (ArrowNormalizer manyThreads = normalizer(new AutoCallRule(LIMIT_BYTES, 0, 16, 16))) {
      NormalizationMetrics metrics = normalizeAndCheck(manyThreads, random, rows, Device.CPU);
      assertThat(metrics.stagedCallsOnCpu()).as(metrics.toString()).isEqualTo(1);
      assertThat(metrics.chunks()).as(metrics.toString()).isZero();
    }
    try (ArrowNormalizer fewThreads = normalizer(new AutoCallRule(LIMIT_BYTES, 0, 16, 15))) {
      NormalizationMetrics metrics = normalizeAndCheck(fewThreads, random, rows, Device.GPU);
      assertThat(metrics.stagedCallsOnCpu()).as(metrics.toString()).isZero();
      assertThat(metrics.chunks()).as(metrics.toString()).isPositive();
    }
  }

  @Test
  void pinnedMemoryGoesToTheGpuWhateverTheCpuEngine() {
    int rows = (int) (4 * LIMIT_BYTES / (WIDTH * Float.BYTES));
    Random random = new Random(SEED + 5);
    Double[][] input = TestColumns.gaussianRows(random, ElementType.FLOAT32, rows, row -> WIDTH);
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (BufferAllocator pinned = CountingPinnedAllocator.over(memory);
        ArrowNormalizer auto = normalizer(new AutoCallRule(LIMIT_BYTES, Long.MAX_VALUE, 1, 64));
        FieldVector batch =
            TestColumns.build(
                pinned, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input);
        FieldVector output = auto.normalize(batch, List.of(STEP), metrics)) {
      assertThat(auto.deviceFor(batch)).isEqualTo(Device.GPU);
      assertThat(metrics.stagedCallsOnCpu()).as(metrics.toString()).isZero();
      assertThat(metrics.chunks()).as(metrics.toString()).isPositive();
      ReferenceCheck.assertNormalized(
          STEP, ElementType.FLOAT32, input, TestColumns.read(output), "pinned, seed " + SEED);
    }
  }

  @Test
  void aGpuAskedForTakesEveryCall() {
    try (ArrowNormalizer requested = normalizer(AutoCallRule.NONE)) {
      NormalizationMetrics metrics =
          normalizeAndCheck(requested, new Random(SEED + 1), 3, Device.GPU);
      assertThat(metrics.smallCallsOnCpu()).isZero();
      assertThat(metrics.chunks()).isPositive();
    }
  }

  @Test
  void theBuilderAppliesTheRuleOnlyUnderAuto() {
    try (ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
        FieldVector batch = batch(new Random(SEED + 2), 3)) {
      assertThat(cpu.deviceFor(batch)).isEqualTo(Device.CPU);
    }
  }

  /**
   * A GPU normalizer on the host-copy stand-in, sending the calls {@code rule} picks to the CPU.
   */
  private ArrowNormalizer normalizer(AutoCallRule rule) {
    return new ArrowNormalizer(
        allocator,
        DeviceEngines.ofGpus(
            List.<NormalizationEngine>of(new HostCopyGpuEngine(SEED, 50)),
            "auto chose the test engine",
            List.of(new StagingPool(memory, 1L << 20, 8L << 20))),
        ArrowNormalizer.DEFAULT_CHUNK_BYTES,
        1L << 20,
        rule);
  }

  private NormalizationMetrics normalizeAndCheck(
      ArrowNormalizer normalizer, Random random, int rows, Device expected) {
    Double[][] input = TestColumns.gaussianRows(random, ElementType.FLOAT32, rows, row -> WIDTH);
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (FieldVector batch =
            TestColumns.build(
                allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input);
        FieldVector output = normalizer.normalize(batch, List.of(STEP), metrics)) {
      assertThat(normalizer.deviceFor(batch)).as("%d rows", rows).isEqualTo(expected);
      ReferenceCheck.assertNormalized(
          STEP, ElementType.FLOAT32, input, TestColumns.read(output), rows + " rows, seed " + SEED);
    }
    return metrics;
  }

  private FieldVector batch(Random random, int rows) {
    return TestColumns.build(
        allocator,
        "embedding",
        Layout.FIXED_SIZE_LIST,
        ElementType.FLOAT32,
        TestColumns.gaussianRows(random, ElementType.FLOAT32, rows, row -> WIDTH));
  }
}

package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.HostMemory;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.util.TransferPair;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pinned, chunked, overlapped GPU pipeline behind {@link ArrowNormalizer}: results against the
 * float64 reference, bit for bit the same whatever the chunk size, across sliced vectors, null
 * rows, ragged lists and float16; chains; eight threads at once; nothing leaked after 1,000
 * batches. Device outputs are poisoned with NaN bytes first. Skipped where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class GpuPipelineGpuTest {
  /**
   * Checked before the class's set-up, so that without a GPU each test is reported as skipped
   * rather than the class as zero tests.
   */
  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  private static final ElementType[] TYPES = {
    ElementType.FLOAT32, ElementType.FLOAT16, ElementType.FLOAT64
  };

  private BufferAllocator allocator;

  @BeforeAll
  static void requireGpu() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    System.setProperty(InternalSwitches.GPU_POISON_OUTPUTS.name(), "true");
    System.out.println("GpuPipelineGpuTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
  }

  @BeforeEach
  void openAllocator() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void closeAllocator() {
    allocator.close();
  }

  private ArrowNormalizer gpu(long chunkBytes) {
    return ArrowNormalizer.builder(allocator)
        .device(DeviceChoice.GPU)
        .gpuChunkBytes(chunkBytes)
        .build();
  }

  static Stream<Arguments> layoutsTypesAndWidths() {
    List<Arguments> cases = new ArrayList<>();
    for (Layout layout : Layout.values()) {
      for (ElementType type : TYPES) {
        for (int width : new int[] {1, 7, 32, 768, 769, 4097}) {
          cases.add(Arguments.of(layout, type, width));
        }
      }
    }
    return cases.stream();
  }

  /**
   * Chunks of 4 KiB cut rows into many runs (a row wider than a chunk goes alone); the results
   * match the reference and are bit for bit those of one large chunk.
   */
  @ParameterizedTest(name = "{0} of {1}, width {2}")
  @MethodSource("layoutsTypesAndWidths")
  void chunkBoundariesChangeNoBit(Layout layout, ElementType type, int width) {
    long seed = SEED ^ ("" + layout + type + width).hashCode();
    Random random = new Random(seed);
    int rows = Math.max(3, Math.min(400, 400_000 / width));
    Double[][] input =
        TestColumns.gaussianRows(
            random,
            type,
            rows,
            row -> layout == Layout.LIST && row % 3 == 2 ? random.nextInt(width + 1) : width);
    for (int row = 5; row < rows; row += 17) {
      input[row] = null;
    }
    if (rows > 11 && input[11].length > 0) {
      input[11][0] = null;
    }
    String context = "seed " + seed;
    try (ArrowNormalizer small = gpu(4096);
        ArrowNormalizer large = gpu(1L << 30);
        FieldVector vector = TestColumns.build(allocator, "embedding", layout, type, input)) {
      for (Op op : Op.values()) {
        Normalization normalization = Normalization.of(op);
        NormalizationMetrics metrics = new NormalizationMetrics();
        try (FieldVector chunked = small.normalize(vector, List.of(normalization), metrics);
            FieldVector whole = large.normalize(vector, normalization)) {
          Double[][] output = TestColumns.read(chunked);
          ReferenceCheck.assertNormalized(normalization, type, input, output, context);
          assertThat(output)
              .as("%s %s: 4 KiB chunks against one chunk", context, op)
              .isDeepEqualTo(TestColumns.read(whole));
          if (elementBytes(input, type) > 2 * 4096) {
            assertThat(metrics.chunks()).as("chunks").isGreaterThan(1);
          }
          assertThat(metrics.rows()).isEqualTo(rows);
        }
      }
    }
  }

  @Test
  void slicedVectorsGoFromTheirOwnStart() {
    long seed = SEED ^ 7;
    Random random = new Random(seed);
    Double[][] input = TestColumns.gaussianRows(random, ElementType.FLOAT32, 500, row -> 300);
    Normalization normalization = Normalization.of(Op.LAYER_NORM);
    for (Layout layout : Layout.values()) {
      try (ArrowNormalizer normalizer = gpu(64 << 10);
          FieldVector vector =
              TestColumns.build(allocator, "embedding", layout, ElementType.FLOAT32, input)) {
        for (int[] slice : new int[][] {{1, 200}, {37, 463}, {499, 1}, {0, 500}}) {
          TransferPair pair = vector.getTransferPair(allocator);
          pair.splitAndTransfer(slice[0], slice[1]);
          try (FieldVector sliced = (FieldVector) pair.getTo();
              FieldVector output = normalizer.normalize(sliced, normalization)) {
            Double[][] expected = new Double[slice[1]][];
            System.arraycopy(input, slice[0], expected, 0, slice[1]);
            ReferenceCheck.assertNormalized(
                normalization,
                ElementType.FLOAT32,
                expected,
                TestColumns.read(output),
                "seed " + seed + ", " + layout + " slice from " + slice[0]);
          }
        }
      }
    }
  }

  /** l2_normalize(rms_norm(x)) in one call is bit for bit the two calls one after the other. */
  @Test
  void chainsStayOnTheDeviceAndEqualTheStepsOneByOne() {
    long seed = SEED ^ 11;
    Random random = new Random(seed);
    for (ElementType type : TYPES) {
      Double[][] input = TestColumns.gaussianRows(random, type, 900, row -> 1 + row % 700);
      double[] weight = new double[512];
      for (int index = 0; index < weight.length; index++) {
        weight[index] = 0.5 + random.nextDouble();
      }
      List<Normalization> steps =
          List.of(
              Normalization.of(Op.RMS_NORM),
              Normalization.of(Op.LAYER_NORM).withEpsilon(1e-3),
              Normalization.of(Op.L2_NORMALIZE));
      try (ArrowNormalizer normalizer = gpu(256 << 10);
          FieldVector vector =
              TestColumns.build(allocator, "embedding", Layout.LIST, type, input)) {
        NormalizationMetrics metrics = new NormalizationMetrics();
        try (FieldVector chained = normalizer.normalize(vector, steps, metrics);
            FieldVector first = normalizer.normalize(vector, steps.get(0));
            FieldVector second = normalizer.normalize(first, steps.get(1));
            FieldVector third = normalizer.normalize(second, steps.get(2))) {
          assertThat(TestColumns.read(chained))
              .as("seed %d, %s", seed, type)
              .isDeepEqualTo(TestColumns.read(third));
          long bytes = elementBytes(input, type);
          assertThat(metrics.bytesDownloaded()).as("one download").isEqualTo(bytes);
        }
      }
    }
  }

  @Test
  void pinnedAllocatorMemoryNeedsNoRegistration() {
    long seed = SEED ^ 13;
    Random random = new Random(seed);
    Double[][] input = TestColumns.gaussianRows(random, ElementType.FLOAT32, 3000, row -> 768);
    Normalization normalization = Normalization.of(Op.RMS_NORM);
    try (BufferAllocator pinned = PinnedAllocators.newRootAllocator(Long.MAX_VALUE)) {
      try (ArrowNormalizer normalizer =
              ArrowNormalizer.builder(pinned)
                  .device(DeviceChoice.GPU)
                  .gpuChunkBytes(1 << 20)
                  .build();
          FieldVector vector =
              TestColumns.build(
                  pinned, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input)) {
        NormalizationMetrics metrics = new NormalizationMetrics();
        try (FieldVector output = normalizer.normalize(vector, List.of(normalization), metrics)) {
          ReferenceCheck.assertNormalized(
              normalization, ElementType.FLOAT32, input, TestColumns.read(output), "seed " + seed);
        }
        long bytes = 3000L * 768 * Float.BYTES;
        assertThat(metrics.pinnedBytes()).as(metrics.toString()).isEqualTo(2 * bytes);
        assertThat(metrics.registeredBytes()).as(metrics.toString()).isZero();
        assertThat(metrics.stagedBytes()).as(metrics.toString()).isZero();
      }
    }
  }

  /** With staging off ({@code embednorm.gpu.staging=false}); {@link StagingGpuTest} has it on. */
  @Test
  void ordinaryArrowMemoryIsRegisteredForTheCallWithStagingOff() {
    System.setProperty(InternalSwitches.GPU_STAGING.name(), "false");
    try {
      registersForTheCall();
    } finally {
      System.clearProperty(InternalSwitches.GPU_STAGING.name());
    }
  }

  private void registersForTheCall() {
    Double[][] input =
        TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 2000, row -> 512);
    try (ArrowNormalizer normalizer = gpu(1 << 20);
        FieldVector vector =
            TestColumns.build(
                allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input)) {
      NormalizationMetrics metrics = new NormalizationMetrics();
      normalizer.normalize(vector, List.of(Normalization.of(Op.SOFTMAX)), metrics).close();
      long bytes = 2000L * 512 * Float.BYTES;
      assertThat(metrics.pinnedBytes() + metrics.stagedBytes())
          .as(metrics.toString())
          .isEqualTo(2 * bytes);
      assertThat(metrics.registeredBytes()).as(metrics.toString()).isGreaterThanOrEqualTo(bytes);
      assertThat(Engines.hostMemory().registeredBytes()).as("registrations left").isZero();
    }
  }

  /** Eight threads share a normalizer that lets two at a time on the GPU. */
  @Test
  void eightThreadsAtOnceGetTheirOwnResults() throws Exception {
    long seed = SEED ^ 17;
    Random random = new Random(seed);
    int threads = 8;
    List<Double[][]> inputs = new ArrayList<>();
    for (int thread = 0; thread < threads; thread++) {
      int width = 64 + 97 * thread;
      inputs.add(TestColumns.gaussianRows(random, ElementType.FLOAT32, 700, row -> width));
    }
    Normalization normalization = Normalization.of(Op.LOG_SOFTMAX);
    try (ArrowNormalizer normalizer =
        ArrowNormalizer.builder(allocator)
            .device(DeviceChoice.GPU)
            .gpuConcurrency(2)
            .gpuChunkBytes(128 << 10)
            .build()) {
      List<Double[][]> expected = new ArrayList<>();
      for (Double[][] input : inputs) {
        try (FieldVector vector =
                TestColumns.build(allocator, "e", Layout.LIST, ElementType.FLOAT32, input);
            FieldVector output = normalizer.normalize(vector, normalization)) {
          expected.add(TestColumns.read(output));
        }
      }
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<?>> results = new ArrayList<>();
        for (int thread = 0; thread < threads; thread++) {
          int index = thread;
          results.add(
              pool.submit(
                  () -> {
                    for (int repeat = 0; repeat < 10; repeat++) {
                      try (FieldVector vector =
                              TestColumns.build(
                                  allocator,
                                  "e",
                                  Layout.LIST,
                                  ElementType.FLOAT32,
                                  inputs.get(index));
                          FieldVector output = normalizer.normalize(vector, normalization)) {
                        assertThat(TestColumns.read(output))
                            .as("seed %d, thread %d, repeat %d", seed, index, repeat)
                            .isDeepEqualTo(expected.get(index));
                      }
                    }
                    return null;
                  }));
        }
        for (Future<?> result : results) {
          result.get();
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /** 1,000 batches later, the allocator closes clean and device memory is back where it was. */
  @Test
  void thousandBatchesLeakNothing() {
    HostMemory pinned = Engines.hostMemory();
    try (ArrowNormalizer warmUp = gpu(1 << 20);
        FieldVector vector = randomColumn(allocator, 1, 64, 768)) {
      warmUp.normalize(vector, Normalization.of(Op.RMS_NORM)).close();
    }
    pinned.releasePooled();
    long deviceBefore = DeviceMemory.inUse();
    long pinnedBefore = pinned.allocatedBytes();
    try (BufferAllocator child = allocator.newChildAllocator("batches", 0, Long.MAX_VALUE);
        ArrowNormalizer normalizer = gpu(64 << 10)) {
      Random random = new Random(SEED);
      for (int batch = 0; batch < 1000; batch++) {
        try (FieldVector vector = randomColumn(child, random.nextLong(), 1 + batch % 200, 768);
            FieldVector output =
                normalizer.normalize(vector, Normalization.of(Op.values()[batch % 5]))) {
          assertThat(output.getValueCount()).isEqualTo(vector.getValueCount());
        }
      }
    }
    pinned.releasePooled();
    assertThat(Engines.hostMemory().registeredBytes()).as("registered bytes").isZero();
    assertThat(pinned.allocatedBytes()).as("pinned bytes").isEqualTo(pinnedBefore);
    assertThat(DeviceMemory.inUse()).as("device memory in use").isEqualTo(deviceBefore);
  }

  @Test
  void aFailingRowLeavesNothingBehind() {
    double[] weight = new double[768];
    java.util.Arrays.fill(weight, 2.0);
    Double[][] input =
        TestColumns.gaussianRows(
            new Random(SEED), ElementType.FLOAT32, 5000, row -> row == 4321 ? 767 : 768);
    try (ArrowNormalizer normalizer = gpu(64 << 10);
        FieldVector vector =
            TestColumns.build(allocator, "embedding", Layout.LIST, ElementType.FLOAT32, input)) {
      assertThatThrownBy(
              () -> normalizer.normalize(vector, Normalization.of(Op.RMS_NORM).withWeight(weight)))
          .isInstanceOf(EmbedNormException.class)
          .hasMessageContaining("row 4321")
          .hasMessageContaining("768")
          .hasMessageContaining("767");
      try (FieldVector output = normalizer.normalize(vector, Normalization.of(Op.RMS_NORM))) {
        ReferenceCheck.assertNormalized(
            Normalization.of(Op.RMS_NORM),
            ElementType.FLOAT32,
            input,
            TestColumns.read(output),
            "after a failure");
      }
    }
    assertThat(Engines.hostMemory().registeredBytes()).as("registrations left").isZero();
  }

  private static FieldVector randomColumn(
      BufferAllocator allocator, long seed, int rows, int width) {
    Double[][] input =
        TestColumns.gaussianRows(new Random(seed), ElementType.FLOAT32, rows, row -> width);
    return TestColumns.build(
        allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input);
  }

  private static long elementBytes(Double[][] rows, ElementType type) {
    long elements = 0;
    for (Double[] row : rows) {
      elements += row == null ? 0 : row.length;
    }
    return elements * type.byteWidth();
  }
}

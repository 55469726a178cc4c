package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.HostMemory;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.io.IOException;
import java.nio.file.Path;
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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Ordinary Arrow memory ({@code RootAllocator}) through the pinned staging slots on a real GPU: bit
 * for bit the output of the same memory registered per call (the path before staging) and of pinned
 * memory at the same alignment, for every op, type and layout, sliced (unaligned) vectors too;
 * eight threads at once; nothing leaked after 1,000 batches. Device outputs are poisoned with NaN
 * bytes first. Skipped where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class StagingGpuTest {
  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  private static final ElementType[] TYPES = {
    ElementType.FLOAT32, ElementType.FLOAT16, ElementType.FLOAT64
  };

  private BufferAllocator plain;
  private BufferAllocator pinned;

  @BeforeAll
  static void requireGpu() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    System.setProperty(InternalSwitches.GPU_POISON_OUTPUTS.name(), "true");
    System.out.println("StagingGpuTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
  }

  @BeforeEach
  void openAllocators() {
    plain = new RootAllocator();
    pinned = PinnedAllocators.newRootAllocator(Long.MAX_VALUE);
  }

  @AfterEach
  void closeAllocators() {
    System.clearProperty(InternalSwitches.GPU_STAGING.name());
    plain.close();
    pinned.close();
  }

  private static ArrowNormalizer gpu(BufferAllocator allocator, long chunkBytes) {
    return ArrowNormalizer.builder(allocator)
        .device(DeviceChoice.GPU)
        .gpuChunkBytes(chunkBytes)
        .build();
  }

  static Stream<Arguments> layoutsTypesAndWidths() {
    List<Arguments> cases = new ArrayList<>();
    for (Layout layout : Layout.values()) {
      for (ElementType type : TYPES) {
        for (int width : new int[] {7, 768, 769, 4096}) {
          cases.add(Arguments.of(layout, type, width));
        }
      }
    }
    return cases.stream();
  }

  /**
   * Every op on ordinary memory, staged, against the same memory registered and against a pinned
   * copy; whole and sliced from row 1 (which moves the rows off 16-byte alignment for odd widths).
   */
  @ParameterizedTest(name = "{0} of {1}, width {2}")
  @MethodSource("layoutsTypesAndWidths")
  void stagedIsBitForBitRegisteredAndPinned(Layout layout, ElementType type, int width) {
    long seed = SEED ^ ("" + layout + type + width).hashCode();
    Random random = new Random(seed);
    int rows = Math.max(3, Math.min(3000, 3_000_000 / width));
    Double[][] input =
        TestColumns.gaussianRows(
            random,
            type,
            rows,
            row -> layout == Layout.LIST && row % 3 == 2 ? random.nextInt(width + 1) : width);
    input[1] = null;
    // a null element in a full row (ragged rows may be empty)
    input[rows > 3 ? 3 : 0][0] = null;
    try (ArrowNormalizer onPlain = gpu(plain, 1 << 20);
        ArrowNormalizer onPinned = gpu(pinned, 1 << 20);
        FieldVector ordinary = TestColumns.build(plain, "e", layout, type, input);
        FieldVector pinnedCopy = TestColumns.build(pinned, "e", layout, type, input)) {
      for (int from : new int[] {0, 1}) {
        try (FieldVector a = slice(ordinary, from, plain);
            FieldVector b = slice(pinnedCopy, from, pinned)) {
          for (Op op : Op.values()) {
            String context = "seed " + seed + ", " + op + ", from row " + from;
            compare(onPlain, onPinned, a, b, Normalization.of(op), context);
          }
        }
      }
    }
  }

  static Stream<Arguments> fileLayoutsTypesAndWidths() {
    List<Arguments> cases = new ArrayList<>();
    for (Layout layout : Layout.values()) {
      for (ElementType type : TYPES) {
        for (int width : new int[] {3, 768, 771}) {
          cases.add(Arguments.of(layout, type, width));
        }
      }
    }
    return cases.stream();
  }

  /**
   * {@code normalize --device gpu} on an Arrow file takes the mapped path through the staging
   * slots, and its output reads back exactly as the record-batch path's on the GPU (pinned
   * batches), value bits included, for every op; odd widths put rows off 16-byte alignment.
   */
  @ParameterizedTest(name = "{0} of {1}, width {2}")
  @MethodSource("fileLayoutsTypesAndWidths")
  void mappedFilesOnTheGpuWriteWhatTheRecordBatchPathWrites(
      Layout layout, ElementType type, int width, @TempDir Path directory) throws IOException {
    long seed = SEED ^ ("file" + layout + type + width).hashCode();
    Path input = directory.resolve("in.arrow");
    int rows = Math.max(10, Math.min(5000, 2_000_000 / width));
    TestFiles.write(
        plain,
        input,
        new TestFiles.Shape(layout, type, width, 3, rows, 0.1),
        new Random(seed),
        ArrowFormat.FILE);
    try (ArrowNormalizer onPinned = gpu(pinned, ArrowNormalizer.DEFAULT_GPU_CHUNK_BYTES)) {
      for (Op op : Op.values()) {
        Normalization normalization = Normalization.of(op);
        Path batches = directory.resolve("batches-" + op + ".arrow");
        Path mapped = directory.resolve("mapped-" + op + ".arrow");
        NormalizeResult expected =
            ArrowFiles.normalizeFile(input, batches, "embedding", normalization, onPinned, pinned);
        NormalizeResult actual =
            ArrowFiles.normalizeFile(
                input, mapped, "embedding", normalization, DeviceChoice.GPU, done -> {});
        assertThat(expected.path()).isEqualTo(FileNormalizationPath.RECORD_BATCH);
        assertThat(actual.path()).as(actual.pathReason()).isEqualTo(FileNormalizationPath.MAPPED);
        assertThat(actual.cpuFallbackBatches()).as(actual.cpuFallbackReason()).isZero();
        TestFiles.assertSameContents(
            plain, batches, mapped, "embedding", "seed " + seed + ", " + op);
      }
    }
  }

  /** Eight threads on ordinary memory at once, each call bit for bit the pinned path's. */
  @Test
  void eightThreadsAtOnceOnOrdinaryMemory() throws Exception {
    long seed = SEED ^ 17;
    Random random = new Random(seed);
    int threads = 8;
    List<Double[][]> inputs = new ArrayList<>();
    for (int thread = 0; thread < threads; thread++) {
      int width = 64 + 97 * thread;
      inputs.add(TestColumns.gaussianRows(random, ElementType.FLOAT32, 3000, row -> width));
    }
    Normalization normalization = Normalization.of(Op.LAYER_NORM);
    List<byte[]> expected = new ArrayList<>();
    try (ArrowNormalizer onPinned = gpu(pinned, 256 << 10)) {
      for (Double[][] input : inputs) {
        try (FieldVector vector =
                TestColumns.build(pinned, "e", Layout.LIST, ElementType.FLOAT32, input);
            FieldVector output = onPinned.normalize(vector, normalization)) {
          expected.add(ElementBits.elementBytes(output));
        }
      }
    }
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (ArrowNormalizer normalizer =
        ArrowNormalizer.builder(plain)
            .device(DeviceChoice.GPU)
            .gpuConcurrency(2)
            .gpuChunkBytes(256 << 10)
            .build()) {
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
                                  plain, "e", Layout.LIST, ElementType.FLOAT32, inputs.get(index));
                          FieldVector output =
                              normalizer.normalize(vector, List.of(normalization), metrics)) {
                        assertThat(ElementBits.elementBytes(output))
                            .as("seed %d, thread %d, repeat %d", seed, index, repeat)
                            .isEqualTo(expected.get(index));
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
    // Inputs are staged; outputs of 1 MiB or more are pinned (PinnedOutputs), smaller ones staged.
    assertThat(metrics.stagedBytes()).as(metrics.toString()).isPositive();
    assertThat(metrics.pinnedBytes())
        .as(metrics.toString())
        .isLessThanOrEqualTo(metrics.stagedBytes());
    assertThat(metrics.cpuFallbackCalls()).as(metrics.toString()).isZero();
  }

  /** 1,000 batches of ordinary memory: host, pinned and device memory back where they were. */
  @Test
  void thousandBatchesOfOrdinaryMemoryLeakNothing() {
    HostMemory memory = Engines.hostMemory();
    try (ArrowNormalizer warmUp = gpu(plain, 1 << 20);
        FieldVector vector = randomColumn(plain, 1, 64, 768)) {
      warmUp.normalize(vector, Normalization.of(Op.RMS_NORM)).close();
    }
    memory.releasePooled();
    long deviceBefore = DeviceMemory.inUse();
    long pinnedBefore = memory.allocatedBytes();
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (BufferAllocator child = plain.newChildAllocator("batches", 0, Long.MAX_VALUE);
        ArrowNormalizer normalizer = gpu(child, 64 << 10)) {
      Random random = new Random(SEED);
      for (int batch = 0; batch < 1000; batch++) {
        try (FieldVector vector = randomColumn(child, random.nextLong(), 1 + batch % 200, 768);
            FieldVector output =
                normalizer.normalize(
                    vector, List.of(Normalization.of(Op.values()[batch % 5])), metrics)) {
          assertThat(output.getValueCount()).isEqualTo(vector.getValueCount());
        }
      }
      assertThat(child.getAllocatedMemory()).as("Arrow bytes left").isZero();
    }
    memory.releasePooled();
    assertThat(metrics.stagedBytes()).as(metrics.toString()).isPositive();
    assertThat(memory.registeredBytes()).as("registered bytes").isZero();
    assertThat(memory.allocatedBytes()).as("pinned bytes").isEqualTo(pinnedBefore);
    assertThat(DeviceMemory.inUse()).as("device memory in use").isEqualTo(deviceBefore);
  }

  private static void compare(
      ArrowNormalizer onPlain,
      ArrowNormalizer onPinned,
      FieldVector ordinary,
      FieldVector pinnedCopy,
      Normalization normalization,
      String context) {
    NormalizationMetrics staged = new NormalizationMetrics();
    NormalizationMetrics direct = new NormalizationMetrics();
    try (FieldVector stagedOutput = onPlain.normalize(ordinary, List.of(normalization), staged);
        FieldVector pinnedOutput = onPinned.normalize(pinnedCopy, List.of(normalization), direct);
        FieldVector registeredOutput = registered(onPlain, ordinary, normalization)) {
      byte[] bits = ElementBits.elementBytes(stagedOutput);
      assertThat(bits)
          .as("%s: staged against registered", context)
          .isEqualTo(ElementBits.elementBytes(registeredOutput));
      if (alignment(ordinary) == alignment(pinnedCopy)) {
        assertThat(bits)
            .as("%s: staged against pinned", context)
            .isEqualTo(ElementBits.elementBytes(pinnedOutput));
      }
      assertThat(ElementBits.nullRows(stagedOutput)).isEqualTo(ElementBits.nullRows(pinnedOutput));
      long bytes = 2L * bits.length;
      // The input is staged; the output is pinned from 1 MiB on (PinnedOutputs), else staged.
      assertThat(staged.stagedBytes() + staged.pinnedBytes())
          .as("%s: %s", context, staged)
          .isEqualTo(bytes);
      assertThat(staged.stagedBytes())
          .as("%s: %s", context, staged)
          .isGreaterThanOrEqualTo(bits.length);
      assertThat(staged.registeredBytes()).as("%s: %s", context, staged).isZero();
      assertThat(direct.pinnedBytes()).as("%s: %s", context, direct).isEqualTo(bytes);
      assertThat(direct.stagedBytes()).as("%s: %s", context, direct).isZero();
    }
  }

  private static FieldVector registered(
      ArrowNormalizer normalizer, FieldVector input, Normalization normalization) {
    System.setProperty(InternalSwitches.GPU_STAGING.name(), "false");
    try {
      return normalizer.normalize(input, normalization);
    } finally {
      System.clearProperty(InternalSwitches.GPU_STAGING.name());
    }
  }

  private static long alignment(FieldVector vector) {
    ListColumn column = ListColumn.of(vector);
    return (column.elements().getDataBuffer().memoryAddress()
            + column.boundary(0) * column.type().byteWidth())
        & 15;
  }

  /** The rows from {@code from} on, as a vector of their own (sharing the buffers). */
  private static FieldVector slice(FieldVector vector, int from, BufferAllocator allocator) {
    TransferPair pair = vector.getTransferPair(allocator);
    pair.splitAndTransfer(from, vector.getValueCount() - from);
    return (FieldVector) pair.getTo();
  }

  private static FieldVector randomColumn(
      BufferAllocator allocator, long seed, int rows, int width) {
    Double[][] input =
        TestColumns.gaussianRows(new Random(seed), ElementType.FLOAT32, rows, row -> width);
    return TestColumns.build(
        allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input);
  }
}

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
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link ArrowNormalizer} over GPUs 0 and 1: every op and element type bit for bit GPU 0 alone over
 * many chunks, both GPUs given chunks; pinned memory copied at full speed on both, ordinary memory
 * registered once per call; a GPU fault gives the CPU engine's bits; no device memory (on either
 * GPU), pinned or registered memory left after hundreds of calls; threads at once never wait on
 * each other in a circle. Device outputs are poisoned with NaN bytes first. Skipped where fewer
 * than two GPUs are usable.
 */
@Tag("gpu")
@EnabledIf(value = "twoGpusUsable", disabledReason = "fewer than 2 usable GPUs")
class GpuSpreadGpuTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  private static final ElementType[] TYPES = {
    ElementType.FLOAT32, ElementType.FLOAT16, ElementType.FLOAT64
  };

  private BufferAllocator allocator;

  /**
   * Checked before the class's set-up, so that with fewer GPUs each test is reported as skipped
   * rather than the class as zero tests.
   */
  static boolean twoGpusUsable() {
    return Engines.gpuCount() >= 2;
  }

  @BeforeAll
  static void requireTwoGpus() {
    int count = Engines.gpuCount();
    assumeTrue(count >= 2, () -> "this host has " + count + " usable GPU(s); the spread needs 2");
    System.setProperty(InternalSwitches.GPU_POISON_OUTPUTS.name(), "true");
    System.out.println("GpuSpreadGpuTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
  }

  @BeforeEach
  void openAllocator() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void closeAllocator() {
    System.clearProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name());
    allocator.close();
  }

  static List<Arguments> layoutsAndTypes() {
    List<Arguments> cases = new ArrayList<>();
    for (Layout layout : Layout.values()) {
      for (ElementType type : TYPES) {
        cases.add(Arguments.of(layout, type));
      }
    }
    return cases;
  }

  /** 64 KiB chunks: tens of chunks a call, shared by both GPUs; a chain too. */
  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void everyOpOnTwoGpusIsOneGpusBitForBit(Layout layout, ElementType type) {
    long seed = SEED ^ (layout.name() + type).hashCode();
    Random random = new Random(seed);
    int width = 769;
    Double[][] input =
        TestColumns.gaussianRows(
            random,
            type,
            2000,
            row -> layout == Layout.LIST && row % 3 == 2 ? random.nextInt(2 * width) : width);
    input[5] = null;
    input[1500][0] = null;
    double[] weight = new double[width];
    double[] bias = new double[width];
    for (int index = 0; index < width; index++) {
      weight[index] = 0.5 + random.nextDouble();
      bias[index] = random.nextGaussian();
    }
    List<List<Normalization>> cases = new ArrayList<>();
    for (Op op : Op.values()) {
      cases.add(List.of(Normalization.of(op)));
    }
    // Ragged rows do not fit a weight: the list's chain goes without.
    cases.add(
        List.of(
            layout == Layout.FIXED_SIZE_LIST
                ? Normalization.of(Op.LAYER_NORM).withWeight(weight).withBias(bias)
                : Normalization.of(Op.RMS_NORM),
            Normalization.of(Op.L2_NORMALIZE)));
    try (ArrowNormalizer one = gpus(64 << 10, 0);
        ArrowNormalizer two = gpus(64 << 10, 0, 1);
        FieldVector vector = TestColumns.build(allocator, "embedding", layout, type, input)) {
      for (List<Normalization> steps : cases) {
        NormalizationMetrics metrics = new NormalizationMetrics();
        try (FieldVector onOne = one.normalize(vector, steps, new NormalizationMetrics());
            FieldVector onTwo = two.normalize(vector, steps, metrics)) {
          String context = "seed " + seed + ", " + steps;
          if (steps.size() == 1) {
            ReferenceCheck.assertNormalized(
                steps.get(0), type, input, TestColumns.read(onTwo), context);
          }
          assertThat(elementBytes(onTwo, type)).as(context).isEqualTo(elementBytes(onOne, type));
          assertThat(TestColumns.read(onTwo)).as(context).isDeepEqualTo(TestColumns.read(onOne));
          assertThat(metrics.chunksPerGpu()).as(context).containsOnlyKeys(0, 1);
          assertThat(metrics.chunksPerGpu().values())
              .as(context)
              .allSatisfy(count -> assertThat(count).isGreaterThan(4));
          assertThat(metrics.cpuFallbackCalls()).isZero();
        }
      }
    }
  }

  @Test
  void pinnedMemoryGoesAtFullSpeedToBothGpus() {
    Double[][] input =
        TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 20_000, row -> 768);
    Normalization normalization = Normalization.of(Op.RMS_NORM);
    try (BufferAllocator pinned = PinnedAllocators.newRootAllocator(Long.MAX_VALUE)) {
      try (ArrowNormalizer one = gpusOn(pinned, 1 << 20, 0);
          ArrowNormalizer two = gpusOn(pinned, 1 << 20, 0, 1);
          FieldVector vector =
              TestColumns.build(
                  pinned, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input)) {
        NormalizationMetrics metrics = new NormalizationMetrics();
        try (FieldVector onOne = one.normalize(vector, normalization);
            FieldVector onTwo = two.normalize(vector, List.of(normalization), metrics)) {
          assertThat(elementBytes(onTwo, ElementType.FLOAT32))
              .isEqualTo(elementBytes(onOne, ElementType.FLOAT32));
        }
        long bytes = 20_000L * 768 * Float.BYTES;
        assertThat(metrics.pinnedBytes()).as(metrics.toString()).isEqualTo(2 * bytes);
        assertThat(metrics.registeredBytes()).as(metrics.toString()).isZero();
        assertThat(metrics.stagedBytes()).as(metrics.toString()).isZero();
        assertThat(metrics.chunksPerGpu()).as(metrics.toString()).containsOnlyKeys(0, 1);
      }
    }
  }

  /** With staging off ({@code embednorm.gpu.staging=false}), as without pinned memory. */
  @Test
  void ordinaryMemoryIsRegisteredOnceForBothGpus() {
    System.setProperty(InternalSwitches.GPU_STAGING.name(), "false");
    try {
      registersOnceForBothGpus();
    } finally {
      System.clearProperty(InternalSwitches.GPU_STAGING.name());
    }
  }

  private void registersOnceForBothGpus() {
    Double[][] input =
        TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 4000, row -> 512);
    try (ArrowNormalizer two = gpus(1 << 20, 0, 1);
        FieldVector vector =
            TestColumns.build(
                allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input)) {
      NormalizationMetrics metrics = new NormalizationMetrics();
      two.normalize(vector, List.of(Normalization.of(Op.SOFTMAX)), metrics).close();
      long bytes = 4000L * 512 * Float.BYTES;
      assertThat(metrics.pinnedBytes() + metrics.stagedBytes())
          .as(metrics.toString())
          .isEqualTo(2 * bytes);
      assertThat(metrics.registeredBytes())
          .as("input and output registered once, not once per GPU: " + metrics)
          .isBetween(bytes, 2 * bytes);
      assertThat(metrics.chunksPerGpu()).as(metrics.toString()).containsOnlyKeys(0, 1);
    }
    assertThat(Engines.hostMemory().registeredBytes()).as("registrations left").isZero();
  }

  /**
   * Hundreds of calls, a GPU fault among them (its call gets the CPU engine's bits), then device
   * memory on both GPUs, pinned memory and registrations are back where they were.
   */
  @Test
  void callsAndFaultsOnTwoGpusLeakNothing() {
    HostMemory pinned = Engines.hostMemory();
    try (ArrowNormalizer warmUp = gpus(64 << 10, 0, 1);
        FieldVector vector = randomColumn(allocator, 1, 400, 768)) {
      warmUp.normalize(vector, Normalization.of(Op.RMS_NORM)).close();
    }
    pinned.releasePooled();
    long[] deviceBefore = {DeviceMemory.inUse(0), DeviceMemory.inUse(1)};
    long pinnedBefore = pinned.allocatedBytes();
    Normalization layerNorm = Normalization.of(Op.LAYER_NORM);
    try (BufferAllocator child = allocator.newChildAllocator("calls", 0, Long.MAX_VALUE);
        ArrowNormalizer two = gpus(64 << 10, 0, 1);
        ArrowNormalizer cpu = ArrowNormalizer.create(child, DeviceChoice.CPU)) {
      Random random = new Random(SEED);
      for (int call = 0; call < 300; call++) {
        try (FieldVector vector = randomColumn(child, random.nextLong(), 1 + call % 400, 768);
            FieldVector output =
                two.normalize(vector, Normalization.of(Op.values()[call % Op.values().length]))) {
          assertThat(output.getValueCount()).isEqualTo(vector.getValueCount());
        }
      }
      try (FieldVector vector = randomColumn(child, SEED, 2000, 768);
          FieldVector onCpu = cpu.normalize(vector, layerNorm)) {
        System.setProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name(), "5");
        NormalizationMetrics metrics = new NormalizationMetrics();
        try (FieldVector faulted = two.normalize(vector, List.of(layerNorm), metrics)) {
          assertThat(elementBytes(faulted, ElementType.FLOAT32))
              .as("the CPU engine's bits")
              .isEqualTo(elementBytes(onCpu, ElementType.FLOAT32));
        }
        System.clearProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name());
        assertThat(metrics.cpuFallbackCalls()).isEqualTo(1);
        assertThat(metrics.cpuFallbackReason())
            .startsWith("GpuFaultException: Cannot run GPU call 5");
      }
    }
    pinned.releasePooled();
    assertThat(Engines.hostMemory().registeredBytes()).as("registered bytes").isZero();
    assertThat(pinned.allocatedBytes()).as("pinned bytes").isEqualTo(pinnedBefore);
    assertThat(DeviceMemory.inUse(0)).as("GPU 0 memory in use").isEqualTo(deviceBefore[0]);
    assertThat(DeviceMemory.inUse(1)).as("GPU 1 memory in use").isEqualTo(deviceBefore[1]);
  }

  /** Eight threads share two GPUs that take one session each. */
  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void eightThreadsAtOnceGetTheirOwnResults() throws Exception {
    Double[][] input =
        TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 3000, row -> 300);
    Normalization normalization = Normalization.of(Op.LOG_SOFTMAX);
    try (ArrowNormalizer two =
        ArrowNormalizer.builder(allocator)
            .device(DeviceChoice.GPU)
            .gpuOrdinals(0, 1)
            .gpuConcurrency(1)
            .gpuChunkBytes(128 << 10)
            .build()) {
      byte[] expected;
      try (FieldVector vector =
              TestColumns.build(allocator, "e", Layout.LIST, ElementType.FLOAT32, input);
          FieldVector output = two.normalize(vector, normalization)) {
        expected = elementBytes(output, ElementType.FLOAT32);
      }
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        List<Future<?>> results = new ArrayList<>();
        for (int thread = 0; thread < 8; thread++) {
          results.add(
              pool.submit(
                  () -> {
                    for (int repeat = 0; repeat < 20; repeat++) {
                      try (FieldVector vector =
                              TestColumns.build(
                                  allocator, "e", Layout.LIST, ElementType.FLOAT32, input);
                          FieldVector output = two.normalize(vector, normalization)) {
                        assertThat(elementBytes(output, ElementType.FLOAT32)).isEqualTo(expected);
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

  @Test
  void theNormalizerNamesBothGpusAndRefusesOnesTheHostLacks() {
    int count = Engines.gpuCount();
    try (ArrowNormalizer two = gpus(1 << 20, 0, 1);
        ArrowNormalizer all =
            ArrowNormalizer.builder(allocator).device(DeviceChoice.GPU).allGpus().build()) {
      assertThat(two.deviceReason()).startsWith("gpu was requested: gpu 0 (").contains(", gpu 1 (");
      assertThat(two.engineDescription()).startsWith("gpu 0 (").contains(", gpu 1 (");
      assertThat(all.engineDescription()).contains("gpu " + (count - 1) + " (");
    }
    for (DeviceChoice choice : new DeviceChoice[] {DeviceChoice.GPU, DeviceChoice.AUTO}) {
      assertThatThrownBy(
              () -> ArrowNormalizer.builder(allocator).device(choice).gpuOrdinals(0, count).build())
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot use GPUs [0, " + count + "]: this host has " + count);
    }
  }

  private ArrowNormalizer gpus(long chunkBytes, int... ordinals) {
    return gpusOn(allocator, chunkBytes, ordinals);
  }

  private static ArrowNormalizer gpusOn(
      BufferAllocator allocator, long chunkBytes, int... ordinals) {
    return ArrowNormalizer.builder(allocator)
        .device(DeviceChoice.GPU)
        .gpuOrdinals(ordinals)
        .gpuChunkBytes(chunkBytes)
        .build();
  }

  private static FieldVector randomColumn(
      BufferAllocator allocator, long seed, int rows, int width) {
    Double[][] input =
        TestColumns.gaussianRows(new Random(seed), ElementType.FLOAT32, rows, row -> width);
    return TestColumns.build(
        allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input);
  }

  private static byte[] elementBytes(FieldVector vector, ElementType type) {
    FieldVector elements = ListColumn.elementsOf(vector);
    ArrowBuf data = elements.getDataBuffer();
    byte[] bytes = new byte[elements.getValueCount() * type.byteWidth()];
    data.getBytes(0, bytes);
    return bytes;
  }
}

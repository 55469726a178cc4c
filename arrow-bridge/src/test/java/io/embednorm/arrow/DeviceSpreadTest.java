package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
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
 * The Arrow API over several GPUs, on CI: three test GPUs ({@link RecordingGpuEngine}: the CPU
 * engine's bits with each element's lowest bit flipped, one session at a time) spread over by the
 * production code, on a real allocator (a leak fails its close). Every row goes to exactly one
 * device, once, each device a consecutive share; the output is bit for bit one device's; a fault on
 * one device reruns the whole call on the CPU engine; an out-of-memory on one is split there.
 */
class DeviceSpreadTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  private static final int ROWS = 3000;
  private static final int WIDTH = 96;

  /** 128 KiB chunks: 3,000 rows of 96 float32 go in 9, three a device; float16 rows in 5. */
  private static final long CHUNK_BYTES = 128 << 10;

  private static final Normalization STEP = Normalization.of(Op.LAYER_NORM);

  private BufferAllocator allocator;
  private List<RecordingGpuEngine> devices;
  private ArrowNormalizer spread;
  private ArrowNormalizer cpu;

  @BeforeEach
  void open() {
    System.out.println("DeviceSpreadTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
    allocator = new RootAllocator();
    devices =
        List.of(new RecordingGpuEngine(0), new RecordingGpuEngine(1), new RecordingGpuEngine(2));
    spread = normalizerOn(devices);
    cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
  }

  @AfterEach
  void close() {
    spread.close();
    cpu.close();
    allocator.close(); // throws on a leak, failing the test
  }

  static List<Arguments> layoutsAndTypes() {
    List<Arguments> cases = new ArrayList<>();
    for (Layout layout : Layout.values()) {
      for (ElementType type :
          new ElementType[] {ElementType.FLOAT32, ElementType.FLOAT16, ElementType.FLOAT64}) {
        cases.add(Arguments.of(layout, type));
      }
    }
    return cases;
  }

  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void everyRowRunsOnceOnOneDeviceAndTheOutputIsOneDevicesBitForBit(
      Layout layout, ElementType type) {
    long seed = SEED ^ (layout.name() + type).hashCode();
    Double[][] rows = rows(seed, layout, type);
    NormalizationMetrics metrics = new NormalizationMetrics();
    NormalizationMetrics oneMetrics = new NormalizationMetrics();
    try (ArrowNormalizer one = normalizerOn(List.of(new RecordingGpuEngine(0)));
        FieldVector input = TestColumns.build(allocator, "x", layout, type, rows);
        FieldVector onCpu = cpu.normalize(input, STEP);
        FieldVector onOne = one.normalize(input, List.of(STEP), oneMetrics);
        FieldVector onThree = spread.normalize(input, List.of(STEP), metrics)) {
      String context = "seed " + seed;
      ReferenceCheck.assertNormalized(STEP, type, rows, TestColumns.read(onCpu), context);
      assertThat(ElementBits.elementBytes(onThree))
          .as("%s: the CPU engine's bits, lowest flipped in valid rows", context)
          .isEqualTo(ElementBits.lowestBitsFlipped(onCpu));
      assertThat(ElementBits.elementBytes(onThree))
          .as("one device's bits")
          .isEqualTo(ElementBits.elementBytes(onOne));
      assertThat(ElementBits.nullRows(onThree)).isEqualTo(ElementBits.nullRows(onCpu));

      List<long[]> chunks = new ArrayList<>();
      for (RecordingGpuEngine device : devices) {
        List<long[]> own = device.chunks();
        assertThat(own).as("chunks of %s", device.description()).isNotEmpty();
        for (int chunk = 1; chunk < own.size(); chunk++) {
          assertThat(own.get(chunk)[0])
              .as("a device's share is consecutive rows, in order")
              .isEqualTo(own.get(chunk - 1)[0] + own.get(chunk - 1)[1]);
        }
        chunks.addAll(own);
      }
      chunks.sort(Comparator.comparingLong(chunk -> chunk[0]));
      long next = 0;
      for (long[] chunk : chunks) {
        assertThat(chunk[0]).as("every row exactly once").isEqualTo(next);
        next += chunk[1];
      }
      assertThat(next).isEqualTo(ROWS);

      assertThat(metrics.chunks()).isEqualTo(chunks.size()).isEqualTo(oneMetrics.chunks());
      assertThat(metrics.chunksPerGpu())
          .containsOnlyKeys(0, 1, 2)
          .allSatisfy((ordinal, count) -> assertThat(count).isPositive());
      assertThat(metrics.chunksPerGpu().values().stream().mapToLong(Long::longValue).sum())
          .isEqualTo(metrics.chunks());
      assertThat(metrics.rows()).isEqualTo(ROWS);
      assertThat(metrics.calls()).isEqualTo(1);
      assertThat(metrics.bytesUploaded()).isEqualTo(oneMetrics.bytesUploaded());
      assertThat(metrics.bytesDownloaded()).isEqualTo(oneMetrics.bytesDownloaded());
      assertThat(metrics.stagedBytes()).isEqualTo(oneMetrics.stagedBytes());
      assertThat(metrics.toString()).contains(" chunksPerGpu={0=");
    }
    assertThat(devices).allSatisfy(device -> assertThat(device.openSessions()).isZero());
  }

  @Test
  void aCallOfOneChunkUsesOneDeviceTheDevicesTakingTurns() {
    Double[][] rows =
        TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 100, row -> WIDTH);
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (FieldVector input =
        TestColumns.build(allocator, "x", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, rows)) {
      for (int call = 0; call < 3; call++) {
        NormalizationMetrics one = new NormalizationMetrics();
        spread.normalize(input, List.of(STEP), one).close();
        assertThat(one.chunksPerGpu()).as("call %d", call).hasSize(1);
        metrics.add(one);
      }
    }
    assertThat(metrics.chunksPerGpu()).isEqualTo(Map.of(0, 1L, 1, 1L, 2, 1L));
    assertThat(metrics.chunks()).isEqualTo(3);
  }

  @Test
  void aFaultOnOneDeviceRunsTheWholeCallOnTheCpuEngine() {
    Double[][] rows = rows(SEED, Layout.FIXED_SIZE_LIST, ElementType.FLOAT32);
    try (FieldVector input =
            TestColumns.build(allocator, "x", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, rows);
        FieldVector onCpu = cpu.normalize(input, STEP)) {
      devices.get(1).failChunk(2, GpuFaultException::new);
      NormalizationMetrics metrics = new NormalizationMetrics();
      try (FieldVector faulted = spread.normalize(input, List.of(STEP), metrics)) {
        assertThat(ElementBits.elementBytes(faulted))
            .as("the CPU engine's bits")
            .isEqualTo(ElementBits.elementBytes(onCpu));
      }
      assertThat(metrics.cpuFallbackCalls()).isEqualTo(1);
      assertThat(metrics.cpuFallbackRows()).isEqualTo(ROWS);
      assertThat(metrics.cpuFallbackReason()).startsWith("GpuFaultException: test gpu 1, chunk");
      assertThat(devices).allSatisfy(device -> assertThat(device.openSessions()).isZero());

      try (FieldVector again = spread.normalize(input, STEP)) {
        assertThat(ElementBits.elementBytes(again))
            .as("the next call on the GPUs")
            .isEqualTo(ElementBits.lowestBitsFlipped(onCpu));
      }
    }
  }

  @Test
  void anOutOfMemoryOnOneDeviceIsSplitThereAndTheCallStaysOnTheGpus() {
    Double[][] rows = rows(SEED, Layout.FIXED_SIZE_LIST, ElementType.FLOAT32);
    try (FieldVector input =
            TestColumns.build(allocator, "x", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, rows);
        FieldVector unfaulted = spread.normalize(input, STEP)) {
      devices.get(2).failChunk(1, message -> new GpuOutOfMemoryException(message, null));
      NormalizationMetrics metrics = new NormalizationMetrics();
      try (FieldVector split = spread.normalize(input, List.of(STEP), metrics)) {
        assertThat(ElementBits.elementBytes(split)).isEqualTo(ElementBits.elementBytes(unfaulted));
      }
      assertThat(metrics.outOfMemorySplits()).isEqualTo(1);
      assertThat(metrics.cpuFallbackCalls()).isZero();
      assertThat(metrics.chunksPerGpu()).isEqualTo(Map.of(0, 3L, 1, 3L, 2, 4L));
    }
  }

  @Test
  void theCallersErrorNamesTheFirstRowThatFailsAsOnOneDevice() {
    Double[][] rows =
        TestColumns.gaussianRows(
            new Random(SEED),
            ElementType.FLOAT32,
            ROWS,
            row -> row == 1250 || row == 2500 ? WIDTH + 1 : WIDTH);
    Normalization weighted = Normalization.of(Op.RMS_NORM).withWeight(new double[WIDTH]);
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (ArrowNormalizer one = normalizerOn(List.of(new RecordingGpuEngine(0)));
        FieldVector input =
            TestColumns.build(allocator, "x", Layout.LIST, ElementType.FLOAT32, rows)) {
      String onOne =
          catchMessage(() -> one.normalize(input, List.of(weighted), new NormalizationMetrics()));
      assertThat(onOne).contains("row 1250");
      for (int repeat = 0; repeat < 5; repeat++) {
        assertThatThrownBy(() -> spread.normalize(input, List.of(weighted), metrics))
            .isExactlyInstanceOf(EmbedNormException.class)
            .hasMessage(onOne);
      }
    }
    assertThat(metrics.cpuFallbackCalls()).isZero();
    assertThat(devices).allSatisfy(device -> assertThat(device.openSessions()).isZero());
  }

  /**
   * Four threads share three devices that take one session each: each call holds several devices'
   * sessions at once, and calls waiting for them never wait on each other in a circle.
   */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void callsFromSeveralThreadsAtOnceGetTheirOwnResults() throws Exception {
    Double[][] rows = rows(SEED, Layout.LIST, ElementType.FLOAT32);
    byte[] expected;
    try (FieldVector input =
            TestColumns.build(allocator, "x", Layout.LIST, ElementType.FLOAT32, rows);
        FieldVector output = spread.normalize(input, STEP)) {
      expected = ElementBits.elementBytes(output);
    }
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> results = new ArrayList<>();
      for (int thread = 0; thread < 4; thread++) {
        results.add(
            pool.submit(
                () -> {
                  for (int call = 0; call < 10; call++) {
                    try (FieldVector input =
                            TestColumns.build(
                                allocator, "x", Layout.LIST, ElementType.FLOAT32, rows);
                        FieldVector output = spread.normalize(input, STEP)) {
                      assertThat(ElementBits.elementBytes(output)).isEqualTo(expected);
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

  @Test
  void theNormalizerNamesEveryDeviceAndClosesEveryEngine() {
    assertThat(spread.device()).isEqualTo(Device.GPU);
    assertThat(spread.engineDescription()).isEqualTo("test gpu 0, test gpu 1, test gpu 2");
    spread.close();
    assertThat(devices).allSatisfy(device -> assertThat(device.isClosed()).isTrue());
  }

  @Test
  void deviceListsAreChecked() {
    assertThatThrownBy(() -> ArrowNormalizer.builder(allocator).gpuOrdinals())
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot use GPUs []: the list is empty (name at least one GPU, or all GPUs)");
    assertThatThrownBy(() -> ArrowNormalizer.builder(allocator).gpuOrdinals(0, 1, 0))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot use GPUs [0, 1, 0]: GPU 0 is listed twice");
    assertThatThrownBy(() -> ArrowNormalizer.builder(allocator).gpuOrdinals(List.of(0, -1)))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot use GPUs [0, -1]: ordinals start at 0");
    assertThatThrownBy(() -> DeviceEngines.checkOnHost(List.of(0, 3), 2))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot use GPUs [0, 3]: this host has 2");
    DeviceEngines.checkOnHost(List.of(1, 0), 2);
  }

  @Test
  void withoutAGpuAutoTakesTheCpuAndGpuSaysWhy() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why != null, "a GPU is usable here");
    try (ArrowNormalizer auto = ArrowNormalizer.builder(allocator).gpuOrdinals(0, 1).build();
        ArrowNormalizer all = ArrowNormalizer.builder(allocator).allGpus().build()) {
      assertThat(auto.device()).isEqualTo(Device.CPU);
      assertThat(auto.deviceReason()).isEqualTo("auto chose cpu: " + why);
      assertThat(all.device()).isEqualTo(Device.CPU);
    }
    assertThatThrownBy(
            () ->
                ArrowNormalizer.builder(allocator)
                    .device(DeviceChoice.GPU)
                    .gpuOrdinals(0, 1)
                    .build())
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot use device gpu: " + why + "; use device auto or cpu");
  }

  private ArrowNormalizer normalizerOn(List<RecordingGpuEngine> engines) {
    return new ArrowNormalizer(
        allocator,
        DeviceEngines.ofGpus(new ArrayList<NormalizationEngine>(engines), "test"),
        ArrowNormalizer.DEFAULT_CHUNK_BYTES,
        CHUNK_BYTES);
  }

  /** Gaussian rows, ragged in a list, with a null row and a row holding a null element. */
  private static Double[][] rows(long seed, Layout layout, ElementType type) {
    Random random = new Random(seed);
    Double[][] rows =
        TestColumns.gaussianRows(
            random,
            type,
            ROWS,
            row -> layout == Layout.LIST && row % 3 == 2 ? random.nextInt(2 * WIDTH) : WIDTH);
    rows[7] = null;
    rows[10][3] = null;
    return rows;
  }

  private static String catchMessage(Runnable call) {
    try {
      call.run();
    } catch (EmbedNormException expected) {
      return expected.getMessage();
    }
    throw new AssertionError("no error");
  }
}

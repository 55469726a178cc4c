package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.GpuFaults;
import io.embednorm.engine.InternalSwitch;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What the Arrow API does when the GPU fails, on CI: a GPU engine without a GPU ({@link
 * FaultingGpuEngine}) faulted through the same switches as the CUDA engine. A GPU fault, or no
 * memory at the split floor, runs the whole call again on the CPU engine (bit for bit the CPU
 * engine's result, within the float64 reference's bounds) and the metrics say so; an out-of-memory
 * that splitting cures stays on the GPU, bit for bit the unfaulted result.
 */
class GpuFallbackTest {
  static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  static final int ROWS = 1500;
  private static final int WIDTH = 96;

  /** 256 KiB chunks: 3 of them per call, each split twice before the 64 KiB floor. */
  static final long CHUNK_BYTES = 256 << 10;

  private static final Normalization STEP = Normalization.of(Op.LAYER_NORM);

  @TempDir Path directory;
  BufferAllocator allocator;
  ArrowNormalizer gpu;
  ArrowNormalizer cpu;
  Double[][] rows;

  @BeforeEach
  void open() {
    System.out.println("GpuFallbackTest seed " + SEED);
    rows = TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, ROWS, row -> WIDTH);
    rows[7] = null;
    allocator = new RootAllocator();
    gpu = newGpu(allocator);
    cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
    GpuFaults.reset();
  }

  @AfterEach
  void close() {
    clear(InternalSwitches.FAULTS_FAIL_GPU_CALL);
    clear(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK);
    clear(InternalSwitches.FAULTS_OUT_OF_MEMORY_CHUNKS);
    gpu.close();
    cpu.close();
    allocator.close(); // throws on a leak, failing the test
  }

  /** The normalizer on the GPU under test, with chunks of {@link #CHUNK_BYTES}. */
  ArrowNormalizer newGpu(BufferAllocator allocator) {
    return new ArrowNormalizer(
        allocator,
        new EngineSelection(new FaultingGpuEngine(), "test"),
        ArrowNormalizer.DEFAULT_CHUNK_BYTES,
        CHUNK_BYTES);
  }

  /** Whether every GPU result differs from the CPU engine's (the test GPU's flipped bits). */
  boolean gpuBitsDifferFromTheCpus() {
    return true;
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Layout.class)
  void aGpuFaultRunsTheWholeCallOnTheCpuEngine(Layout layout) {
    byte[] onCpu = normalizeOn(cpu, layout, new NormalizationMetrics());
    byte[] onGpu = normalizeOn(gpu, layout, new NormalizationMetrics());
    if (gpuBitsDifferFromTheCpus()) {
      assertThat(onGpu).as("the test GPU's bits differ from the CPU's").isNotEqualTo(onCpu);
    }

    set(InternalSwitches.FAULTS_FAIL_GPU_CALL, 3);
    NormalizationMetrics metrics = new NormalizationMetrics();
    byte[] faulted = normalizeOn(gpu, layout, metrics);

    assertThat(faulted).as("bit for bit the CPU engine's").isEqualTo(onCpu);
    assertThat(metrics.cpuFallbackCalls()).isEqualTo(1);
    assertThat(metrics.cpuFallbackRows()).isEqualTo(ROWS);
    assertThat(metrics.cpuFallbackReason())
        .startsWith("GpuFaultException: Cannot run GPU call 3 (a chunk of ");
    assertThat(metrics.outOfMemorySplits()).isZero();
  }

  @Test
  void anOutOfMemoryThatSplittingCuresStaysOnTheGpu() {
    byte[] unfaulted = normalizeOn(gpu, Layout.FIXED_SIZE_LIST, new NormalizationMetrics());

    set(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK, 2);
    NormalizationMetrics metrics = new NormalizationMetrics();
    byte[] split = normalizeOn(gpu, Layout.FIXED_SIZE_LIST, metrics);

    assertThat(split).as("bit for bit the unfaulted GPU result").isEqualTo(unfaulted);
    assertThat(metrics.outOfMemorySplits()).isEqualTo(1);
    assertThat(metrics.cpuFallbackCalls()).isZero();
    assertThat(metrics.cpuFallbackReason()).isNull();
    assertThat(metrics.chunks()).isEqualTo(4);
  }

  @Test
  void anOutOfMemoryAtTheSplitFloorRunsTheWholeCallOnTheCpuEngine() {
    byte[] onCpu = normalizeOn(cpu, Layout.FIXED_SIZE_LIST, new NormalizationMetrics());

    set(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK, 2);
    set(InternalSwitches.FAULTS_OUT_OF_MEMORY_CHUNKS, 1000);
    NormalizationMetrics metrics = new NormalizationMetrics();
    byte[] faulted = normalizeOn(gpu, Layout.FIXED_SIZE_LIST, metrics);

    assertThat(faulted).as("bit for bit the CPU engine's").isEqualTo(onCpu);
    // 256 KiB, then 128 KiB, were split; 64 KiB is the floor.
    assertThat(metrics.outOfMemorySplits()).isEqualTo(2);
    assertThat(metrics.cpuFallbackCalls()).isEqualTo(1);
    assertThat(metrics.cpuFallbackReason()).startsWith("GpuOutOfMemoryException: ");
  }

  @Test
  void aRowThatDoesNotFitTheWeightIsTheCallersErrorNotAFallback() {
    Normalization misfit = Normalization.of(Op.RMS_NORM).withWeight(new double[WIDTH + 1]);
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (FieldVector input =
        TestColumns.build(allocator, "x", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, rows)) {
      assertThatThrownBy(() -> gpu.normalize(input, List.of(misfit), metrics))
          .isExactlyInstanceOf(EmbedNormException.class)
          .hasMessageContaining("row 0");
    }
    assertThat(metrics.cpuFallbackCalls()).isZero();
  }

  @Test
  void theFileCommandsRecordBatchPathReportsTheBatchThatFellBack() {
    Path input = directory.resolve("in.arrow");
    Path output = directory.resolve("out.arrow");
    List<VectorSchemaRoot> batches = new ArrayList<>();
    try {
      for (int batch = 0; batch < 3; batch++) {
        FieldVector column =
            TestColumns.build(allocator, "x", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, rows);
        batches.add(new VectorSchemaRoot(List.of(column.getField()), List.of(column), ROWS));
      }
      ArrowFiles.writeFile(input, allocator, batches.toArray(VectorSchemaRoot[]::new));
    } finally {
      batches.forEach(VectorSchemaRoot::close);
    }
    byte[] onCpu = normalizeOn(cpu, Layout.FIXED_SIZE_LIST, new NormalizationMetrics());
    byte[] onGpu = normalizeOn(gpu, Layout.FIXED_SIZE_LIST, new NormalizationMetrics());
    // Each batch is 3 chunks: call 5 is the second batch's second chunk.
    set(InternalSwitches.FAULTS_FAIL_GPU_CALL, 5);

    NormalizeResult result = ArrowFiles.normalizeFile(input, output, "x", STEP, gpu, allocator);

    assertThat(result.cpuFallbackBatches()).isEqualTo(1);
    assertThat(result.cpuFallbackReason()).startsWith("GpuFaultException: Cannot run GPU call 5");
    List<VectorSchemaRoot> written = ArrowFiles.readFile(output, allocator);
    try {
      assertThat(elementBytes(written.get(0).getVector(0))).isEqualTo(onGpu);
      assertThat(elementBytes(written.get(1).getVector(0))).isEqualTo(onCpu);
      assertThat(elementBytes(written.get(2).getVector(0))).isEqualTo(onGpu);
    } finally {
      written.forEach(VectorSchemaRoot::close);
    }
  }

  /** Normalizes the rows on {@code normalizer}, checks them against the float64 reference. */
  byte[] normalizeOn(ArrowNormalizer normalizer, Layout layout, NormalizationMetrics metrics) {
    try (FieldVector input = TestColumns.build(allocator, "x", layout, ElementType.FLOAT32, rows);
        FieldVector output = normalizer.normalize(input, List.of(STEP), metrics)) {
      ReferenceCheck.assertNormalized(
          STEP,
          ElementType.FLOAT32,
          rows,
          TestColumns.read(output),
          "seed " + SEED + " on " + normalizer.engineDescription());
      return elementBytes(output);
    }
  }

  private static byte[] elementBytes(FieldVector vector) {
    FieldVector elements = ListColumn.elementsOf(vector);
    ArrowBuf data = elements.getDataBuffer();
    byte[] bytes = new byte[elements.getValueCount() * ElementType.FLOAT32.byteWidth()];
    data.getBytes(0, bytes);
    return bytes;
  }

  static void set(InternalSwitch<Integer> entry, int value) {
    System.setProperty(entry.name(), Integer.toString(value));
  }

  private static void clear(InternalSwitch<?> entry) {
    System.clearProperty(entry.name());
  }
}

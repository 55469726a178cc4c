package io.embednorm.arrow;

import static io.embednorm.arrow.TestColumns.Layout.FIXED_SIZE_LIST;
import static io.embednorm.arrow.TestColumns.Layout.LIST;
import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.arrow.TestFiles.Shape;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.GpuFaults;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The mapped path of {@link ArrowFiles#normalizeFile} on a GPU, on CI: the test GPU whose lanes
 * copy host memory asynchronously ({@link HostCopyGpuEngine}), counted host memory for the staging
 * slots, slots of an odd size (24 KiB + 8, so batches go in several chunks and wide rows in slots
 * of their own). Its output reads back exactly as the record-batch path's on the same test GPU:
 * same schema, rows, validity and value bits; a GPU fault gives the CPU mapped path's output; every
 * slot is freed.
 */
class MappedGpuPathTest {
  private static final long SEED = TestSeeds.seeds()[TestSeeds.seeds().length - 1];

  @TempDir Path directory;
  private BufferAllocator allocator;
  private CountingHostMemory memory;

  @BeforeEach
  void open() {
    System.out.println("MappedGpuPathTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
    System.setProperty(InternalSwitches.STAGING_SLOT_BYTES.name(), Long.toString((24 << 10) + 8));
    GpuFaults.reset();
    allocator = new RootAllocator();
    memory = new CountingHostMemory();
  }

  @AfterEach
  void close() {
    System.clearProperty(InternalSwitches.STAGING_SLOT_BYTES.name());
    System.clearProperty(InternalSwitches.STAGING_POOL_BYTES.name());
    System.clearProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name());
    GpuFaults.reset();
    assertThat(memory.allocatedBytes()).as("slot bytes left").isZero();
    allocator.close(); // throws on a leak, failing the test
  }

  static Stream<Arguments> opsLayoutsTypesAndWidths() {
    List<Arguments> cases = new ArrayList<>();
    for (Op op : Op.values()) {
      cases.add(Arguments.of(op, FIXED_SIZE_LIST, ElementType.FLOAT32, 17));
      cases.add(Arguments.of(op, LIST, ElementType.FLOAT32, 60));
      cases.add(Arguments.of(op, FIXED_SIZE_LIST, ElementType.FLOAT16, 33));
      cases.add(Arguments.of(op, LIST, ElementType.FLOAT64, 33));
    }
    cases.add(Arguments.of(Op.RMS_NORM, FIXED_SIZE_LIST, ElementType.FLOAT32, 7000));
    cases.add(Arguments.of(Op.LAYER_NORM, LIST, ElementType.FLOAT32, 9000));
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} {1} {2} width {3}")
  @MethodSource("opsLayoutsTypesAndWidths")
  void writesWhatTheRecordBatchPathWritesOnTheGpu(Op op, Layout layout, ElementType type, int width)
      throws IOException {
    long seed = TestSeeds.mix(SEED, op.ordinal(), layout.ordinal(), type.ordinal(), width);
    Path input = directory.resolve("in.arrow");
    int rows = Math.max(4, Math.min(600, 200_000 / width));
    TestFiles.write(
        allocator,
        input,
        new Shape(layout, type, width, 3, rows, 0.15),
        new Random(seed),
        ArrowFormat.FILE);
    Normalization normalization = Normalization.of(op);
    NormalizeResult mapped = onGpu(input, normalization, "mapped.arrow");
    assertThat(mapped.path()).as(mapped.pathReason()).isEqualTo(FileNormalizationPath.MAPPED);
    assertThat(mapped.pathReason()).contains("staged from the file to the GPU");
    assertThat(mapped.cpuFallbackBatches()).as(mapped.cpuFallbackReason()).isZero();
    Path batches = directory.resolve("record-batches.arrow");
    try (ArrowNormalizer gpu =
        new ArrowNormalizer(
            allocator,
            new EngineSelection(new HostCopyGpuEngine(seed, 100), "test"),
            ArrowNormalizer.DEFAULT_CHUNK_BYTES,
            64 << 10)) {
      NormalizeResult expected =
          ArrowFiles.normalizeFile(input, batches, "embedding", normalization, gpu, allocator);
      assertThat(expected.path()).isEqualTo(FileNormalizationPath.RECORD_BATCH);
      assertThat(mapped.rows()).isEqualTo(expected.rows());
    }
    TestFiles.assertSameContents(
        allocator, batches, directory.resolve("mapped.arrow"), "embedding", "seed " + seed);
  }

  /**
   * A pool of one slot for a file of many chunks, ragged rows and rows wider than a slot: each
   * chunk waits for the writer to hand the slot back, and the output is the same.
   */
  @Test
  void oneSlotCarriesAFileOfManyChunks() throws IOException {
    System.setProperty(
        InternalSwitches.STAGING_POOL_BYTES.name(), Long.toString(2 * ((24 << 10) + 8)));
    writesWhatTheRecordBatchPathWritesOnTheGpu(Op.LAYER_NORM, LIST, ElementType.FLOAT32, 900);
    writesWhatTheRecordBatchPathWritesOnTheGpu(
        Op.RMS_NORM, FIXED_SIZE_LIST, ElementType.FLOAT32, 7000);
  }

  /** A GPU fault at the third chunk: every batch's values are written again on the CPU engine. */
  @Test
  void aGpuFaultWritesTheValuesOnTheCpuEngine() throws IOException {
    Path input = directory.resolve("in.arrow");
    TestFiles.write(
        allocator,
        input,
        new Shape(LIST, ElementType.FLOAT32, 80, 3, 400, 0.1),
        new Random(SEED),
        ArrowFormat.FILE);
    Normalization softmax = Normalization.of(Op.SOFTMAX);
    System.setProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name(), "3");
    NormalizeResult result = onGpu(input, softmax, "mapped.arrow");
    System.clearProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name());
    assertThat(result.path()).isEqualTo(FileNormalizationPath.MAPPED);
    assertThat(result.cpuFallbackBatches()).isEqualTo(3);
    assertThat(result.cpuFallbackReason()).startsWith("GpuFaultException: ");
    Path onCpu = directory.resolve("cpu.arrow");
    ArrowFiles.normalizeFile(input, onCpu, "embedding", softmax, DeviceChoice.CPU, rows -> {});
    TestFiles.assertSameContents(
        allocator, onCpu, directory.resolve("mapped.arrow"), "embedding", "seed " + SEED);
    try (var files = Files.list(directory)) {
      assertThat(files.count()).as("no temporary file left").isEqualTo(3);
    }
  }

  private NormalizeResult onGpu(Path input, Normalization normalization, String name) {
    return ArrowFiles.normalizeFile(
        new ArrowFiles.FileJob(input, directory.resolve(name), "embedding", normalization, r -> {}),
        DeviceChoice.GPU,
        new EngineSelection(new HostCopyGpuEngine(SEED, 100), "test"),
        memory,
        System.nanoTime());
  }
}

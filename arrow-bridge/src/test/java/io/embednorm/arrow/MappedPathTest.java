package io.embednorm.arrow;

import static io.embednorm.arrow.TestColumns.Layout.FIXED_SIZE_LIST;
import static io.embednorm.arrow.TestColumns.Layout.LIST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.arrow.TestFiles.Shape;
import io.embednorm.arrow.internal.MappedColumnPlan;
import io.embednorm.arrow.internal.MappedFileNormalization;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The mapped path of {@link ArrowFiles#normalizeFile} writes files that Arrow reads back exactly as
 * the record-batch path's: same schema, rows, validity and value bits, for every op, both layouts,
 * widths 1 to 768, null rows, several batches and any thread count.
 */
class MappedPathTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());

  @TempDir Path directory;
  private BufferAllocator allocator;

  @BeforeAll
  static void printSeed() {
    System.out.println("MappedPathTest seed " + SEED + " (-Dembednorm.test.seed=" + SEED + ")");
  }

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void close() {
    allocator.close(); // throws on a leak, failing the test
  }

  static Stream<Arguments> opsLayoutsTypesAndWidths() {
    List<Arguments> cases = new ArrayList<>();
    for (Op op : Op.values()) {
      for (int width : new int[] {1, 3, 17, 768}) {
        cases.add(Arguments.of(op, FIXED_SIZE_LIST, ElementType.FLOAT32, width));
      }
      for (int width : new int[] {1, 9, 300}) {
        cases.add(Arguments.of(op, LIST, ElementType.FLOAT32, width));
      }
      for (ElementType type : List.of(ElementType.FLOAT64, ElementType.FLOAT16)) {
        cases.add(Arguments.of(op, FIXED_SIZE_LIST, type, 33));
        cases.add(Arguments.of(op, LIST, type, 33));
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} {1} {2} width {3}")
  @MethodSource("opsLayoutsTypesAndWidths")
  void mappedPathWritesWhatTheRecordBatchPathWrites(
      Op op, Layout layout, ElementType type, int width) throws IOException {
    long seed = SEED ^ (op.ordinal() * 1_000_003L + layout.ordinal() * 101L + width);
    String context = String.format("seed %d (-Dembednorm.test.seed=%d)", seed, SEED);
    Path input = directory.resolve("in.arrow");
    TestFiles.write(
        allocator,
        input,
        new Shape(layout, type, width, 4, 40, 0.15),
        new Random(seed),
        ArrowFormat.FILE);
    assertBothPathsAgree(input, Normalization.of(op), context);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void weightAndBiasThatFitEveryRowStayOnTheMappedPath(Layout layout) throws IOException {
    Path input = directory.resolve("in.arrow");
    Random random = new Random(SEED);
    if (layout == FIXED_SIZE_LIST) {
      TestFiles.write(
          allocator,
          input,
          new Shape(layout, ElementType.FLOAT32, 5, 3, 30, 0.2),
          random,
          ArrowFormat.FILE);
    } else {
      // Rows of a List differ in width; the mapped path takes them when every one fits the
      // weight (or is empty), which random widths rarely give.
      writeListOfWidths(input, random);
    }
    double[] gamma = {1, -2, 0.5, 3, 0.25};
    double[] beta = {0, 1, -1, 0.5, 2};
    Normalization layerNorm = Normalization.of(Op.LAYER_NORM).withWeight(gamma).withBias(beta);
    assertBothPathsAgree(input, layerNorm, "seed " + SEED);
  }

  static Stream<Layout> layouts() {
    return Stream.of(Layout.values());
  }

  private void writeListOfWidths(Path path, Random random) throws IOException {
    Double[][] rows = TestColumns.gaussianRows(random, ElementType.FLOAT32, 50, row -> 5);
    rows[3] = new Double[0];
    rows[7] = null;
    try (FieldVector column =
            TestColumns.build(allocator, "embedding", LIST, ElementType.FLOAT32, rows);
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(column))) {
      ArrowFiles.writeFile(path, allocator, root, root);
    }
  }

  @Test
  void rowBitsDoNotDependOnThreadsOrPieces() throws IOException {
    Path input = directory.resolve("in.arrow");
    // Batches of about 2 MB, so that each is cut into several pieces.
    TestFiles.write(
        allocator,
        input,
        new Shape(FIXED_SIZE_LIST, ElementType.FLOAT32, 257, 3, 2000, 0.05),
        new Random(SEED),
        ArrowFormat.FILE);
    Normalization softmax = Normalization.of(Op.SOFTMAX);
    List<byte[]> outputs = new ArrayList<>();
    for (int threads : new int[] {1, 2, 3}) {
      Path output = directory.resolve("out-" + threads + ".arrow");
      try (MappedColumnPlan plan = MappedColumnPlan.open(input, "embedding", softmax)) {
        MappedFileNormalization.run(plan, output, softmax, threads, rows -> {});
      }
      outputs.add(Files.readAllBytes(output));
    }
    assertThat(outputs.get(1)).as("seed %d, 2 threads", SEED).isEqualTo(outputs.get(0));
    assertThat(outputs.get(2)).as("seed %d, 3 threads", SEED).isEqualTo(outputs.get(0));
    assertBothPathsAgree(input, softmax, "seed " + SEED);
  }

  @Test
  void inputCutShortAfterPlanningFailsAndLeavesNoOutput() throws IOException {
    Path input = directory.resolve("in.arrow");
    TestFiles.write(
        allocator,
        input,
        new Shape(FIXED_SIZE_LIST, ElementType.FLOAT32, 257, 2, 2000, 0),
        new Random(SEED),
        ArrowFormat.FILE);
    Path output = directory.resolve("out.arrow");
    Normalization rms = Normalization.of(Op.RMS_NORM);
    try (MappedColumnPlan plan = MappedColumnPlan.open(input, "embedding", rms)) {
      long size = Files.size(input);
      // The file is read again after planning (its other bytes, then its values piece by piece):
      // a file cut short meanwhile must fail the run, not leave zeros or stale bytes behind.
      try (FileChannel channel = FileChannel.open(input, StandardOpenOption.WRITE)) {
        channel.truncate(size / 2);
      }
      assertThatThrownBy(() -> MappedFileNormalization.run(plan, output, rms, 2, rows -> {}))
          .isInstanceOf(IOException.class)
          .hasMessageStartingWith("the input ended at byte " + size / 2 + " of ");
    }
    assertThat(output).doesNotExist();
    try (var files = Files.list(directory)) {
      assertThat(files).containsExactly(input);
    }
  }

  @Test
  void reportsRowsAfterEachBatchAndWhatRan() throws IOException {
    Path input = directory.resolve("in.arrow");
    List<Double[][]> batches =
        TestFiles.write(
            allocator,
            input,
            new Shape(FIXED_SIZE_LIST, ElementType.FLOAT32, 8, 3, 10, 0.1),
            new Random(SEED),
            ArrowFormat.FILE);
    List<Long> progress = new ArrayList<>();
    NormalizeResult result =
        ArrowFiles.normalizeFile(
            input,
            directory.resolve("out.arrow"),
            "embedding",
            Normalization.of(Op.RMS_NORM),
            DeviceChoice.CPU,
            progress::add);
    long first = batches.get(0).length;
    long second = first + batches.get(1).length;
    long rows = second + batches.get(2).length;
    assertThat(progress).containsExactly(first, second, rows);
    assertThat(result.rows()).isEqualTo(rows);
    assertThat(result.batches()).isEqualTo(3);
    assertThat(result.inputFormat()).isEqualTo(ArrowFormat.FILE);
    assertThat(result.inputBytes()).isEqualTo(Files.size(input));
    assertThat(result.outputBytes()).isEqualTo(Files.size(directory.resolve("out.arrow")));
    assertThat(result.device()).isEqualTo(Device.CPU);
    assertThat(result.deviceReason()).isEqualTo("cpu was requested");
    assertThat(result.path()).isEqualTo(FileNormalizationPath.MAPPED);
    assertThat(result.pathReason())
        .isEqualTo("FixedSizeList<float32>(8) in 3 uncompressed record batches");
    assertThat(TestFiles.files(directory)).containsExactly("in.arrow", "out.arrow");
  }

  @Test
  void outputMayNotBeTheInput() throws IOException {
    Path input = directory.resolve("in.arrow");
    TestFiles.write(
        allocator,
        input,
        new Shape(LIST, ElementType.FLOAT32, 12, 3, 20, 0.1),
        new Random(SEED),
        ArrowFormat.FILE);
    byte[] original = Files.readAllBytes(input);
    Normalization l2 = Normalization.of(Op.L2_NORMALIZE);
    assertThatThrownBy(
            () ->
                ArrowFiles.normalizeFile(
                    input, input, "embedding", l2, DeviceChoice.CPU, rows -> {}))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith("Cannot write output '" + input + "': it is the input file");
    assertThat(Files.readAllBytes(input)).isEqualTo(original);
    assertThat(TestFiles.files(directory)).containsExactly("in.arrow");
  }

  @Test
  void dictionaryEncodedColumnsBeforeTheEmbeddingPassThrough() throws IOException {
    Path input = directory.resolve("in.arrow");
    Double[][] rows = TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 6, row -> 4);
    rows[2] = null;
    String[] labels = {"cat", "dog", "cat", "cat", "dog", "dog"};
    TestFiles.writeWithDictionary(allocator, input, FIXED_SIZE_LIST, rows, labels, 2);
    assertBothPathsAgree(input, Normalization.of(Op.LOG_SOFTMAX), "seed " + SEED);
  }

  /** Runs both paths on {@code input} and compares what Arrow reads from their outputs. */
  private void assertBothPathsAgree(Path input, Normalization normalization, String context)
      throws IOException {
    Path batches = directory.resolve("record-batches.arrow");
    Path mapped = directory.resolve("mapped.arrow");
    Files.deleteIfExists(batches);
    Files.deleteIfExists(mapped);
    NormalizeResult expected;
    try (ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      expected =
          ArrowFiles.normalizeFile(input, batches, "embedding", normalization, cpu, allocator);
    }
    NormalizeResult actual =
        ArrowFiles.normalizeFile(
            input, mapped, "embedding", normalization, DeviceChoice.CPU, rows -> {});
    assertThat(expected.path()).isEqualTo(FileNormalizationPath.RECORD_BATCH);
    assertThat(actual.path())
        .as("%s: %s", context, actual.pathReason())
        .isEqualTo(FileNormalizationPath.MAPPED);
    assertThat(actual.rows()).isEqualTo(expected.rows());
    assertThat(actual.batches()).isEqualTo(expected.batches());
    TestFiles.assertSameContents(allocator, batches, mapped, "embedding", context);
  }
}

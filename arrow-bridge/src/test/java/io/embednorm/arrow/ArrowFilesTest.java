package io.embednorm.arrow;

import static io.embednorm.arrow.TestColumns.Layout.FIXED_SIZE_LIST;
import static io.embednorm.arrow.TestColumns.Layout.LIST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
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
import java.util.function.IntBinaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ArrowFilesTest {
  private static final Normalization RMS = Normalization.of(Op.RMS_NORM);

  @TempDir Path directory;
  private BufferAllocator allocator;
  private NegatingEngine engine;
  private ArrowNormalizer negating;

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
    engine = new NegatingEngine();
    negating = new ArrowNormalizer(allocator, new EngineSelection(engine, "test"), 1 << 30);
  }

  @AfterEach
  void close() {
    negating.close();
    allocator.close(); // throws on a leak, failing the test
  }

  /** Three batches of (id BigInt, embedding) rows; ids count from 0 over the file. */
  private List<Double[][]> writeInput(Path path, Layout layout, ArrowFormat format)
      throws IOException {
    return writeInput(path, layout, format, (batch, row) -> layout == LIST ? 1 + row : 6);
  }

  /** As above, with the width of each row of each batch given. */
  private List<Double[][]> writeInput(
      Path path, Layout layout, ArrowFormat format, IntBinaryOperator width) throws IOException {
    Random random = new Random(41);
    List<Double[][]> batches = new ArrayList<>();
    List<VectorSchemaRoot> roots = new ArrayList<>();
    try {
      long id = 0;
      for (int batch = 0; batch < 3; batch++) {
        int batchIndex = batch;
        Double[][] rows =
            TestColumns.gaussianRows(
                random, ElementType.FLOAT32, 4 + batch, row -> width.applyAsInt(batchIndex, row));
        rows[1] = null;
        batches.add(rows);
        BigIntVector ids = new BigIntVector("id", allocator);
        ids.allocateNew(rows.length);
        for (int row = 0; row < rows.length; row++) {
          ids.set(row, id++);
        }
        ids.setValueCount(rows.length);
        FieldVector embedding =
            TestColumns.build(allocator, "embedding", layout, ElementType.FLOAT32, rows);
        roots.add(new VectorSchemaRoot(List.of(ids, embedding)));
      }
      if (format == ArrowFormat.FILE) {
        ArrowFiles.writeFile(path, allocator, roots.toArray(new VectorSchemaRoot[0]));
      } else {
        TestFiles.writeStream(path, allocator, roots);
      }
    } finally {
      roots.forEach(VectorSchemaRoot::close);
    }
    return batches;
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Layout.class)
  void roundTripOfFileAndStreamInputs(Layout layout) throws IOException {
    for (ArrowFormat format : ArrowFormat.values()) {
      Path input = directory.resolve("in-" + format + ".arrow");
      Path output = directory.resolve("out/normalized-" + format + ".arrow");
      List<Double[][]> batches = writeInput(input, layout, format);
      List<Long> progress = new ArrayList<>();
      NormalizeResult result =
          ArrowFiles.normalizeFile(
              input, output, "embedding", RMS, negating, allocator, progress::add);
      assertThat(result.rows()).isEqualTo(4 + 5 + 6);
      assertThat(result.batches()).isEqualTo(3);
      assertThat(result.inputFormat()).isEqualTo(format);
      assertThat(result.inputBytes()).isEqualTo(Files.size(input));
      assertThat(result.outputBytes()).isEqualTo(Files.size(output));
      assertThat(progress).containsExactly(4L, 9L, 15L);
      assertThat(engine.calls)
          .as("rows are numbered over the file")
          .extracting(NegatingEngine.Call::firstRowIndex)
          .contains(9L);
      engine.calls.clear();

      List<VectorSchemaRoot> read = ArrowFiles.readFile(output, allocator);
      try {
        assertThat(read).hasSize(3);
        long id = 0;
        for (int batch = 0; batch < 3; batch++) {
          VectorSchemaRoot root = read.get(batch);
          assertThat(root.getSchema().getFields().get(0).getName()).isEqualTo("id");
          BigIntVector ids = (BigIntVector) root.getVector("id");
          for (int row = 0; row < root.getRowCount(); row++) {
            assertThat(ids.get(row)).isEqualTo(id++);
          }
          assertThat(TestColumns.read(root.getVector("embedding")))
              .isDeepEqualTo(ArrowNormalizerLayoutTest.negated(batches.get(batch)));
        }
        List<VectorSchemaRoot> original = ArrowFiles.readFile(input, allocator);
        assertThat(read.get(0).getSchema()).isEqualTo(original.get(0).getSchema());
        original.forEach(VectorSchemaRoot::close);
      } finally {
        read.forEach(VectorSchemaRoot::close);
      }
      assertThat(files(output.getParent()))
          .contains(output.getFileName().toString())
          .noneMatch(name -> name.contains(".embednorm-partial-"));
    }
  }

  @Test
  void cpuEngineResultsMatchTheReference() throws IOException {
    Path input = directory.resolve("in.arrow");
    Path output = directory.resolve("out.arrow");
    List<Double[][]> batches = writeInput(input, LIST, ArrowFormat.FILE);
    Normalization layerNorm = Normalization.of(Op.LAYER_NORM);
    try (ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      ArrowFiles.normalizeFile(input, output, "embedding", layerNorm, cpu, allocator);
    }
    List<VectorSchemaRoot> read = ArrowFiles.readFile(output, allocator);
    try {
      for (int batch = 0; batch < batches.size(); batch++) {
        ReferenceCheck.assertNormalized(
            layerNorm,
            ElementType.FLOAT32,
            batches.get(batch),
            TestColumns.read(read.get(batch).getVector("embedding")),
            "batch " + batch);
      }
    } finally {
      read.forEach(VectorSchemaRoot::close);
    }
  }

  @Test
  void outputMayReplaceAnExistingFileButNotTheInput() throws IOException {
    Path input = directory.resolve("in.arrow");
    List<Double[][]> batches = writeInput(input, FIXED_SIZE_LIST, ArrowFormat.FILE);
    byte[] original = Files.readAllBytes(input);
    Path output = directory.resolve("out.arrow");
    Files.writeString(output, "old");
    ArrowFiles.normalizeFile(input, output, "embedding", RMS, negating, allocator);
    assertThatThrownBy(
            () -> ArrowFiles.normalizeFile(input, input, "embedding", RMS, negating, allocator))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith("Cannot write output '" + input + "': it is the input file");
    assertThat(Files.readAllBytes(input)).isEqualTo(original);
    List<VectorSchemaRoot> read = ArrowFiles.readFile(output, allocator);
    try {
      assertThat(TestColumns.read(read.get(2).getVector("embedding")))
          .isDeepEqualTo(ArrowNormalizerLayoutTest.negated(batches.get(2)));
    } finally {
      read.forEach(VectorSchemaRoot::close);
    }
    assertThat(files(directory)).containsExactlyInAnyOrder("in.arrow", "out.arrow");
  }

  @Test
  void dictionaryEncodedColumnsPassThrough() throws IOException {
    Path input = directory.resolve("in.arrow");
    Path output = directory.resolve("out.arrow");
    Double[][] rows = {{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}};
    String[] labels = {"cat", "dog", "cat"};
    TestFiles.writeWithDictionary(allocator, input, LIST, rows, labels, 1);

    ArrowFiles.normalizeFile(input, output, "embedding", RMS, negating, allocator);

    try (ArrowFileReader reader =
        new ArrowFileReader(FileChannel.open(output, StandardOpenOption.READ), allocator)) {
      assertThat(reader.loadNextBatch()).isTrue();
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      assertThat(TestColumns.read(root.getVector("embedding")))
          .isDeepEqualTo(ArrowNormalizerLayoutTest.negated(rows));
      FieldVector indices = root.getVector("label");
      Dictionary written =
          reader.getDictionaryVectors().get(indices.getField().getDictionary().getId());
      try (VarCharVector decoded = (VarCharVector) DictionaryEncoder.decode(indices, written)) {
        for (int row = 0; row < labels.length; row++) {
          assertThat(decoded.getObject(row).toString()).isEqualTo(labels[row]);
        }
      }
    }
  }

  @Test
  void missingColumnLeavesNoOutput() throws IOException {
    Path input = directory.resolve("in.arrow");
    writeInput(input, LIST, ArrowFormat.FILE);
    Path output = directory.resolve("out.arrow");
    assertThatThrownBy(
            () -> ArrowFiles.normalizeFile(input, output, "vector", RMS, negating, allocator))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot normalize column 'vector': no such column; the file '"
                + input
                + "' has columns id, embedding");
    assertThat(files(directory)).containsExactly("in.arrow");
  }

  @Test
  void wrongTypeLeavesNoOutputAndExistingOutputUntouched() throws IOException {
    Path input = directory.resolve("in.arrow");
    writeInput(input, LIST, ArrowFormat.STREAM);
    Path output = directory.resolve("out.arrow");
    Files.writeString(output, "previous result");
    assertThatThrownBy(
            () -> ArrowFiles.normalizeFile(input, output, "id", RMS, negating, allocator))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot normalize column 'id': its type is Int(64, true); expected a FixedSizeList"
                + " or List of float32, float64 or float16");
    assertThat(Files.readString(output)).isEqualTo("previous result");
    assertThat(files(directory)).containsExactlyInAnyOrder("in.arrow", "out.arrow");
  }

  @Test
  void weightMismatchInALaterBatchNamesTheFileRowAndLeavesNoOutput() throws IOException {
    Path input = directory.resolve("in.arrow");
    writeInput(input, LIST, ArrowFormat.FILE, (batch, row) -> batch == 2 && row == 2 ? 3 : 4);
    Path output = directory.resolve("out.arrow");
    Files.writeString(output, "previous result");
    Normalization weighted = RMS.withWeight(new double[] {1, 2, 3, 4});
    try (ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      assertThatThrownBy(
              () -> ArrowFiles.normalizeFile(input, output, "embedding", weighted, cpu, allocator))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot apply rms_norm to row 11: weight has 4 elements but the row has 3");
    }
    assertThat(Files.readString(output)).isEqualTo("previous result");
    assertThat(files(directory)).containsExactlyInAnyOrder("in.arrow", "out.arrow");
  }

  @Test
  void weightMismatchOfAFixedSizeListLeavesNoOutput() throws IOException {
    Path input = directory.resolve("in.arrow");
    writeInput(input, FIXED_SIZE_LIST, ArrowFormat.STREAM);
    Path output = directory.resolve("out.arrow");
    Normalization weighted = RMS.withWeight(new double[] {1, 2, 3, 4, 5, 6, 7});
    try (ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      assertThatThrownBy(
              () -> ArrowFiles.normalizeFile(input, output, "embedding", weighted, cpu, allocator))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot apply rms_norm to row 0: weight has 7 elements but the row has 6");
    }
    assertThat(files(directory)).containsExactly("in.arrow");
  }

  /** A GPU that cannot start is what a call that asked for it reports, whatever the file. */
  @Test
  void gpuThatCannotStartIsReportedBeforeTheFile() throws IOException {
    assumeTrue(Engines.gpuUnavailableReason() != null, "a GPU is usable here");
    Path good = directory.resolve("in.arrow");
    writeInput(good, FIXED_SIZE_LIST, ArrowFormat.FILE);
    Path notArrow = Files.writeString(directory.resolve("notes.txt"), "not Arrow");
    Path missing = directory.resolve("missing.arrow");
    Path output = directory.resolve("out.arrow");
    for (Path input : List.of(good, notArrow, missing)) {
      assertThatThrownBy(
              () ->
                  ArrowFiles.normalizeFile(
                      input, output, "embedding", RMS, DeviceChoice.GPU, rows -> {}))
          .as(input.toString())
          .isInstanceOf(EmbedNormException.class)
          .hasMessageStartingWith("Cannot use device gpu: ");
    }
    assertThat(files(directory)).containsExactlyInAnyOrder("in.arrow", "notes.txt");
  }

  @Test
  void unreadableInputsLeaveNoOutput() throws IOException {
    Path output = directory.resolve("out.arrow");
    Path text = directory.resolve("notes.txt");
    Files.writeString(text, "hello world, this is not Arrow");
    Path empty = directory.resolve("empty.arrow");
    Files.createFile(empty);
    Path missing = directory.resolve("missing.arrow");
    Path truncated = directory.resolve("truncated.arrow");
    Path whole = directory.resolve("whole.arrow");
    writeInput(whole, LIST, ArrowFormat.FILE);
    byte[] bytes = Files.readAllBytes(whole);
    Files.write(truncated, java.util.Arrays.copyOf(bytes, bytes.length / 2));
    Path truncatedStream = directory.resolve("truncated-stream.arrow");
    Path wholeStream = directory.resolve("whole-stream.arrow");
    writeInput(wholeStream, LIST, ArrowFormat.STREAM);
    bytes = Files.readAllBytes(wholeStream);
    Files.write(truncatedStream, java.util.Arrays.copyOf(bytes, bytes.length - 40));

    assertReadFailure(
        text,
        output,
        "it is neither an Arrow IPC file nor an Arrow IPC stream (it starts with bytes 68 65 6c"
            + " 6c 6f 20 77 6f)");
    assertReadFailure(empty, output, "the file is empty");
    assertReadFailure(missing, output, "no such file");
    assertReadFailure(truncated, output, null);
    assertReadFailure(truncatedStream, output, null);
    assertReadFailure(directory, output, null);
    assertThat(files(directory))
        .containsExactlyInAnyOrder(
            "notes.txt",
            "empty.arrow",
            "truncated.arrow",
            "whole.arrow",
            "truncated-stream.arrow",
            "whole-stream.arrow");
  }

  private void assertReadFailure(Path input, Path output, String why) {
    String prefix = "Cannot read Arrow file '" + input + "': ";
    assertThatThrownBy(
            () -> ArrowFiles.normalizeFile(input, output, "embedding", RMS, negating, allocator))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith(prefix)
        .satisfies(
            failure -> {
              if (why != null) {
                assertThat(failure.getMessage()).isEqualTo(prefix + why);
              }
            });
    assertThatThrownBy(() -> ArrowFiles.readFile(input, allocator))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith(prefix);
  }

  @Test
  void allocatorsMustShareARoot() throws IOException {
    Path input = directory.resolve("in.arrow");
    writeInput(input, LIST, ArrowFormat.FILE);
    try (BufferAllocator other = new RootAllocator()) {
      assertThatThrownBy(
              () ->
                  ArrowFiles.normalizeFile(
                      input, directory.resolve("out.arrow"), "embedding", RMS, negating, other))
          .isInstanceOf(EmbedNormException.class)
          .hasMessageContaining("must share one root allocator");
    }
    assertThat(files(directory)).containsExactly("in.arrow");
  }

  @Test
  void outputFileClosedWithoutCommitLeavesNothing() throws IOException {
    Path output = directory.resolve("out.arrow");
    Schema schema =
        new Schema(List.of(TestColumns.field("embedding", LIST, ElementType.FLOAT32, 0)));
    try (ArrowOutputFile file = ArrowOutputFile.create(output, schema, allocator)) {
      file.root().setRowCount(0);
      file.writeBatch();
      assertThat(files(directory))
          .hasSize(1)
          .allMatch(name -> name.startsWith("out.arrow.embednorm-partial-"));
    }
    assertThat(files(directory)).isEmpty();
  }

  private static List<String> files(Path directory) throws IOException {
    try (Stream<Path> entries = Files.list(directory)) {
      return entries
          .filter(Files::isRegularFile)
          .map(path -> path.getFileName().toString())
          .sorted()
          .collect(Collectors.toList());
    }
  }
}

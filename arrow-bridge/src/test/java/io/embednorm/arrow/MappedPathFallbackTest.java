package io.embednorm.arrow;

import static io.embednorm.arrow.TestColumns.Layout.FIXED_SIZE_LIST;
import static io.embednorm.arrow.TestColumns.Layout.LIST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.embednorm.arrow.TestFiles.Shape;
import io.embednorm.arrow.internal.MappedColumnPlan;
import io.embednorm.arrow.internal.MappedPathUnavailable;
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
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.AbstractCompressionCodec;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files the mapped path does not take go the record-batch path, which writes or reports what it
 * always did; and a mapped run that fails leaves no output behind.
 */
class MappedPathFallbackTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  private static final Normalization RMS = Normalization.of(Op.RMS_NORM);

  @TempDir Path directory;
  private BufferAllocator allocator;

  @BeforeAll
  static void printSeed() {
    System.out.println(
        "MappedPathFallbackTest seed " + SEED + " (-Dembednorm.test.seed=" + SEED + ")");
  }

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void close() {
    allocator.close(); // throws on a leak, failing the test
  }

  @Test
  void streamInputGoesTheRecordBatchPath() throws IOException {
    Path input = directory.resolve("in.arrows");
    TestFiles.write(allocator, input, shape(LIST), new Random(SEED), ArrowFormat.STREAM);
    assertRecordBatchPath(input, RMS, "the input is not in the Arrow IPC file format");
  }

  @Test
  void nullElementsInRowsThatAreNotNullGoTheRecordBatchPath() throws IOException {
    Path input = directory.resolve("in.arrow");
    Double[][] rows = TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 9, row -> 4);
    rows[2][1] = null;
    rows[5] = null;
    try (FieldVector column =
            TestColumns.build(allocator, "embedding", FIXED_SIZE_LIST, ElementType.FLOAT32, rows);
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(column))) {
      ArrowFiles.writeFile(input, allocator, root, root);
    }
    assertRecordBatchPath(input, RMS, "record batch 0 has null elements in rows that are not null");
  }

  @Test
  void compressedFileIsLeftToTheRecordBatchPath() throws IOException {
    Path input = directory.resolve("in.arrow");
    Double[][] rows = TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 5, row -> 3);
    try (FieldVector column =
            TestColumns.build(allocator, "embedding", FIXED_SIZE_LIST, ElementType.FLOAT32, rows);
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(column));
        FileChannel channel =
            FileChannel.open(input, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        ArrowFileWriter writer =
            new ArrowFileWriter(
                root,
                new DictionaryProvider.MapDictionaryProvider(),
                channel,
                Map.of(),
                IpcOption.DEFAULT,
                new StoredCodec.Factory(),
                CompressionUtil.CodecType.LZ4_FRAME)) {
      writer.writeBatch();
      writer.end();
    }
    assertPlanUnavailable(input, "embedding", RMS, "record batch 0 is compressed");
    // Arrow's reader without a codec factory cannot read it either: both paths say so.
    assertBothPathsFail(input, "embedding", RMS);
  }

  @Test
  void columnsOfOtherTypesAreLeftToTheRecordBatchPath() throws IOException {
    Path input = directory.resolve("in.arrow");
    TestFiles.write(allocator, input, shape(FIXED_SIZE_LIST), new Random(SEED), ArrowFormat.FILE);
    assertPlanUnavailable(
        input, "id", RMS, "column 'id' is not a FixedSizeList or List of floating point numbers");
    assertBothPathsFail(input, "id", RMS);
    assertPlanUnavailable(input, "vector", RMS, "the file has no column 'vector'");
    assertBothPathsFail(input, "vector", RMS);
  }

  @Test
  void weightThatDoesNotFitIsLeftToTheRecordBatchPath() throws IOException {
    Path input = directory.resolve("in.arrow");
    TestFiles.write(allocator, input, shape(FIXED_SIZE_LIST), new Random(SEED), ArrowFormat.FILE);
    Normalization weighted = RMS.withWeight(new double[] {1, 2, 3});
    assertPlanUnavailable(input, "embedding", weighted, "does not fit the weight or bias");
    assertBothPathsFail(input, "embedding", weighted);
  }

  @Test
  void missingInputIsReportedAsBefore() throws IOException {
    Path input = directory.resolve("missing.arrow");
    assertPlanUnavailable(input, "embedding", RMS, "the input cannot be opened");
    assertBothPathsFail(input, "embedding", RMS);
  }

  @Test
  void failureInALaterBatchLeavesNoOutput() throws IOException {
    Path input = directory.resolve("in.arrow");
    TestFiles.write(allocator, input, shape(FIXED_SIZE_LIST), new Random(SEED), ArrowFormat.FILE);
    Path output = directory.resolve("out.arrow");
    Files.writeString(output, "previous result");
    assertThatThrownBy(
            () ->
                ArrowFiles.normalizeFile(
                    input,
                    output,
                    "embedding",
                    RMS,
                    DeviceChoice.CPU,
                    rows -> {
                      if (rows > 45) {
                        throw new EmbedNormException("Cannot go on: stopped by the test");
                      }
                    }))
        .hasMessage("Cannot go on: stopped by the test");
    assertThat(Files.readString(output)).isEqualTo("previous result");
    assertThat(TestFiles.files(directory)).containsExactly("in.arrow", "out.arrow");
  }

  @Test
  void anOutputThatIsADirectoryIsRefusedBeforeAnyWrite() throws IOException {
    Path input = directory.resolve("in.arrow");
    TestFiles.write(allocator, input, shape(LIST), new Random(SEED), ArrowFormat.FILE);
    Path output = Files.createDirectory(directory.resolve("out.arrow"));
    Files.writeString(output.resolve("keep.txt"), "kept");
    assertThatThrownBy(
            () ->
                ArrowFiles.normalizeFile(
                    input, output, "embedding", RMS, DeviceChoice.CPU, rows -> {}))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot write output '" + output + "': it is a directory, not a regular file");
    assertThat(Files.readString(output.resolve("keep.txt"))).isEqualTo("kept");
    assertThat(TestFiles.files(directory)).containsExactly("in.arrow");
  }

  private static Shape shape(TestColumns.Layout layout) {
    return new Shape(layout, ElementType.FLOAT32, 6, 3, 20, 0.1);
  }

  private static void assertPlanUnavailable(
      Path input, String column, Normalization normalization, String reason) {
    assertThatThrownBy(() -> MappedColumnPlan.open(input, column, normalization).close())
        .isInstanceOf(MappedPathUnavailable.class)
        .extracting(failure -> ((MappedPathUnavailable) failure).reason())
        .asString()
        .contains(reason);
  }

  /** Asserts that the file goes the record-batch path, for {@code reason}, writing what it does. */
  private void assertRecordBatchPath(Path input, Normalization normalization, String reason)
      throws IOException {
    Path expected = directory.resolve("expected.arrow");
    Path actual = directory.resolve("actual.arrow");
    try (ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      ArrowFiles.normalizeFile(input, expected, "embedding", normalization, cpu, allocator);
    }
    NormalizeResult result =
        ArrowFiles.normalizeFile(
            input, actual, "embedding", normalization, DeviceChoice.CPU, rows -> {});
    assertThat(result.path()).isEqualTo(FileNormalizationPath.RECORD_BATCH);
    assertThat(result.pathReason()).isEqualTo("the mapped path does not apply: " + reason);
    TestFiles.assertSameContents(allocator, expected, actual, "embedding", "seed " + SEED);
  }

  /** Asserts that both paths fail with the same message and leave no output. */
  private void assertBothPathsFail(Path input, String column, Normalization normalization)
      throws IOException {
    List<String> before = TestFiles.files(directory);
    Path output = directory.resolve("out.arrow");
    String expected;
    try (ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      Throwable thrown =
          catchThrowable(
              () -> ArrowFiles.normalizeFile(input, output, column, normalization, cpu, allocator));
      assertThat(thrown).isInstanceOf(EmbedNormException.class);
      expected = thrown.getMessage();
    }
    assertThatThrownBy(
            () ->
                ArrowFiles.normalizeFile(
                    input, output, column, normalization, DeviceChoice.CPU, rows -> {}))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(expected);
    assertThat(TestFiles.files(directory)).isEqualTo(before);
  }

  /**
   * A codec that stores every buffer as it is, which the format allows (uncompressed length -1),
   * under the LZ4 name: a compressed file as far as its metadata goes.
   */
  private static final class StoredCodec extends AbstractCompressionCodec {
    @Override
    protected ArrowBuf doCompress(BufferAllocator allocator, ArrowBuf uncompressed) {
      // Longer than the input, so that the buffer is stored as it is.
      long length = uncompressed.writerIndex() + 2 * Long.BYTES;
      ArrowBuf longer = allocator.buffer(length);
      longer.writerIndex(length);
      return longer;
    }

    @Override
    protected ArrowBuf doDecompress(BufferAllocator allocator, ArrowBuf compressed) {
      throw new UnsupportedOperationException("stored buffers need no decompression");
    }

    @Override
    public CompressionUtil.CodecType getCodecType() {
      return CompressionUtil.CodecType.LZ4_FRAME;
    }

    /** Makes stored codecs, whatever the type asked for. */
    static final class Factory implements CompressionCodec.Factory {
      @Override
      public CompressionCodec createCodec(CompressionUtil.CodecType type) {
        return new StoredCodec();
      }

      @Override
      public CompressionCodec createCodec(CompressionUtil.CodecType type, int level) {
        return new StoredCodec();
      }
    }
  }
}

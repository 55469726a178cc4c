package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files whose buffers or blocks share the bytes that the mapped path writes in place (the column's
 * values): Arrow Java reads each buffer on its own, so the record-batch path writes what it reads,
 * while writing in place would also change the buffer sharing them. They go the record-batch path.
 */
class MappedPathOverlapTest {
  private static final Normalization L2 = Normalization.of(Op.L2_NORMALIZE);

  /** The embedding's values: its third buffer, 16 bytes into the body after the two bitmaps. */
  private static final long VALUES_BUFFER = 2;

  private static final long VALUES_OFFSET = 16;

  @TempDir Path directory;
  private BufferAllocator allocator;

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void close() {
    allocator.close(); // throws on a leak, failing the test
  }

  @Test
  void valuesOverTheRowValidityGoTheRecordBatchPath() throws IOException {
    Path input = write(false, 1);
    byte[] bytes = Files.readAllBytes(input);
    IpcStructure.Message batch = recordBatches(bytes).get(0);
    // The values start where the rows' validity bitmap does (offset 0), the element bitmap within.
    putLong(bytes, batch.buffersPosition() + VALUES_BUFFER * 16, 0);
    Files.write(input, bytes);
    assertRecordBatchPath(
        input,
        "record batch 0 has buffers 0 and 2 sharing bytes, where the column's values are written");
  }

  @Test
  void valuesOverAnotherColumnGoTheRecordBatchPath() throws IOException {
    Path input = write(true, 1);
    byte[] bytes = Files.readAllBytes(input);
    IpcStructure.Message batch = recordBatches(bytes).get(0);
    // 8 bytes later, the values' last 8 bytes are the label column's validity bitmap (buffer 3).
    putLong(bytes, batch.buffersPosition() + VALUES_BUFFER * 16, VALUES_OFFSET + 8);
    Files.write(input, bytes);
    assertRecordBatchPath(
        input,
        "record batch 0 has buffers 2 and 3 sharing bytes, where the column's values are written");
  }

  @Test
  void aBodyOverTheNextBlockGoesTheRecordBatchPath() throws IOException {
    Path input = write(false, 2);
    byte[] bytes = Files.readAllBytes(input);
    long block = new IpcStructure(bytes, true).blocksPosition;
    ByteBuffer all = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    // Block 0's metadata said 8 bytes longer: its body, 8 bytes later, ends in block 1's prefix.
    all.putInt((int) block + 8, all.getInt((int) block + 8) + 8);
    Files.write(input, bytes);
    assertRecordBatchPath(input, "the file has blocks that overlap one another or its footer");
  }

  /**
   * Writes {@code batches} equal batches of 9 rows of 2 float64s (then a label column when {@code
   * labelled}). The first value's low 24 bits are set, so that a bitmap read from its bytes marks
   * every element valid, as does the rows' bitmap read from the element bitmap's bytes.
   */
  private Path write(boolean labelled, int batches) throws IOException {
    Double[][] rows = new Double[9][];
    for (int row = 0; row < rows.length; row++) {
      rows[row] = new Double[] {0.5 + row, -1.25 * row};
    }
    rows[0][0] = Double.longBitsToDouble(0x3FF0_0000_00FF_FFFFL);
    Path input = directory.resolve("in.arrow");
    List<FieldVector> columns = new ArrayList<>();
    columns.add(
        TestColumns.build(
            allocator, "embedding", TestColumns.Layout.FIXED_SIZE_LIST, ElementType.FLOAT64, rows));
    if (labelled) {
      VarCharVector label = new VarCharVector("label", allocator);
      for (int row = 0; row < rows.length; row++) {
        label.setSafe(row, ("row " + row).getBytes(StandardCharsets.UTF_8));
      }
      label.setValueCount(rows.length);
      columns.add(label);
    }
    try (VectorSchemaRoot root = new VectorSchemaRoot(columns)) {
      VectorSchemaRoot[] written = new VectorSchemaRoot[batches];
      Arrays.fill(written, root);
      ArrowFiles.writeFile(input, allocator, written);
    }
    IpcStructure.Message first = recordBatches(Files.readAllBytes(input)).get(0);
    ByteBuffer all = ByteBuffer.wrap(Files.readAllBytes(input)).order(ByteOrder.LITTLE_ENDIAN);
    assertThat(all.getLong((int) (first.buffersPosition() + VALUES_BUFFER * 16)))
        .as("the values' offset in the body")
        .isEqualTo(VALUES_OFFSET);
    return input;
  }

  /** Asserts that the file goes the record-batch path, for {@code reason}, writing what it does. */
  private void assertRecordBatchPath(Path input, String reason) throws IOException {
    Path expected = directory.resolve("expected.arrow");
    Path actual = directory.resolve("actual.arrow");
    try (ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      ArrowFiles.normalizeFile(input, expected, "embedding", L2, cpu, allocator);
    }
    NormalizeResult result =
        ArrowFiles.normalizeFile(input, actual, "embedding", L2, DeviceChoice.CPU, rows -> {});
    ReferenceCheck.assertNormalized(
        L2, ElementType.FLOAT64, readRows(input), readRows(actual), "output");
    TestFiles.assertSameContents(allocator, expected, actual, "embedding", input.toString());
    assertThat(result.pathReason()).isEqualTo("the mapped path does not apply: " + reason);
    assertThat(result.path()).isEqualTo(FileNormalizationPath.RECORD_BATCH);
  }

  /** The embedding's rows of every batch, as Arrow Java reads them. */
  private Double[][] readRows(Path file) throws IOException {
    List<Double[]> rows = new ArrayList<>();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      while (reader.loadNextBatch()) {
        rows.addAll(
            Arrays.asList(TestColumns.read(reader.getVectorSchemaRoot().getVector("embedding"))));
      }
    }
    return rows.toArray(new Double[0][]);
  }

  private static List<IpcStructure.Message> recordBatches(byte[] bytes) {
    return new IpcStructure(bytes, true)
        .messages.stream().filter(IpcStructure.Message::isRecordBatch).toList();
  }

  private static void putLong(byte[] bytes, long position, long value) {
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong((int) position, value);
  }
}

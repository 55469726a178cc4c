package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged inputs that {@link ArrowFilesFuzzTest} found, one of each kind, each on both ways in: one
 * clean error, no output, no Arrow memory left allocated.
 */
class HostileInputTest {
  private static final Normalization RMS = Normalization.of(Op.RMS_NORM);

  @TempDir Path directory;

  @Test
  void aBodyLengthOfTwoToThe62IsACleanErrorNotAnOutOfMemoryError() throws IOException {
    Path input = write(Layout.FIXED_SIZE_LIST, ArrowFormat.FILE);
    byte[] bytes = Files.readAllBytes(input);
    IpcStructure structure = new IpcStructure(bytes, true);
    putLong(bytes, structure.blocksPosition + 16, 1L << 62);
    Files.write(input, bytes);
    assertCleanError(input, "Cannot read Arrow file");
  }

  @Test
  void anotherColumnsBufferOutsideTheBodyKeepsTheFileOffTheMappedPath() throws IOException {
    Path input = write(Layout.FIXED_SIZE_LIST, ArrowFormat.FILE);
    byte[] bytes = Files.readAllBytes(input);
    IpcStructure.Message batch =
        new IpcStructure(bytes, true)
            .messages.stream().filter(IpcStructure.Message::isRecordBatch).findFirst().get();
    // Buffer 1 is the data of the id column, before the embedding column.
    putLong(bytes, batch.buffersPosition() + 16, 1L << 31);
    Files.write(input, bytes);
    assertCleanError(input, "Cannot read Arrow file");
  }

  @Test
  void decreasingListOffsetsAreACleanError() throws IOException {
    Path input = write(Layout.LIST, ArrowFormat.STREAM);
    byte[] bytes = Files.readAllBytes(input);
    IpcStructure.Message batch =
        new IpcStructure(bytes, false)
            .messages.stream().filter(IpcStructure.Message::isRecordBatch).findFirst().get();
    ByteBuffer all = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    // Buffer 6 holds the embedding column's offsets: make row 1 end before it starts.
    long offsets = batch.bodyStart() + all.getLong((int) batch.buffersPosition() + 6 * 16);
    int rowOneStart = all.getInt((int) offsets + 4);
    all.putInt((int) offsets + 8, rowOneStart - 1);
    Files.write(input, bytes);
    assertCleanError(input, "Cannot normalize column 'embedding': its list offsets decrease");
  }

  @Test
  void aRecordBatchOfAnUnknownMessageTypeIsACleanErrorThatFreesItsBody() throws IOException {
    Path input = write(Layout.FIXED_SIZE_LIST, ArrowFormat.STREAM);
    byte[] bytes = Files.readAllBytes(input);
    IpcStructure.Message batch =
        new IpcStructure(bytes, false)
            .messages.stream().filter(IpcStructure.Message::isRecordBatch).findFirst().get();
    // Arrow Java's stream reader reads the body, then refuses the type and drops the body.
    bytes[(int) batch.headerTypePosition()] = 118;
    Files.write(input, bytes);
    assertCleanError(input, "Cannot read Arrow file");
  }

  @Test
  void aFileBlockOfAnotherMessageTypeIsRefusedBeforeArrowReadsItAsARecordBatch()
      throws IOException {
    Path input = write(Layout.FIXED_SIZE_LIST, ArrowFormat.FILE);
    byte[] bytes = Files.readAllBytes(input);
    IpcStructure.Message batch =
        new IpcStructure(bytes, true)
            .messages.stream().filter(IpcStructure.Message::isRecordBatch).findFirst().get();
    // Arrow Java's file reader takes a block's header as a record batch whatever its type says,
    // and leaks the block when a buffer lies outside the body.
    bytes[(int) batch.headerTypePosition()] = 118;
    putLong(bytes, batch.buffersPosition() + 16, 1L << 31);
    Files.write(input, bytes);
    assertCleanError(
        input,
        "Cannot read Arrow file '"
            + input
            + "': record batch 0 is a message of type 118 where a record batch belongs");
  }

  @Test
  void aBatchShorterThanItsColumnsIsACleanErrorNotAnOutputMissingRows() throws IOException {
    for (ArrowFormat format : ArrowFormat.values()) {
      Path input = write(Layout.FIXED_SIZE_LIST, format);
      byte[] bytes = Files.readAllBytes(input);
      IpcStructure.Message batch = firstBatch(bytes, format);
      long rows = getLong(bytes, batch.lengthPosition());
      // The batch says 2 rows, each column keeps all of its rows: Arrow Java's reader would cut
      // every column to 2 rows and the output would lack the others.
      putLong(bytes, batch.lengthPosition(), 2);
      Files.write(input, bytes);
      assertCleanError(
          input,
          "Cannot read Arrow file '"
              + input
              + "': its field 'id' has "
              + rows
              + " values in a batch of 2 rows");
      Files.delete(input);
    }
  }

  @Test
  void nullsWithoutValidityBitsAreACleanError() throws IOException {
    for (ArrowFormat format : ArrowFormat.values()) {
      Path input = write(Layout.FIXED_SIZE_LIST, format);
      byte[] bytes = Files.readAllBytes(input);
      IpcStructure.Message batch = firstBatch(bytes, format);
      long rows = getLong(bytes, batch.nodesPosition());
      // Field node 0 (the 'id' column): one null among its values, and its validity buffer (the
      // first buffer) emptied: no reader can tell which value is the null.
      putLong(bytes, batch.nodesPosition() + 8, 1);
      putLong(bytes, batch.buffersPosition() + 8, 0);
      Files.write(input, bytes);
      assertCleanError(
          input,
          "Cannot read Arrow file '"
              + input
              + "': its field 'id' has 1 nulls among "
              + rows
              + " values but no validity bits");
      Files.delete(input);
    }
  }

  private Path write(Layout layout, ArrowFormat format) throws IOException {
    Path input = directory.resolve("input.arrow");
    try (BufferAllocator allocator = new RootAllocator()) {
      TestFiles.write(
          allocator,
          input,
          new TestFiles.Shape(layout, ElementType.FLOAT32, 4, 1, 6, 0),
          new Random(7),
          format);
    }
    return input;
  }

  /** Both ways in give one clean error starting {@code prefix} and leave nothing behind. */
  private void assertCleanError(Path input, String prefix) throws IOException {
    Path output = Files.createDirectories(directory.resolve("out")).resolve("output.arrow");
    assertThatThrownBy(
            () ->
                ArrowFiles.normalizeFile(
                    input, output, "embedding", RMS, DeviceChoice.CPU, rows -> {}))
        .isExactlyInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith(prefix)
        .hasMessageNotContaining("\n")
        .satisfies(failure -> assertThat(failure.getSuppressed()).isEmpty());
    try (RootAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      assertThatThrownBy(
              () ->
                  ArrowFiles.normalizeFile(input, output, "embedding", RMS, normalizer, allocator))
          .isExactlyInstanceOf(EmbedNormException.class)
          .hasMessageStartingWith(prefix);
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
    assertThat(TestFiles.files(output.getParent())).isEmpty();
  }

  private static IpcStructure.Message firstBatch(byte[] bytes, ArrowFormat format) {
    return new IpcStructure(bytes, format == ArrowFormat.FILE)
        .messages.stream().filter(IpcStructure.Message::isRecordBatch).findFirst().get();
  }

  private static long getLong(byte[] bytes, long position) {
    return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong((int) position);
  }

  private static void putLong(byte[] bytes, long position, long value) {
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong((int) position, value);
  }
}

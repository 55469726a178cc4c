package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link PassThroughBuffers}, the fuzz test's check of the columns an output passes through. */
class PassThroughBuffersTest {
  /** Buffers of a batch of (id, label, embedding, score): label's offsets and data. */
  private static final int LABEL_OFFSETS = 3;

  private static final int LABEL_DATA = 4;

  /** The FixedSizeList embedding's values. */
  private static final int EMBEDDING_VALUES = 7;

  @TempDir Path directory;

  @Test
  void oneChangedByteOfAPassedThroughColumnIsSeenAndOneOfTheNormalizedColumnIsNot()
      throws IOException {
    Path input = write(ArrowFormat.FILE);
    byte[] bytes = Files.readAllBytes(input);
    IpcBuffers original = IpcBuffers.read(input);

    assertThat(compare(original, changed(bytes, EMBEDDING_VALUES, 0), true)).isEmpty();
    assertThat(compare(original, changed(bytes, LABEL_DATA, 1), true))
        .containsExactly(
            "record batch 1 column 'label': buffer 2 has "
                + original.batches.get(1).get(1).buffers().get(2).length
                + " bytes where the input has "
                + original.batches.get(1).get(1).buffers().get(2).length
                + ", first differing at byte 0");
    assertThat(compare(original, changed(bytes, LABEL_DATA, 1), false))
        .singleElement()
        .asString()
        .startsWith("record batch 1 column 'label' node 0 buffer 2 (DATA): byte 0 of");
    assertThat(compare(original, changed(bytes, LABEL_OFFSETS, 0), false))
        .singleElement()
        .asString()
        .startsWith("record batch 0 column 'label' node 0 buffer 1 (OFFSET): byte 4 of");
  }

  @Test
  void theRecordBatchPathKeepsEveryByteTheRowsOfTheOtherColumnsAreMadeOf() throws IOException {
    Path input = write(ArrowFormat.STREAM);
    Path output = directory.resolve("output.arrow");
    try (RootAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      ArrowFiles.normalizeFile(
          input, output, "embedding", Normalization.of(Op.L2_NORMALIZE), normalizer, allocator);
    }
    IpcBuffers in = IpcBuffers.read(input);
    IpcBuffers out = IpcBuffers.read(output);
    assertThat(in.batches).hasSize(3);
    assertThat(PassThroughBuffers.asArrowJavaReadsThem(in, out, "embedding")).isEmpty();
    assertThat(PassThroughBuffers.asArrowJavaReadsThem(in, out, "score"))
        .as("the embedding column, compared as if it passed through")
        .isNotEmpty();
  }

  private Path write(ArrowFormat format) throws IOException {
    Path input = directory.resolve("input-" + format + ".arrow");
    try (RootAllocator allocator = new RootAllocator()) {
      TestFiles.write(
          allocator,
          input,
          new TestFiles.Shape(Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, 4, 3, 6, 0.3),
          new Random(11),
          format);
    }
    return input;
  }

  /** The file with byte 4 of buffer {@code buffer} of record batch {@code batch} changed. */
  private IpcBuffers changed(byte[] bytes, int buffer, int batch) throws IOException {
    byte[] copy = bytes.clone();
    IpcStructure.Message message =
        new IpcStructure(copy, true)
            .messages.stream().filter(IpcStructure.Message::isRecordBatch).toList().get(batch);
    ByteBuffer all = ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN);
    long offset = all.getLong((int) message.buffersPosition() + buffer * 16);
    int at = (int) (message.bodyStart() + offset + (buffer == LABEL_OFFSETS ? 4 : 0));
    copy[at] ^= 0x10;
    Path changed = directory.resolve("changed.arrow");
    Files.write(changed, copy);
    return IpcBuffers.read(changed);
  }

  private static java.util.List<String> compare(IpcBuffers in, IpcBuffers out, boolean exact) {
    return exact
        ? PassThroughBuffers.exact(in, out, "embedding")
        : PassThroughBuffers.asArrowJavaReadsThem(in, out, "embedding");
  }
}

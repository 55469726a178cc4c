package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.ElementType;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ArrowInput}'s stream reader on its own, without the metadata check that refuses damaged
 * streams before it reads them: a message body Arrow Java drops when it fails is freed all the
 * same.
 */
class ArrowInputStreamTest {
  @TempDir Path directory;

  @Test
  void aRecordBatchOfAnUnknownMessageTypeFailsWithItsBodyFreed() throws IOException {
    Path input = directory.resolve("input.arrows");
    try (BufferAllocator allocator = new RootAllocator()) {
      TestFiles.write(
          allocator,
          input,
          new TestFiles.Shape(Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, 4, 1, 6, 0),
          new Random(7),
          ArrowFormat.STREAM);
    }
    byte[] bytes = Files.readAllBytes(input);
    IpcStructure.Message batch =
        new IpcStructure(bytes, false)
            .messages.stream().filter(IpcStructure.Message::isRecordBatch).findFirst().get();
    bytes[(int) batch.headerTypePosition()] = 118;
    Files.write(input, bytes);
    try (RootAllocator allocator = new RootAllocator();
        ArrowReader reader =
            ArrowInput.streamReader(FileChannel.open(input, StandardOpenOption.READ), allocator)) {
      assertThat(reader.getVectorSchemaRoot().getRowCount()).isZero();
      long schemaOnly = allocator.getAllocatedMemory();
      assertThatThrownBy(reader::loadNextBatch)
          .isInstanceOf(IOException.class)
          .hasMessageContaining("header was 118");
      assertThat(allocator.getAllocatedMemory()).isEqualTo(schemaOnly);
    }
  }
}

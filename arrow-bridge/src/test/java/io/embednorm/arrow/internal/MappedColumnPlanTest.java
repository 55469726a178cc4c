package io.embednorm.arrow.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.ArrowFiles;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How {@link MappedColumnPlan} reads the validity of a column's elements. */
class MappedColumnPlanTest {
  private static final Normalization RMS = Normalization.of(Op.RMS_NORM);

  @TempDir Path directory;

  @Test
  void readsTheBitmapEvenWhereTheElementNullCountIsZero() throws IOException {
    Path input = writeFile(directory.resolve("in.arrow"), -1);
    long bitmapPosition;
    try (MappedColumnPlan plan = MappedColumnPlan.open(input, "embedding", RMS)) {
      ColumnBatch batch = plan.batches().get(0).batch();
      assertThat(batch.elementNullCount()).isZero();
      assertThat(batch.elementValidity().isEmpty()).isFalse();
      bitmapPosition = batch.elementValidity().position();
    }
    // Element 3 marked null in the bitmap while the node still counts no null: Arrow Java reads
    // the bitmap, so the record-batch path makes row 0 null; the mapped path must not differ.
    try (FileChannel channel = FileChannel.open(input, StandardOpenOption.WRITE)) {
      channel.write(ByteBuffer.wrap(new byte[] {(byte) 0xF7}), bitmapPosition);
    }
    assertThatThrownBy(() -> MappedColumnPlan.open(input, "embedding", RMS))
        .isInstanceOf(MappedPathUnavailable.class)
        .hasMessageEndingWith("record batch 0 has null elements in rows that are not null");
  }

  @Test
  void readsTheBitmapWhereTheElementNullCountIsNotZero() throws IOException {
    Path input = writeFile(directory.resolve("in.arrow"), 3);
    assertThatThrownBy(() -> MappedColumnPlan.open(input, "embedding", RMS))
        .isInstanceOf(MappedPathUnavailable.class)
        .hasMessageEndingWith("record batch 0 has null elements in rows that are not null");
  }

  /** Six valid rows of four floats; element {@code nullElement} null where it is not negative. */
  private static Path writeFile(Path file, int nullElement) {
    try (BufferAllocator allocator = new RootAllocator();
        FixedSizeListVector column = FixedSizeListVector.empty("embedding", 4, allocator)) {
      column.addOrGetVector(
          FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
      Float4Vector elements = (Float4Vector) column.getDataVector();
      column.allocateNew();
      elements.allocateNew(24);
      for (int row = 0; row < 6; row++) {
        column.setNotNull(row);
        for (int i = 0; i < 4; i++) {
          elements.setSafe(row * 4 + i, row + i * 0.25f + 1f);
        }
      }
      if (nullElement >= 0) {
        elements.setNull(nullElement);
      }
      elements.setValueCount(24);
      column.setValueCount(6);
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.of(column))) {
        ArrowFiles.writeFile(file, allocator, root);
      }
    }
    return file;
  }
}

package io.embednorm.arrow;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.ListVector;

/** A {@link ListVector}: row r holds elements {@code [offsets[r], offsets[r+1])}. */
final class VariableListColumn extends ListColumn {
  private final ListVector vector;

  /**
   * Views {@code vector} after checking its offsets: from 0 or more, never decreasing (null rows
   * included: their bounds are zeroed in the output), ending within the element vector. One
   * comparison per row.
   *
   * @throws EmbedNormException "Cannot normalize column ..." for offsets that break these rules
   */
  VariableListColumn(String name, ElementType type, ListVector vector) {
    super(name, type, (BaseFixedWidthVector) vector.getDataVector());
    this.vector = vector;
    checkOffsets();
  }

  private void checkOffsets() {
    int rows = rows();
    if (rows == 0) {
      return;
    }
    ArrowBuf offsets = vector.getOffsetBuffer();
    if (offsets.capacity() < (rows + 1L) * ListVector.OFFSET_WIDTH) {
      throw damaged("its offsets buffer holds fewer than " + (rows + 1) + " offsets");
    }
    int previous = offsets.getInt(0);
    if (previous < 0) {
      throw damaged("its first list offset is " + previous);
    }
    for (int row = 1; row <= rows; row++) {
      int offset = offsets.getInt((long) row * ListVector.OFFSET_WIDTH);
      if (offset < previous) {
        throw damaged(
            "its list offsets decrease at row "
                + (row - 1)
                + ", from "
                + previous
                + " to "
                + offset);
      }
      previous = offset;
    }
    if (previous > elements().getValueCount()) {
      throw damaged(
          "its rows end at element "
              + previous
              + " but its element vector holds "
              + elements().getValueCount());
    }
  }

  private EmbedNormException damaged(String why) {
    return new EmbedNormException("Cannot normalize column '" + name() + "': " + why);
  }

  @Override
  int rows() {
    return vector.getValueCount();
  }

  @Override
  long boundary(int row) {
    if (rows() == 0) {
      return 0;
    }
    return vector.getOffsetBuffer().getInt((long) row * ListVector.OFFSET_WIDTH);
  }

  @Override
  boolean isNullRow(int row) {
    return vector.isNull(row);
  }

  @Override
  int nullRows() {
    return vector.getNullCount();
  }

  @Override
  int fixedWidth() {
    return -1;
  }

  @Override
  FieldVector allocateOutput(BufferAllocator allocator, int elementCount, ElementMemory elements) {
    int rows = rows();
    ListVector output = (ListVector) vector.getField().createVector(allocator);
    try {
      loadUnzeroed(output, allocator, rows, (long) (rows + 1) * ListVector.OFFSET_WIDTH);
      loadUnzeroed(
          output.getDataVector(),
          allocator,
          elements,
          elementCount,
          (long) elementCount * type().byteWidth());
      ArrowBuf offsets = output.getOffsetBuffer();
      long base = boundary(0);
      for (int row = 0; row <= rows; row++) {
        offsets.setInt((long) row * ListVector.OFFSET_WIDTH, (int) (boundary(row) - base));
      }
      output.setLastSet(rows - 1);
      output.setValueCount(rows);
      return output;
    } catch (RuntimeException | Error failure) {
      output.close();
      throw failure;
    }
  }
}

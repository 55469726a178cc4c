package io.embednorm.arrow;

import io.embednorm.engine.ElementType;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.ListVector;

/** A {@link ListVector}: row r holds elements {@code [offsets[r], offsets[r+1])}. */
final class VariableListColumn extends ListColumn {
  private final ListVector vector;

  VariableListColumn(String name, ElementType type, ListVector vector) {
    super(name, type, (BaseFixedWidthVector) vector.getDataVector());
    this.vector = vector;
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
  FieldVector allocateOutput(BufferAllocator allocator, int elementCount) {
    int rows = rows();
    ListVector output = (ListVector) vector.getField().createVector(allocator);
    try {
      loadUnzeroed(output, allocator, rows, (long) (rows + 1) * ListVector.OFFSET_WIDTH);
      loadUnzeroed(
          output.getDataVector(),
          allocator,
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

package io.embednorm.arrow;

import io.embednorm.engine.ElementType;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;

/** A {@link FixedSizeListVector}: row r holds elements {@code [r·width, (r+1)·width)}. */
final class FixedSizeListColumn extends ListColumn {
  private final FixedSizeListVector vector;
  private final int width;

  FixedSizeListColumn(String name, ElementType type, FixedSizeListVector vector) {
    super(name, type, (BaseFixedWidthVector) vector.getDataVector());
    this.vector = vector;
    this.width = vector.getListSize();
  }

  @Override
  int rows() {
    return vector.getValueCount();
  }

  @Override
  long boundary(int row) {
    return (long) row * width;
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
    return width;
  }

  @Override
  FieldVector allocateOutput(BufferAllocator allocator, int elementCount, ElementMemory elements) {
    FixedSizeListVector output = (FixedSizeListVector) vector.getField().createVector(allocator);
    try {
      loadUnzeroed(output, allocator, rows());
      loadUnzeroed(
          output.getDataVector(),
          allocator,
          elements,
          elementCount,
          (long) elementCount * type().byteWidth());
      output.setValueCount(rows());
      return output;
    } catch (RuntimeException | Error failure) {
      output.close();
      throw failure;
    }
  }
}

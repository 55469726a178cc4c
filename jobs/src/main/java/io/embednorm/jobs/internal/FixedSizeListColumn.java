package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.unsafe.Platform;

/**
 * Fills a {@code FixedSizeList<float|double, width>} vector from Spark rows with one copy of each
 * row's element bytes (Spark's {@link UnsafeArrayData} holds them contiguous, as Arrow does; other
 * arrays through {@code toFloatArray}), instead of Spark's Arrow writer, which sets elements one at
 * a time. Every element is valid: a null array is a null entry of the list. The vector belongs to
 * the caller's root.
 */
final class FixedSizeListColumn {
  private final FixedSizeListVector vector;
  private final FieldVector values;
  private final String name;
  private final int width;
  private final int elementBytes;
  private final long rowBytes;
  private final String widthSource;

  /**
   * Allocates {@code vector} for {@code rows} rows, all entries null and all elements valid. {@code
   * widthSource} says where the width came from, for errors: "the width option", "the width of row
   * 7, the task's first non-null row".
   */
  FixedSizeListColumn(FixedSizeListVector vector, int rows, int elementBytes, String widthSource) {
    this.vector = vector;
    this.widthSource = widthSource;
    this.name = vector.getName();
    this.width = vector.getListSize();
    this.elementBytes = elementBytes;
    this.rowBytes = (long) width * elementBytes;
    vector.setInitialCapacity(rows);
    vector.allocateNew();
    values = vector.getDataVector();
    ArrowBuf validity = values.getValidityBuffer();
    validity.setOne(0, validity.capacity());
  }

  /**
   * Writes the array at {@code ordinal} of {@code row} as entry {@code index}; {@code taskRow}, the
   * row's position in the task, is for errors.
   */
  void write(InternalRow row, int ordinal, int index, long taskRow) {
    long target = values.getDataBufferAddress() + index * rowBytes;
    if (row.isNullAt(ordinal)) {
      // Zeros under a null entry, so that a file's bytes do not depend on earlier rows.
      Platform.setMemory(target, (byte) 0, rowBytes);
      BitVectorHelper.unsetBit(vector.getValidityBuffer(), index);
      return;
    }
    ArrayData array = row.getArray(ordinal);
    if (array.numElements() != width) {
      throw refused(
          taskRow,
          "has "
              + array.numElements()
              + " elements, not "
              + width
              + " ("
              + widthSource
              + "); --format parquet takes rows of any width");
    }
    if (array instanceof UnsafeArrayData unsafe) {
      copyUnsafe(unsafe, target, taskRow);
    } else {
      copyOther(array, target, taskRow);
    }
    BitVectorHelper.setBit(vector.getValidityBuffer(), index);
  }

  /** Sets the entry count before the batch is written. */
  void finish(int rows) {
    vector.setValueCount(rows);
  }

  private void copyUnsafe(UnsafeArrayData array, long target, long taskRow) {
    Object base = array.getBaseObject();
    long offset = array.getBaseOffset();
    // UnsafeArrayData: the element count (8 bytes), a null bit per element, then the elements.
    for (long word = 0; word < (width + 63) / 64; word++) {
      if (Platform.getLong(base, offset + 8 + word * 8) != 0) {
        throw nullElement(taskRow);
      }
    }
    long header = UnsafeArrayData.calculateHeaderPortionInBytes(width);
    Platform.copyMemory(base, offset + header, null, target, rowBytes);
  }

  private void copyOther(ArrayData array, long target, long taskRow) {
    for (int element = 0; element < width; element++) {
      if (array.isNullAt(element)) {
        throw nullElement(taskRow);
      }
    }
    if (elementBytes == 4) {
      Platform.copyMemory(
          array.toFloatArray(), Platform.FLOAT_ARRAY_OFFSET, null, target, rowBytes);
    } else {
      Platform.copyMemory(
          array.toDoubleArray(), Platform.DOUBLE_ARRAY_OFFSET, null, target, rowBytes);
    }
  }

  private EmbedNormException nullElement(long taskRow) {
    return refused(taskRow, "has a null element; a fixed-size list holds nulls only as whole rows");
  }

  private EmbedNormException refused(long taskRow, String why) {
    TaskContext task = TaskContext.get();
    return new EmbedNormException(
        "Cannot write column '"
            + name
            + "' as Arrow FixedSizeList of "
            + width
            + " elements: row "
            + taskRow
            + (task == null ? "" : " of Spark partition " + task.partitionId())
            + " "
            + why);
  }
}

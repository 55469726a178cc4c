package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.unsafe.Platform;

/**
 * Fills a {@code FixedSizeList<float|double, width>} vector from Spark rows with one copy of each
 * row's element bytes (Spark's {@link UnsafeArrayData} holds them contiguous, as Arrow does),
 * instead of Spark's Arrow writer, which sets elements one at a time. Every element is valid: a
 * null array is a null entry of the list. The vector belongs to the caller's root.
 */
final class FixedSizeListColumn {
  private final FixedSizeListVector vector;
  private final FieldVector values;
  private final String name;
  private final int width;
  private final int elementBytes;
  private final long rowBytes;

  /** Allocates {@code vector} for {@code rows} rows and marks all its elements valid. */
  FixedSizeListColumn(FixedSizeListVector vector, int rows, int elementBytes) {
    this.vector = vector;
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

  /** Writes the array at {@code ordinal} of {@code row} as entry {@code index}. */
  void write(InternalRow row, int ordinal, int index) {
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
          "a row has "
              + array.numElements()
              + " elements and every non-null row must have the first one's width; --format"
              + " parquet takes rows of any width");
    }
    if (array instanceof UnsafeArrayData unsafe) {
      copyUnsafe(unsafe, target);
    } else {
      copyOther(array, target);
    }
    BitVectorHelper.setBit(vector.getValidityBuffer(), index);
  }

  /** Sets the entry count before the batch is written. */
  void finish(int rows) {
    vector.setValueCount(rows);
  }

  private void copyUnsafe(UnsafeArrayData array, long target) {
    Object base = array.getBaseObject();
    long offset = array.getBaseOffset();
    // UnsafeArrayData: the element count (8 bytes), a null bit per element, then the elements.
    for (long word = 0; word < (width + 63) / 64; word++) {
      if (Platform.getLong(base, offset + 8 + word * 8) != 0) {
        throw nullElement();
      }
    }
    long header = UnsafeArrayData.calculateHeaderPortionInBytes(width);
    Platform.copyMemory(base, offset + header, null, target, rowBytes);
  }

  private void copyOther(ArrayData array, long target) {
    for (int element = 0; element < width; element++) {
      if (array.isNullAt(element)) {
        throw nullElement();
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

  private EmbedNormException nullElement() {
    return refused("a row has a null element; a fixed-size list holds nulls only as whole rows");
  }

  private EmbedNormException refused(String why) {
    return new EmbedNormException(
        "Cannot write column '"
            + name
            + "' as Arrow FixedSizeList of "
            + width
            + " elements: "
            + why);
  }
}

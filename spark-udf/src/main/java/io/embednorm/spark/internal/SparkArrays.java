package io.embednorm.spark.internal;

import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.util.DataSizeRoundingUtil;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.unsafe.Platform;

/**
 * Copies an {@code array<float>} or {@code array<double>} column of a Spark batch into an Arrow
 * {@link ListVector}, the input type of the arrow-bridge, and a result back into a Spark vector.
 * Spark's column vectors do not expose their element memory, so these are copies (counted in the
 * operator's metrics); rows that are contiguous in Spark's element vector (as the Parquet reader
 * and row batching write them) are copied in bulk.
 *
 * <p>A null row, and a row with a null element (whose result is null: docs/SEMANTICS.md, Empty,
 * null and ragged rows), become a null row of no elements; every element of the result is valid.
 */
public final class SparkArrays {
  /** Elements per bulk read from Spark: bounds the temporary array (1 MiB of doubles). */
  private static final int COPY_ELEMENTS = 1 << 17;

  private SparkArrays() {}

  /**
   * The first {@code rows} rows of {@code column} as a new list vector named {@code name},
   * allocated from {@code allocator}; the caller closes it. Adds the time spent allocating, and the
   * rest of the time spent, to {@code times}.
   *
   * @param width the element type: float32 or float64
   */
  public static ListVector toArrow(
      ColumnVector column,
      int rows,
      ElementWidth width,
      String name,
      BufferAllocator allocator,
      BatchTimes times) {
    ListVector list = newList(name, width, allocator);
    try {
      return toArrow(column, rows, width, list, times);
    } catch (RuntimeException | Error failure) {
      list.close();
      throw failure;
    }
  }

  /**
   * An empty list vector of {@code width} elements named {@code name}, allocated from {@code
   * allocator}, for {@link #toArrow(ColumnVector, int, ElementWidth, ListVector, BatchTimes)} to
   * fill batch after batch; the caller closes it.
   */
  public static ListVector newList(String name, ElementWidth width, BufferAllocator allocator) {
    ListVector list = ListVector.empty(name, allocator);
    ArrowType elementType =
        new ArrowType.FloatingPoint(
            width == ElementWidth.FLOAT
                ? FloatingPointPrecision.SINGLE
                : FloatingPointPrecision.DOUBLE);
    list.addOrGetVector(FieldType.nullable(elementType));
    return list;
  }

  /**
   * Replaces what {@code list} (from {@link #newList}, of {@code width}) holds with the first
   * {@code rows} rows of {@code column}, and returns it. Its buffers are reused where large enough,
   * and replaced by larger ones where not: a task that copies every batch into one vector touches
   * the same memory each time, where fresh buffers would be fresh pages. Adds the time spent
   * allocating, and the rest of the time spent, to {@code times}.
   */
  public static ListVector toArrow(
      ColumnVector column, int rows, ElementWidth width, ListVector list, BatchTimes times) {
    long started = System.nanoTime();
    long allocationBefore = times.allocationNanos();
    try {
      reserveRows(list, rows, times);
      if (column instanceof WritableColumnVector writable) {
        new Copy(list, width, times).fromWritable(writable, rows);
      } else {
        new Copy(list, width, times).fromAny(column, rows);
      }
      return list;
    } finally {
      long allocation = times.allocationNanos() - allocationBefore;
      times.addCopy(System.nanoTime() - started - allocation);
    }
  }

  /**
   * Gives {@code list} room for {@code rows} rows (new buffers only where it has too little) and
   * marks them null, so that the copy sets the valid ones; offset 0 stays 0.
   */
  static void reserveRows(ListVector list, int rows, BatchTimes times) {
    if (list.getValueCapacity() < rows || list.getOffsetBuffer().capacity() == 0) {
      long allocating = System.nanoTime();
      list.clear();
      list.setInitialCapacity(Math.max(rows, 1));
      list.allocateNew();
      times.addAllocation(System.nanoTime() - allocating);
      return;
    }
    list.getValidityBuffer().setZero(0, DataSizeRoundingUtil.divideBy8Ceil(rows));
  }

  /**
   * Copies {@code list}, a result of the arrow-bridge whose elements are of {@code width}, into
   * {@code target}, a vector of {@code array<float>} or {@code array<double>} that is reset first
   * (growing where the batch needs it), and returns {@code target}. Spark's row conversion reads an
   * on-heap vector's elements straight from a Java array, where an {@code ArrowColumnVector} costs
   * a validity and a bounds check per element, several times as much. The elements go in one copy.
   *
   * <p>Only row nulls are copied: the arrow-bridge makes a row with a null element a null row, so
   * every element of a non-null result row is valid.
   *
   * @throws IllegalArgumentException when the elements of {@code list} are not of {@code width}, or
   *     fewer than its offsets say (a raw copy checks no bounds)
   */
  public static WritableColumnVector toSpark(
      ListVector list, ElementWidth width, WritableColumnVector target) {
    BaseFixedWidthVector elements = (BaseFixedWidthVector) list.getDataVector();
    if (elements.getTypeWidth() != width.bytes()) {
      throw new IllegalArgumentException(
          "Cannot copy column '"
              + list.getName()
              + "' into Spark: its elements are "
              + elements.getTypeWidth()
              + " bytes wide, not "
              + width.bytes());
    }
    int[] span = putRows(list, target);
    if (span == null) {
      return target;
    }
    int base = span[0];
    int start = span[1];
    int total = start - base;
    if (elements.getValueCount() < start) {
      throw new IllegalArgumentException(
          "Cannot copy column '"
              + list.getName()
              + "' into Spark: its rows end at element "
              + start
              + " but its element vector holds "
              + elements.getValueCount());
    }
    WritableColumnVector values = target.arrayData();
    values.reserve(total);
    long address = elements.getDataBuffer().memoryAddress() + (long) base * width.bytes();
    if (!SparkVectorMemory.copyInto(address, values, 0, total, width.bytes())) {
      copyThroughArrays(address, values, total, width);
    }
    return target;
  }

  /**
   * Resets {@code target} to the rows of {@code list}: each row's place and length among the
   * elements counted from the list's first offset, and its nulls. Returns the list's first and end
   * offsets, or null where it has no rows.
   */
  static int[] putRows(ListVector list, WritableColumnVector target) {
    int rows = list.getValueCount();
    target.reset();
    target.reserve(rows);
    if (rows == 0) {
      return null;
    }
    ArrowBuf offsets = list.getOffsetBuffer();
    int base = offsets.getInt(0);
    boolean nullRows = list.getNullCount() > 0;
    int start = base;
    for (int row = 0; row < rows; row++) {
      int end = offsets.getInt((long) (row + 1) * ListVector.OFFSET_WIDTH);
      target.putArray(row, start - base, end - start);
      if (nullRows && list.isNull(row)) {
        target.putNull(row);
      }
      start = end;
    }
    return new int[] {base, start};
  }

  /**
   * Copies {@code count} elements from {@code address} into {@code target} from index 0 through a
   * temporary array: the general path, where {@link SparkVectorMemory} cannot reach the vector's
   * memory.
   */
  static void copyThroughArrays(
      long address, WritableColumnVector target, int count, ElementWidth width) {
    int pieceElements = Math.min(COPY_ELEMENTS, count);
    float[] floats = width == ElementWidth.FLOAT ? new float[pieceElements] : null;
    double[] doubles = width == ElementWidth.DOUBLE ? new double[pieceElements] : null;
    for (int done = 0; done < count; done += COPY_ELEMENTS) {
      int piece = Math.min(COPY_ELEMENTS, count - done);
      long from = address + (long) done * width.bytes();
      if (floats != null) {
        Platform.copyMemory(
            null, from, floats, Platform.FLOAT_ARRAY_OFFSET, (long) piece * Float.BYTES);
        target.putFloats(done, piece, floats, 0);
      } else {
        Platform.copyMemory(
            null, from, doubles, Platform.DOUBLE_ARRAY_OFFSET, (long) piece * Double.BYTES);
        target.putDoubles(done, piece, doubles, 0);
      }
    }
  }

  /**
   * {@code elements} with room for {@code total} elements, all valid: its buffers where large
   * enough, else new ones an eighth larger, loaded without Arrow's zeroing (allocateNew zeroes
   * them): every element is written by the copy, and zeroing 12 MiB per Spark batch cost as much as
   * a third of the operator's time on a 16-core host. Adds the time spent allocating to {@code
   * times}.
   */
  static BaseFixedWidthVector elementRoom(
      BaseFixedWidthVector elements, int total, ElementWidth width, BatchTimes times) {
    int count = Math.max(total, 1);
    // Not BitVectorHelper.getValidityBufferSize: Arrow 19 (Spark 4.2) renamed it.
    long validityBytes = DataSizeRoundingUtil.divideBy8Ceil(count);
    if (elements.getDataBuffer().capacity() >= (long) count * width.bytes()
        && elements.getValidityBuffer().capacity() >= validityBytes) {
      elements.getValidityBuffer().setOne(0, validityBytes);
      return elements;
    }
    long started = System.nanoTime();
    BufferAllocator allocator = elements.getAllocator();
    int room = (int) Math.min(Integer.MAX_VALUE, count + (long) count / 8);
    try (ArrowBuf validity = allocator.buffer(DataSizeRoundingUtil.divideBy8Ceil(room));
        ArrowBuf data = allocator.buffer((long) room * width.bytes())) {
      validity.setOne(0, validity.capacity());
      elements.loadFieldBuffers(new ArrowFieldNode(room, 0), List.of(validity, data));
    }
    times.addAllocation(System.nanoTime() - started);
    return elements;
  }

  /**
   * Copies {@code count} elements of {@code source} from {@code sourceStart} to {@code address}: in
   * one copy where {@link SparkVectorMemory} reaches the vector's memory, else in pieces.
   */
  static void copyElements(
      ColumnVector source, int sourceStart, int count, ElementWidth width, long address) {
    if (SparkVectorMemory.copy(source, sourceStart, count, width.bytes(), address)) {
      return;
    }
    for (int done = 0; done < count; done += COPY_ELEMENTS) {
      int piece = Math.min(COPY_ELEMENTS, count - done);
      Object values =
          width == ElementWidth.FLOAT
              ? source.getFloats(sourceStart + done, piece)
              : source.getDoubles(sourceStart + done, piece);
      copyArray(values, piece, width, address + (long) done * width.bytes());
    }
  }

  /**
   * Copies the first {@code count} values of {@code values}, a float[] or double[], to {@code
   * address}.
   */
  static void copyArray(Object values, int count, ElementWidth width, long address) {
    long offset =
        width == ElementWidth.FLOAT ? Platform.FLOAT_ARRAY_OFFSET : Platform.DOUBLE_ARRAY_OFFSET;
    Platform.copyMemory(values, offset, null, address, (long) count * width.bytes());
  }

  /** The element type of a column, by its byte width. */
  public enum ElementWidth {
    FLOAT(Float.BYTES),
    DOUBLE(Double.BYTES);

    private final int bytes;

    ElementWidth(int bytes) {
      this.bytes = bytes;
    }

    int bytes() {
      return bytes;
    }
  }

  /** Whether any of the {@code length} values of {@code values} from {@code start} is null. */
  static boolean anyNull(ColumnVector values, int start, int length) {
    for (int i = start; i < start + length; i++) {
      if (values.isNullAt(i)) {
        return true;
      }
    }
    return false;
  }

  private static boolean anyNull(ColumnarArray array) {
    for (int i = 0, length = array.numElements(); i < length; i++) {
      if (array.isNullAt(i)) {
        return true;
      }
    }
    return false;
  }

  /** One copy: sets offsets and row validity, then fills the element vector. */
  private static final class Copy {
    private final ListVector list;
    private final ElementWidth width;
    private final ArrowBuf offsets;
    private final ArrowBuf validity;
    private final BatchTimes times;

    Copy(ListVector list, ElementWidth width, BatchTimes times) {
      this.list = list;
      this.width = width;
      this.times = times;
      this.offsets = list.getOffsetBuffer();
      this.validity = list.getValidityBuffer();
    }

    void fromWritable(WritableColumnVector column, int rows) {
      WritableColumnVector elements = column.arrayData();
      boolean elementNulls = elements.hasNull();
      int[] starts = new int[rows];
      int total = 0;
      for (int row = 0; row < rows; row++) {
        int length = 0;
        if (!column.isNullAt(row)) {
          int start = column.getArrayOffset(row);
          int rowLength = column.getArrayLength(row);
          if (!elementNulls || !anyNull(elements, start, rowLength)) {
            BitVectorHelper.setBit(validity, row);
            starts[row] = start;
            length = rowLength;
          }
        }
        offsets.setInt((long) (row + 1) * ListVector.OFFSET_WIDTH, total + length);
        total += length;
      }
      BaseFixedWidthVector target = allocateElements(total);
      int row = 0;
      while (row < rows) {
        int first = row;
        int sourceStart = starts[row];
        int end = length(row);
        row++;
        while (row < rows && (length(row) == 0 || starts[row] == sourceStart + end)) {
          end += length(row);
          row++;
        }
        copyRange(elements, sourceStart, end, target, offset(first));
      }
      finish(rows, total);
    }

    void fromAny(ColumnVector column, int rows) {
      Object[] values = new Object[rows];
      int total = 0;
      for (int row = 0; row < rows; row++) {
        int length = 0;
        if (!column.isNullAt(row)) {
          ColumnarArray array = column.getArray(row);
          if (!anyNull(array)) {
            BitVectorHelper.setBit(validity, row);
            values[row] =
                width == ElementWidth.FLOAT ? array.toFloatArray() : array.toDoubleArray();
            length = array.numElements();
          }
        }
        offsets.setInt((long) (row + 1) * ListVector.OFFSET_WIDTH, total + length);
        total += length;
      }
      BaseFixedWidthVector target = allocateElements(total);
      long address = target.getDataBuffer().memoryAddress();
      for (int row = 0; row < rows; row++) {
        if (values[row] != null) {
          copyArray(values[row], length(row), address + (long) offset(row) * width.bytes());
        }
      }
      finish(rows, total);
    }

    private int offset(int row) {
      return offsets.getInt((long) row * ListVector.OFFSET_WIDTH);
    }

    private int length(int row) {
      return offset(row + 1) - offset(row);
    }

    private BaseFixedWidthVector allocateElements(int total) {
      return elementRoom((BaseFixedWidthVector) list.getDataVector(), total, width, times);
    }

    private void copyRange(
        ColumnVector source, int sourceStart, int count, BaseFixedWidthVector target, int at) {
      copyElements(
          source,
          sourceStart,
          count,
          width,
          target.getDataBuffer().memoryAddress() + (long) at * width.bytes());
    }

    private void copyArray(Object values, int count, long address) {
      SparkArrays.copyArray(values, count, width, address);
    }

    private void finish(int rows, int total) {
      list.setLastSet(rows - 1);
      list.setValueCount(rows);
      list.getDataVector().setValueCount(total);
    }
  }
}

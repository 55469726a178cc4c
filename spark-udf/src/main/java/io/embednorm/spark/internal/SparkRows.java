package io.embednorm.spark.internal;

import io.embednorm.arrow.internal.StagedColumn;
import io.embednorm.arrow.internal.StagingSource;
import io.embednorm.arrow.internal.StagingTarget;
import io.embednorm.engine.ElementType;
import io.embednorm.spark.internal.SparkArrays.ElementWidth;
import io.embednorm.spark.internal.SparkVectorMemory.Location;
import java.util.Arrays;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * The rows of an {@code array<float>} or {@code array<double>} column of a Spark batch as the GPU's
 * staging reads them straight from Spark's element memory ({@link SparkVectorMemory}: an on-heap
 * array or an off-heap address), and the output vector that staging writes straight into: the
 * layout {@link SparkArrays} gives the Arrow path (a null row, or a row with a null element, is a
 * null row of no elements; offsets count the other rows' elements from 0), with no Arrow vector.
 * The source maps those offsets to where the rows lie in Spark's element vector, in runs of rows
 * that lie one after another there (one run where the scan or row batching wrote them in order).
 *
 * <p>Owns nothing; valid while the batch's vectors are (the source) and until the output vector is
 * reserved again (the target).
 */
final class SparkRows {
  private final ElementWidth width;
  private final int rows;
  private final int[] offsets;
  private final boolean[] nullRows;
  private final int fixedWidth;
  private final Location elements;

  /** Runs of rows: where each starts in the offsets, and in Spark's element vector. */
  private final int[] runStarts;

  private final int[] sparkStarts;
  private final int runs;

  private SparkRows(
      ElementWidth width,
      int[] offsets,
      boolean[] nullRows,
      int fixedWidth,
      Location elements,
      int[] runStarts,
      int[] sparkStarts,
      int runs) {
    this.width = width;
    this.rows = offsets.length - 1;
    this.offsets = offsets;
    this.nullRows = nullRows;
    this.fixedWidth = fixedWidth;
    this.elements = elements;
    this.runStarts = runStarts;
    this.sparkStarts = sparkStarts;
    this.runs = runs;
  }

  /**
   * The first {@code rows} rows of {@code column}, or null where staging cannot read Spark's memory
   * (not a writable vector, dictionary-encoded elements, an array out of reach): the caller then
   * takes the Arrow path.
   */
  static SparkRows of(ColumnVector column, int rows, ElementWidth width) {
    if (!(column instanceof WritableColumnVector writable)) {
      return null;
    }
    WritableColumnVector elementVector = writable.arrayData();
    Location elements = SparkVectorMemory.locate(elementVector, 0, width.bytes());
    if (elements == null) {
      return null;
    }
    boolean elementNulls = elementVector.hasNull();
    int[] offsets = new int[rows + 1];
    boolean[] nullRows = null;
    int[] runStarts = new int[4];
    int[] sparkStarts = new int[4];
    int runs = 0;
    int sparkEnd = -1;
    int fixedWidth = rows == 0 ? 0 : -2;
    int total = 0;
    for (int row = 0; row < rows; row++) {
      int length = -1;
      if (!writable.isNullAt(row)) {
        int start = writable.getArrayOffset(row);
        int rowLength = writable.getArrayLength(row);
        if (!elementNulls || !anyNull(elementVector, start, rowLength)) {
          length = rowLength;
          if (rowLength > 0 && start != sparkEnd) {
            if (runs == runStarts.length) {
              runStarts = Arrays.copyOf(runStarts, 2 * runs);
              sparkStarts = Arrays.copyOf(sparkStarts, 2 * runs);
            }
            runStarts[runs] = total;
            sparkStarts[runs] = start;
            runs++;
          }
          if (rowLength > 0) {
            sparkEnd = start + rowLength;
          }
        }
      }
      if (length < 0) {
        if (nullRows == null) {
          nullRows = new boolean[rows];
        }
        nullRows[row] = true;
        length = 0;
      }
      fixedWidth = fixedWidth == -2 || fixedWidth == length ? length : -1;
      total += length;
      offsets[row + 1] = total;
    }
    return new SparkRows(
        width,
        offsets,
        nullRows,
        nullRows == null ? fixedWidth : -1,
        elements,
        runStarts,
        sparkStarts,
        runs);
  }

  /** Bytes of the rows' elements. */
  long bytes() {
    return (long) offsets[rows] * width.bytes();
  }

  /**
   * Resets {@code target} (an {@code array<float>} or {@code array<double>} vector) and gives it
   * these rows' offsets and nulls as {@link SparkArrays#toSpark} does, room for their elements, and
   * returns the column that staging reads from Spark's memory and writes into the target's
   * elements; null where the target's elements cannot be reached (then nothing depends on what was
   * set).
   */
  StagedColumn into(WritableColumnVector target, String name) {
    target.reset();
    target.reserve(rows);
    for (int row = 0; row < rows; row++) {
      target.putArray(row, offsets[row], offsets[row + 1] - offsets[row]);
      if (nullRows != null && nullRows[row]) {
        target.putNull(row);
      }
    }
    WritableColumnVector values = target.arrayData();
    values.reserve(Math.max(offsets[rows], 1));
    Location output = SparkVectorMemory.locate(values, 0, width.bytes());
    if (output == null) {
      return null;
    }
    ElementType type = width == ElementWidth.FLOAT ? ElementType.FLOAT32 : ElementType.FLOAT64;
    StagingSource source = this::copyTo;
    StagingTarget sink =
        (address, position, bytes) ->
            Platform.copyMemory(null, address, output.array(), output.offset() + position, bytes);
    return fixedWidth >= 0
        ? StagedColumn.fixedWidth(name, type, rows, fixedWidth, source, sink)
        : StagedColumn.ragged(name, type, offsets, source, sink);
  }

  /** Copies the rows' bytes {@code [position, position + bytes)} to {@code address}. */
  private void copyTo(long position, long address, long bytes) {
    int elementBytes = width.bytes();
    long done = 0;
    while (done < bytes) {
      long at = position + done;
      int run = runOf(at / elementBytes);
      long runEnd =
          run + 1 < runs
              ? (long) runStarts[run + 1] * elementBytes
              : (long) offsets[rows] * elementBytes;
      long length = Math.min(bytes - done, runEnd - at);
      long from =
          elements.offset()
              + (long) sparkStarts[run] * elementBytes
              + (at - (long) runStarts[run] * elementBytes);
      Platform.copyMemory(elements.array(), from, null, address + done, length);
      done += length;
    }
  }

  /** The run that holds element {@code element} of the offsets. */
  private int runOf(long element) {
    int low = 0;
    int high = runs - 1;
    while (low < high) {
      int middle = (low + high + 1) >>> 1;
      if (runStarts[middle] <= element) {
        low = middle;
      } else {
        high = middle - 1;
      }
    }
    return low;
  }

  private static boolean anyNull(ColumnVector elements, int start, int length) {
    for (int i = start; i < start + length; i++) {
      if (elements.isNullAt(i)) {
        return true;
      }
    }
    return false;
  }
}

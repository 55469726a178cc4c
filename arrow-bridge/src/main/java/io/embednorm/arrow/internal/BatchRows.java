package io.embednorm.arrow.internal;

import java.util.Arrays;

/**
 * The rows of one record batch as the mapped path sees them once their validity and offsets are
 * read: which rows are valid (a row is valid when it is not null; the plan has made sure that no
 * valid row holds a null element) and where each row starts.
 *
 * @param batch where the batch's buffers are
 * @param valid whether each row is valid, or null when every row is
 * @param offsets the rows' element offsets (rows + 1, starting at 0), or null for fixed width
 * @param width the width of every row, or -1 when {@code offsets} gives them
 */
record BatchRows(ColumnBatch batch, boolean[] valid, int[] offsets, int width) {

  int rows() {
    return batch.rows();
  }

  /** The element index where {@code row} starts, or where the last row ends for {@link #rows()}. */
  long start(int row) {
    return offsets == null ? (long) row * width : offsets[row];
  }

  boolean isValid(int row) {
    return valid == null || valid[row];
  }

  boolean hasInvalidRows() {
    return valid != null;
  }

  /** The elements of invalid rows. */
  long invalidElements() {
    long elements = 0;
    for (int row = 0; valid != null && row < valid.length; row++) {
      elements += valid[row] ? 0 : start(row + 1) - start(row);
    }
    return elements;
  }

  /** The elements of all rows. */
  long elements() {
    return start(rows());
  }

  /**
   * Cuts rows {@code [from, to)} into runs of whole rows of at most {@code byteLimit} bytes each (a
   * wider row alone); returns their boundaries, {@code from} first and {@code to} last.
   */
  int[] runs(int from, int to, long byteLimit, int byteWidth) {
    int[] boundaries = new int[to - from + 1];
    int count = 0;
    boundaries[count++] = from;
    int start = from;
    for (int row = from; row < to; row++) {
      if (row > start && (start(row + 1) - start(start)) * byteWidth > byteLimit) {
        boundaries[count++] = row;
        start = row;
      }
    }
    if (to > from) {
      boundaries[count++] = to;
    }
    return Arrays.copyOf(boundaries, count);
  }
}

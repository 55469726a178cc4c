package io.embednorm.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Objects;

/**
 * A batch of rows in host memory and the place its results go: an input buffer, an output buffer of
 * the same element type, and a row layout that both share.
 *
 * <p>The layout is either fixed-width (row {@code r} holds elements {@code [r·width, (r+1)·width)})
 * or ragged ({@code offsets} holds {@code rows + 1} element indices; row {@code r} holds {@code
 * [offsets[r], offsets[r+1])}). Element indices count from index 0 of each buffer, ignoring the
 * buffers' positions; elements are little-endian. Input and output may be the same buffer.
 *
 * <p>A row batch owns no memory: whoever made the buffers keeps them alive until {@link
 * NormalizationEngine#normalize} returns, and frees them.
 */
public final class RowBatch {
  private final ElementType type;
  private final int rows;
  private final int width;
  private final IntBuffer offsets;
  private final ByteBuffer input;
  private final ByteBuffer output;
  private final long firstRowIndex;

  private RowBatch(
      ElementType type,
      int rows,
      int width,
      IntBuffer offsets,
      ByteBuffer input,
      ByteBuffer output,
      long firstRowIndex) {
    this.type = Objects.requireNonNull(type, "type");
    this.rows = rows;
    this.width = width;
    this.offsets = offsets;
    this.input = Objects.requireNonNull(input, "input").duplicate().order(ByteOrder.LITTLE_ENDIAN);
    this.output =
        Objects.requireNonNull(output, "output").duplicate().order(ByteOrder.LITTLE_ENDIAN);
    this.firstRowIndex = firstRowIndex;
    if (output.isReadOnly()) {
      throw new EmbedNormException("Cannot create row batch: the output buffer is read-only");
    }
    long elements = rows == 0 ? 0 : rowStart(0) + elementCount();
    checkCapacity("input", input, elements);
    checkCapacity("output", output, elements);
  }

  /** Rows of equal width, stored one after another. */
  public static RowBatch fixedWidth(
      ElementType type, int rows, int width, ByteBuffer input, ByteBuffer output) {
    if (rows < 0 || width < 0) {
      throw new EmbedNormException(
          "Cannot create row batch: rows and width must be >= 0, got rows="
              + rows
              + " width="
              + width);
    }
    return new RowBatch(type, rows, width, null, input, output, 0);
  }

  /**
   * Rows of varying width: {@code offsets} holds {@code rows + 1} non-decreasing element indices
   * (read from its index 0, ignoring its position).
   */
  public static RowBatch ragged(
      ElementType type, IntBuffer offsets, ByteBuffer input, ByteBuffer output) {
    Objects.requireNonNull(offsets, "offsets");
    IntBuffer view = offsets.duplicate();
    view.clear();
    if (view.capacity() < 1) {
      throw new EmbedNormException("Cannot create row batch: offsets must hold rows + 1 entries");
    }
    int rows = view.capacity() - 1;
    for (int row = 0; row < rows; row++) {
      if (view.get(row + 1) < view.get(row) || view.get(row) < 0) {
        throw new EmbedNormException(
            "Cannot create row batch: offsets must be non-negative and non-decreasing, but row "
                + row
                + " runs from "
                + view.get(row)
                + " to "
                + view.get(row + 1));
      }
    }
    return new RowBatch(type, rows, -1, view, input, output, 0);
  }

  /** A copy whose rows are numbered from {@code index} in error messages (for chunked batches). */
  public RowBatch withFirstRowIndex(long index) {
    return new RowBatch(type, rows, width, offsets, input, output, index);
  }

  public ElementType type() {
    return type;
  }

  public int rows() {
    return rows;
  }

  /** Whether rows may differ in width; false when {@link #fixedWidth} made the batch. */
  public boolean isRagged() {
    return offsets != null;
  }

  /** The element index where row {@code row} starts. */
  public long rowStart(int row) {
    return offsets == null ? (long) row * width : offsets.get(row);
  }

  /** The number of elements in row {@code row}. */
  public int rowWidth(int row) {
    return offsets == null ? width : offsets.get(row + 1) - offsets.get(row);
  }

  /** The elements spanned by all rows (last row end minus first row start). */
  public long elementCount() {
    if (rows == 0) {
      return 0;
    }
    return offsets == null ? (long) rows * width : (long) offsets.get(rows) - offsets.get(0);
  }

  /** A little-endian view of the input; its position and limit are the caller's to change. */
  public ByteBuffer input() {
    return input.duplicate().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** A little-endian view of the output; its position and limit are the caller's to change. */
  public ByteBuffer output() {
    return output.duplicate().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** The index of this batch's first row in the caller's numbering, for error messages. */
  public long firstRowIndex() {
    return firstRowIndex;
  }

  private void checkCapacity(String name, ByteBuffer buffer, long elements) {
    long needed = elements * type.byteWidth();
    if (buffer.capacity() < needed) {
      throw new EmbedNormException(
          "Cannot create row batch: the "
              + name
              + " buffer holds "
              + buffer.capacity()
              + " bytes but "
              + rows
              + " rows of "
              + type.name().toLowerCase(java.util.Locale.ROOT)
              + " ending at element "
              + elements
              + " need "
              + needed);
    }
  }
}

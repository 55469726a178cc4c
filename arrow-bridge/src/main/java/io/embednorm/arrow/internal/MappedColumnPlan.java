package io.embednorm.arrow.internal;

import io.embednorm.engine.Normalization;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether, and how, the mapped path can normalize a column of an Arrow IPC file: the file's layout
 * (footer and record-batch metadata), every batch's row validity and offsets, checked against what
 * the record-batch path would write. The mapped path applies when the file is in the IPC file
 * format, uncompressed and little-endian, the column is a {@code FixedSizeList} or {@code List} of
 * float16, float32 or float64 whose lists start at element 0 and end at the element vector's end,
 * no valid row holds a null element, null rows have an element validity bitmap to be marked in,
 * every row fits the weight and bias, and the bytes it writes (values, element validity) belong to
 * no other buffer or block of the file. Otherwise {@link #open} throws {@link
 * MappedPathUnavailable} saying why.
 *
 * <p>The plan owns the input's channel: the caller closes the plan.
 */
public final class MappedColumnPlan implements AutoCloseable {
  /** The widest row the mapped path takes (the record-batch path takes wider ones). */
  static final long MAX_ROW_BYTES = 1L << 30;

  private final FileChannel input;
  private final IpcFileLayout layout;
  private final List<BatchRows> batches;
  private final long largestRowBytes;

  private MappedColumnPlan(
      FileChannel input, IpcFileLayout layout, List<BatchRows> batches, long largestRowBytes) {
    this.input = input;
    this.layout = layout;
    this.batches = batches;
    this.largestRowBytes = largestRowBytes;
  }

  /**
   * Reads the layout of {@code column} of {@code input} and checks that the mapped path can
   * normalize it with {@code normalization}; the caller closes the plan.
   *
   * @throws MappedPathUnavailable saying why it cannot, including when the file cannot be read
   */
  public static MappedColumnPlan open(Path input, String column, Normalization normalization) {
    FileChannel channel;
    try {
      channel = FileChannel.open(input, StandardOpenOption.READ);
    } catch (IOException | RuntimeException failure) {
      throw new MappedPathUnavailable("the input cannot be opened", failure);
    }
    try {
      IpcFileLayout layout = IpcFileLayout.read(channel, column);
      List<BatchRows> batches = new ArrayList<>(layout.batches().size());
      long largestRowBytes = 0;
      for (ColumnBatch batch : layout.batches()) {
        BatchRows rows = new BatchReader(channel, layout, batch).read();
        checkWidths(rows, normalization);
        largestRowBytes = Math.max(largestRowBytes, largestRowBytes(rows, layout));
        batches.add(rows);
      }
      return new MappedColumnPlan(channel, layout, List.copyOf(batches), largestRowBytes);
    } catch (MappedPathUnavailable unavailable) {
      closeQuietly(channel);
      throw unavailable;
    } catch (IOException | RuntimeException failure) {
      closeQuietly(channel);
      throw new MappedPathUnavailable("the file's metadata cannot be read", failure);
    }
  }

  /** The input, open for reading; owned by the plan. */
  FileChannel input() {
    return input;
  }

  IpcFileLayout layout() {
    return layout;
  }

  List<BatchRows> batches() {
    return batches;
  }

  long largestRowBytes() {
    return largestRowBytes;
  }

  /** The size of the input in bytes. */
  public long size() {
    return layout.size();
  }

  /** Rows over all batches. */
  public long rows() {
    return batches.stream().mapToLong(BatchRows::rows).sum();
  }

  /** Record batches in the file. */
  public int batchCount() {
    return batches.size();
  }

  /** What the path works on, e.g. {@code FixedSizeList<float32>(768) in 43 record batches}. */
  public String description() {
    return layout.describeColumn()
        + " in "
        + batches.size()
        + (batches.size() == 1 ? " uncompressed record batch" : " uncompressed record batches");
  }

  /** Closes the input. */
  @Override
  public void close() {
    closeQuietly(input);
  }

  private static void checkWidths(BatchRows rows, Normalization normalization) {
    if (!normalization.hasWeight() && !normalization.hasBias()) {
      return;
    }
    for (int row = 0; row < rows.rows(); row++) {
      int width = (int) (rows.start(row + 1) - rows.start(row));
      boolean weightFits = !normalization.hasWeight() || normalization.weight().length == width;
      boolean biasFits = !normalization.hasBias() || normalization.bias().length == width;
      if (width != 0 && !(weightFits && biasFits)) {
        throw new MappedPathUnavailable(
            "row " + (rows.batch().firstRow() + row) + " does not fit the weight or bias");
      }
    }
  }

  private static long largestRowBytes(BatchRows rows, IpcFileLayout layout) {
    long largest = 0;
    if (rows.offsets() == null) {
      largest = rows.rows() == 0 ? 0 : rows.width();
    } else {
      for (int row = 0; row < rows.rows(); row++) {
        largest = Math.max(largest, rows.start(row + 1) - rows.start(row));
      }
    }
    long bytes = largest * layout.type().byteWidth();
    if (bytes > MAX_ROW_BYTES) {
      throw new MappedPathUnavailable(
          "record batch " + rows.batch().index() + " has a row of " + bytes + " bytes");
    }
    return bytes;
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // nothing was written through it
    }
  }

  /** Reads one batch's validity bitmaps and offsets and checks them. */
  private static final class BatchReader {
    private final FileChannel channel;
    private final IpcFileLayout layout;
    private final ColumnBatch batch;

    BatchReader(FileChannel channel, IpcFileLayout layout, ColumnBatch batch) {
      this.channel = channel;
      this.layout = layout;
      this.batch = batch;
    }

    BatchRows read() throws IOException {
      int[] offsets = layout.width() >= 0 ? null : offsets();
      long elements = offsets == null ? (long) batch.rows() * layout.width() : batch.elements();
      if (elements > Integer.MAX_VALUE) {
        throw unavailable("holds " + elements + " elements, more than a vector holds");
      }
      if (batch.values().length() < elements * layout.type().byteWidth()) {
        throw unavailable("has a data buffer shorter than its elements");
      }
      BatchRows rows = new BatchRows(batch, validRows(), offsets, layout.width());
      checkElementValidity(rows, elements);
      return rows;
    }

    /** Whether each row is valid, as Arrow Java reads it; null when every row is. */
    private boolean[] validRows() throws IOException {
      int rows = batch.rows();
      Region bitmap = batch.rowValidity();
      if (bitmap.isEmpty()) {
        if (batch.rowNullCount() == 0 || rows == 0) {
          return null;
        }
        if (batch.rowNullCount() == rows) {
          return new boolean[rows];
        }
        throw unavailable("has " + batch.rowNullCount() + " null rows but no validity bitmap");
      }
      if (bitmap.length() < bytesOfBits(rows)) {
        throw unavailable("has a row validity bitmap shorter than its rows");
      }
      ByteBuffer bits = map(bitmap);
      if (ValidityBits.allSet(bits, 0, rows)) {
        checkNullCount(0);
        return null;
      }
      boolean[] valid = new boolean[rows];
      int nulls = 0;
      for (int row = 0; row < rows; row++) {
        valid[row] = ValidityBits.isSet(bits, row);
        nulls += valid[row] ? 0 : 1;
      }
      checkNullCount(nulls);
      return valid;
    }

    private void checkNullCount(long nulls) {
      if (batch.rowNullCount() != nulls) {
        throw unavailable(
            "says it has "
                + batch.rowNullCount()
                + " null rows but its validity bitmap has "
                + nulls);
      }
    }

    /**
     * Checks that no valid row holds a null element and that null rows can be marked. The elements'
     * bitmap is read even where the element node counts no null: Arrow Java reads the bitmap, not
     * the count, so a file whose count says 0 but whose bitmap has nulls would otherwise come out
     * unlike the record-batch path's output. This reads a thirty-second of a float32 column's bytes
     * (a sixty-fourth for float64), a word at a time.
     */
    private void checkElementValidity(BatchRows rows, long elements) throws IOException {
      Region bitmap = batch.elementValidity();
      if (bitmap.isEmpty()) {
        if (batch.elementNullCount() != 0) {
          throw unavailable("has null elements but no element validity bitmap");
        }
        if (rows.hasInvalidRows()) {
          throw unavailable("has null rows but no element validity bitmap to mark them in");
        }
        return;
      }
      if (bitmap.length() < bytesOfBits(elements)) {
        throw unavailable("has an element validity bitmap shorter than its elements");
      }
      ByteBuffer bits = map(bitmap);
      int row = 0;
      while (row < rows.rows()) {
        int end = row;
        while (end < rows.rows() && rows.isValid(end)) {
          end++;
        }
        if (!ValidityBits.allSet(bits, rows.start(row), rows.start(end))) {
          throw unavailable("has null elements in rows that are not null");
        }
        row = end + 1;
      }
      if (!rows.hasInvalidRows() && batch.elementNullCount() != 0) {
        throw unavailable("says it has null elements but its element validity bitmap has none");
      }
    }

    /** The list offsets: rows + 1, from 0 to the element vector's length, never decreasing. */
    private int[] offsets() throws IOException {
      int rows = batch.rows();
      if (rows == 0) {
        return new int[1];
      }
      // Checked before allocating: a damaged row count must not become a huge array.
      if (batch.offsets().length() < (rows + 1L) * Integer.BYTES) {
        throw unavailable("has an offsets buffer shorter than its rows");
      }
      int[] offsets = new int[rows + 1];
      IntBuffer read = map(batch.offsets()).asIntBuffer();
      read.get(0, offsets);
      if (offsets[0] != 0) {
        throw unavailable("has list offsets that start at " + offsets[0] + ", not 0");
      }
      for (int row = 0; row < rows; row++) {
        if (offsets[row + 1] < offsets[row]) {
          throw unavailable("has list offsets that decrease at row " + row);
        }
      }
      if (offsets[rows] != batch.elements()) {
        throw unavailable(
            "has lists ending at element "
                + offsets[rows]
                + " but an element vector of "
                + batch.elements());
      }
      return offsets;
    }

    private ByteBuffer map(Region region) throws IOException {
      return channel
          .map(FileChannel.MapMode.READ_ONLY, region.position(), region.length())
          .order(ByteOrder.LITTLE_ENDIAN);
    }

    private MappedPathUnavailable unavailable(String what) {
      return new MappedPathUnavailable("record batch " + batch.index() + " " + what);
    }

    private static long bytesOfBits(long bits) {
      return (bits + 7) / 8;
    }
  }
}

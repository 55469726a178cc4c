package io.embednorm.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * Where {@link NormalizationEngine#normalizeEncoded} writes encoded rows: a values buffer, where
 * row {@code r} of the batch takes {@link Encoding#rowBytes} bytes from byte {@code Σ_{s<r}
 * rowBytes(width(s))} (counted from index 0, ignoring the buffer's position), and for {@link
 * Encoding#INT8} a scales buffer holding float32 {@code r} (little-endian) for row {@code r}.
 *
 * <p>Owns no memory: whoever made the buffers keeps them alive until the call returns, and frees
 * them.
 */
public final class EncodedRows {
  private final Encoding encoding;
  private final ByteBuffer values;
  private final ByteBuffer scales;

  private EncodedRows(Encoding encoding, ByteBuffer values, ByteBuffer scales) {
    this.encoding = Objects.requireNonNull(encoding, "encoding");
    this.values = Objects.requireNonNull(values, "values").duplicate();
    this.scales = scales == null ? null : scales.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    if (values.isReadOnly() || (scales != null && scales.isReadOnly())) {
      throw new EmbedNormException("Cannot create encoded rows: an output buffer is read-only");
    }
    if (encoding.hasScales() && scales == null) {
      throw new EmbedNormException(
          "Cannot create encoded rows: " + encoding.optionName() + " needs a scales buffer");
    }
  }

  /** Rows of an encoding without scales ({@code float16}, {@code bfloat16}, {@code binary}). */
  public static EncodedRows of(Encoding encoding, ByteBuffer values) {
    return new EncodedRows(encoding, values, null);
  }

  /** Rows of {@code int8}: values, and one float32 scale a row. */
  public static EncodedRows withScales(Encoding encoding, ByteBuffer values, ByteBuffer scales) {
    return new EncodedRows(encoding, values, Objects.requireNonNull(scales, "scales"));
  }

  public Encoding encoding() {
    return encoding;
  }

  /** A view of the values buffer; its position and limit are the caller's to change. */
  public ByteBuffer values() {
    return values.duplicate();
  }

  /** A little-endian view of the scales buffer, or null where the encoding has none. */
  public ByteBuffer scales() {
    return scales == null ? null : scales.duplicate().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** The value bytes of all rows of {@code batch}. */
  public static long valueBytes(Encoding encoding, RowBatch batch) {
    long bytes = 0;
    for (int row = 0; row < batch.rows(); row++) {
      bytes += encoding.rowBytes(batch.rowWidth(row));
    }
    return bytes;
  }

  /**
   * Checks that the buffers hold every row of {@code batch}.
   *
   * @throws EmbedNormException when one is too small
   */
  public void checkFits(RowBatch batch) {
    long needed = valueBytes(encoding, batch);
    if (values.capacity() < needed) {
      throw new EmbedNormException(
          "Cannot encode rows: the values buffer holds "
              + values.capacity()
              + " bytes but "
              + batch.rows()
              + " rows of "
              + encoding.optionName()
              + " need "
              + needed);
    }
    if (scales != null && scales.capacity() < 4L * batch.rows()) {
      throw new EmbedNormException(
          "Cannot encode rows: the scales buffer holds "
              + scales.capacity()
              + " bytes but "
              + batch.rows()
              + " rows need "
              + 4L * batch.rows());
    }
  }
}

package io.embednorm.engine;

import java.nio.ByteBuffer;

/**
 * Writes the {@link Encoding} of float32 rows: the one implementation of the rules on the host,
 * which every CPU surface (engine, Spark row path, Arrow) calls, and which the GPU kernels match.
 */
public final class RowEncoder {
  private static final float INT8_LIMIT = 127f;

  private RowEncoder() {}

  /**
   * Writes the encoding of {@code values[offset, offset + width)} to {@code target} from its index
   * {@code targetOffset} (absolute, ignoring its position; 16-bit elements little-endian whatever
   * the buffer's order), {@link Encoding#rowBytes} bytes.
   *
   * @return the row's int8 scale for {@link Encoding#INT8}, 1 for the other encodings
   */
  public static float encode(
      Encoding encoding,
      float[] values,
      int offset,
      int width,
      ByteBuffer target,
      int targetOffset) {
    switch (encoding) {
      case FLOAT16:
        for (int i = 0; i < width; i++) {
          putLittleEndian(target, targetOffset + 2 * i, Float16.fromFloat(values[offset + i]));
        }
        return 1f;
      case BFLOAT16:
        for (int i = 0; i < width; i++) {
          putLittleEndian(target, targetOffset + 2 * i, BFloat16.fromFloat(values[offset + i]));
        }
        return 1f;
      case INT8:
        return writeInt8(values, offset, width, target, targetOffset);
      default:
        writeSigns(values, offset, width, target, targetOffset);
        return 1f;
    }
  }

  /** {@code max|y| / 127} in float32; NaN when the row holds NaN or an infinity; 0 for no row. */
  public static float int8Scale(float[] values, int offset, int width) {
    float largest = 0f;
    for (int i = 0; i < width; i++) {
      float magnitude = Math.abs(values[offset + i]);
      if (!(magnitude <= Float.MAX_VALUE)) {
        return Float.NaN;
      }
      largest = Math.max(largest, magnitude);
    }
    return largest / INT8_LIMIT;
  }

  private static float writeInt8(
      float[] values, int offset, int width, ByteBuffer target, int targetOffset) {
    float scale = int8Scale(values, offset, width);
    // A scale of 0 (zeros, or a largest magnitude under 127 times the smallest subnormal) or NaN
    // has no quotient to round: q is 0.
    boolean quantizes = scale > 0f;
    for (int i = 0; i < width; i++) {
      byte q = 0;
      if (quantizes) {
        // Rounding error in the scale can put the quotient a hair past 127; it still rounds to 127,
        // and the clamp keeps the extreme case (a subnormal scale) in range.
        float quotient = (float) Math.rint(values[offset + i] / scale);
        q = (byte) Math.max(-INT8_LIMIT, Math.min(INT8_LIMIT, quotient));
      }
      target.put(targetOffset + i, q);
    }
    return scale;
  }

  private static void writeSigns(
      float[] values, int offset, int width, ByteBuffer target, int targetOffset) {
    for (int start = 0; start < width; start += 8) {
      int bits = 0;
      for (int bit = 0, end = Math.min(8, width - start); bit < end; bit++) {
        if (values[offset + start + bit] >= 0f) {
          bits |= 1 << bit;
        }
      }
      target.put(targetOffset + start / 8, (byte) bits);
    }
  }

  private static void putLittleEndian(ByteBuffer target, int index, short bits) {
    target.put(index, (byte) bits);
    target.put(index + 1, (byte) (bits >>> 8));
  }
}

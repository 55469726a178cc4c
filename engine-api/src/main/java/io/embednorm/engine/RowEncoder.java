package io.embednorm.engine;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Writes the {@link Encoding} of float32 rows: the one implementation of the rules on the host,
 * which every CPU surface (engine, Spark row path, Arrow) calls, and which the GPU kernels match.
 * Faster paths (the CPU engine's SIMD encoders) give its bytes and use its per-element rules for
 * their tails.
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
    int bytes = (int) encoding.rowBytes(width);
    Objects.checkFromIndexSize(targetOffset, bytes, target.limit());
    if (target.hasArray()) {
      return encode(
          encoding, values, offset, width, target.array(), target.arrayOffset() + targetOffset);
    }
    byte[] row = new byte[bytes];
    float scale = encode(encoding, values, offset, width, row, 0);
    target.put(targetOffset, row);
    return scale;
  }

  /**
   * As {@link #encode(Encoding, float[], int, int, ByteBuffer, int)}, into {@code
   * target[targetOffset, targetOffset + rowBytes)}.
   */
  public static float encode(
      Encoding encoding, float[] values, int offset, int width, byte[] target, int targetOffset) {
    Objects.checkFromIndexSize(offset, width, values.length);
    Objects.checkFromIndexSize(targetOffset, (int) encoding.rowBytes(width), target.length);
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

  /**
   * The int8 q of {@code value} in a row of {@code scale} above 0 (finite): round-half-even of the
   * float32 quotient, clamped to [-127, 127].
   */
  public static byte quantize(float value, float scale) {
    // Rounding error in the scale can put the quotient a hair past 127; it still rounds to 127,
    // and the clamp keeps the extreme case (a subnormal scale) in range.
    float quotient = (float) Math.rint(value / scale);
    return (byte) Math.max(-INT8_LIMIT, Math.min(INT8_LIMIT, quotient));
  }

  /** The binary encoding's bit of {@code value}: 1 where {@code value >= 0} (-0 too, NaN not). */
  private static int signBit(float value) {
    return value >= 0f ? 1 : 0;
  }

  private static float writeInt8(
      float[] values, int offset, int width, byte[] target, int targetOffset) {
    float scale = int8Scale(values, offset, width);
    // A scale of 0 (zeros, or a largest magnitude under 127 times the smallest subnormal) or NaN
    // has no quotient to round: q is 0.
    if (scale > 0f) {
      for (int i = 0; i < width; i++) {
        target[targetOffset + i] = quantize(values[offset + i], scale);
      }
    } else {
      for (int i = 0; i < width; i++) {
        target[targetOffset + i] = 0;
      }
    }
    return scale;
  }

  private static void writeSigns(
      float[] values, int offset, int width, byte[] target, int targetOffset) {
    for (int start = 0; start < width; start += 8) {
      int bits = 0;
      for (int bit = 0, end = Math.min(8, width - start); bit < end; bit++) {
        bits |= signBit(values[offset + start + bit]) << bit;
      }
      target[targetOffset + start / 8] = (byte) bits;
    }
  }

  private static void putLittleEndian(byte[] target, int index, short bits) {
    target[index] = (byte) bits;
    target[index + 1] = (byte) (bits >>> 8);
  }
}

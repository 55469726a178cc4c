package io.embednorm.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

/**
 * Test reference for {@link Encoding}, written plainly in float64 from docs/SEMANTICS.md
 * (Encodings) and independent of {@link RowEncoder}: checks one encoded row against the float32
 * result {@code y} it encodes.
 */
public final class EncodingReference {
  private EncodingReference() {}

  /**
   * Asserts that {@code actual[actualOffset, +rowBytes)} (and {@code actualScale} for int8) encode
   * {@code y[offset, offset + width)}.
   */
  public static void assertRow(
      Encoding encoding,
      float[] y,
      int offset,
      int width,
      ByteBuffer actual,
      int actualOffset,
      float actualScale,
      String context) {
    switch (encoding) {
      case FLOAT16, BFLOAT16 -> {
        NarrowReference reference =
            encoding == Encoding.FLOAT16 ? NarrowReference.FLOAT16 : NarrowReference.BFLOAT16;
        for (int i = 0; i < width; i++) {
          short bits = narrowBits(actual, actualOffset, i);
          double value = y[offset + i];
          if (Double.isNaN(value)) {
            assertThat(reference.isNaN(bits)).as("%s element %d of NaN", context, i).isTrue();
          } else if ((bits & 0xffff) != (reference.round(value) & 0xffff)) {
            assertThat(bits & 0xffff)
                .as("%s element %d: %s rounded", context, i, value)
                .isEqualTo(reference.round(value) & 0xffff);
          }
        }
      }
      case INT8 -> assertInt8(y, offset, width, actual, actualOffset, actualScale, context);
      case BINARY -> {
        for (int i = 0; i < (width + 7) / 8 * 8; i++) {
          int bit = (actual.get(actualOffset + i / 8) >>> (i % 8)) & 1;
          int expected = i < width && y[offset + i] >= 0.0 ? 1 : 0;
          if (bit == expected) {
            continue;
          }
          assertThat(bit)
              .as("%s bit %d of %s", context, i, i < width ? y[offset + i] : "padding")
              .isEqualTo(expected);
        }
      }
    }
  }

  /**
   * As {@link #assertRow}, for an encoding computed from a float32 result that may differ from
   * {@code y} by up to {@code relative} of each value (a fused kernel whose sums run in another
   * order than the op's): float16/bfloat16 values lie between the roundings of y·(1 − relative) and
   * y·(1 + relative), an int8 scale within {@code relative} of max|y| / 127 and each q within half
   * a step (plus {@code relative} of 127) of y / scale, binary bits exact where |y| exceeds {@code
   * relative} of the row's largest |y|.
   */
  public static void assertRowNear(
      Encoding encoding,
      float[] y,
      int offset,
      int width,
      ByteBuffer actual,
      int actualOffset,
      float actualScale,
      double relative,
      String context) {
    // The row's scale: its largest finite |y| (an infinite element sets no scale for the others).
    double largest = 0;
    boolean finite = true;
    for (int i = 0; i < width; i++) {
      finite &= Double.isFinite(y[offset + i]);
      if (Double.isFinite(y[offset + i])) {
        largest = Math.max(largest, Math.abs(y[offset + i]));
      }
    }
    switch (encoding) {
      case FLOAT16, BFLOAT16 -> {
        NarrowReference reference =
            encoding == Encoding.FLOAT16 ? NarrowReference.FLOAT16 : NarrowReference.BFLOAT16;
        for (int i = 0; i < width; i++) {
          short bits = narrowBits(actual, actualOffset, i);
          double value = y[offset + i];
          if (Double.isNaN(value)) {
            assertThat(reference.isNaN(bits)).as("%s element %d of NaN", context, i).isTrue();
            continue;
          }
          if (Double.isInfinite(value)) {
            assertThat(reference.value(bits)).as("%s element %d", context, i).isEqualTo(value);
            continue;
          }
          // Sums in another order move y by ulps of the row's scale, not only of y itself (a
          // value near 0 after LayerNorm's subtraction, say).
          double band = (Math.abs(value) + largest) * relative;
          double low = reference.value(reference.round(value - band));
          double high = reference.value(reference.round(value + band));
          double got = reference.value(bits);
          assertThat(got >= low && got <= high)
              .as(
                  "%s element %d: %s (bits %d) between %s and %s",
                  context, i, value, bits, low, high)
              .isTrue();
        }
      }
      case INT8 -> {
        if (!finite) {
          assertThat(actualScale).as("%s scale of a row with NaN or infinity", context).isNaN();
          return;
        }
        double scale = largest / 127.0;
        assertThat((double) actualScale)
            .as("%s scale, max|y| %s", context, largest)
            .isCloseTo(scale, org.assertj.core.api.Assertions.within(scale * relative + 1e-45));
        for (int i = 0; i < width; i++) {
          int q = actual.get(actualOffset + i);
          if (actualScale == 0f) {
            assertThat(q).as("%s q %d of a zero row", context, i).isZero();
            continue;
          }
          double error = Math.abs(q - y[offset + i] / (double) actualScale);
          assertThat(error)
              .as("%s q %d of y %s within half a step", context, i, y[offset + i])
              .isLessThanOrEqualTo(0.5 + 127 * relative);
        }
      }
      case BINARY -> {
        for (int i = 0; i < (width + 7) / 8 * 8; i++) {
          int bit = (actual.get(actualOffset + i / 8) >>> (i % 8)) & 1;
          if (i < width && Math.abs(y[offset + i]) <= largest * relative) {
            continue; // a sign the fused sums may turn
          }
          int expected = i < width && y[offset + i] >= 0.0 ? 1 : 0;
          assertThat(bit)
              .as("%s bit %d of %s", context, i, i < width ? y[offset + i] : "padding")
              .isEqualTo(expected);
        }
      }
    }
  }

  /** Element {@code index} of a row of 2-byte little-endian values at {@code offset}. */
  private static short narrowBits(ByteBuffer actual, int offset, int index) {
    int low = actual.get(offset + 2 * index) & 0xff;
    int high = actual.get(offset + 2 * index + 1) & 0xff;
    return (short) (low | high << 8);
  }

  private static void assertInt8(
      float[] y,
      int offset,
      int width,
      ByteBuffer actual,
      int actualOffset,
      float actualScale,
      String context) {
    double largest = 0;
    boolean finite = true;
    for (int i = 0; i < width; i++) {
      double value = y[offset + i];
      finite &= Double.isFinite(value);
      largest = Math.max(largest, Math.abs(value));
    }
    if (!finite) {
      assertThat(actualScale).as("%s scale of a row with NaN or infinity", context).isNaN();
    } else {
      // A float64 quotient of two floats rounds to the correctly rounded float32 quotient.
      float scale = (float) (largest / 127.0);
      assertThat(actualScale).as("%s scale, max|y| %s", context, largest).isEqualTo(scale);
    }
    for (int i = 0; i < width; i++) {
      int q = actual.get(actualOffset + i);
      if (!finite || actualScale == 0f) {
        assertThat(q).as("%s q %d of a row without a scale", context, i).isZero();
        continue;
      }
      double quotient = (float) (y[offset + i] / (double) actualScale);
      // Clamped to ±127: a quotient past 127.5 needs a subnormal scale (rounded far from
      // max|y|/127).
      int expected = (int) Math.max(-127, Math.min(127, Math.rint(quotient)));
      double error = Math.abs(q - y[offset + i] / (double) actualScale);
      boolean clamped = Math.abs(quotient) > 127.5;
      // The float32 quotient is rounded before rint: a half-way one may be that rounding off.
      double bound = 0.5 + Math.ulp((float) quotient);
      if (q == expected && (clamped || error <= bound)) {
        continue;
      }
      assertThat(q)
          .as("%s q %d: y %s / scale %s", context, i, y[offset + i], actualScale)
          .isEqualTo(expected);
      assertThat(error).as("%s q %d within half a step", context, i).isLessThanOrEqualTo(bound);
    }
  }
}

package io.embednorm.engine;

/**
 * IEEE 754 binary16 ("half", Arrow's {@code Float2Vector}) conversions. Java 17 has no {@code
 * Float.floatToFloat16}, so the rounding is written out here: round to nearest, ties to even,
 * subnormal results included; magnitudes from 65520 up become infinities; NaN stays NaN.
 */
public final class Float16 {
  /** The bits of positive infinity. */
  public static final short POSITIVE_INFINITY = (short) 0x7c00;

  /** The bits of negative infinity. */
  public static final short NEGATIVE_INFINITY = (short) 0xfc00;

  /** The bits of the canonical quiet NaN. */
  public static final short NAN = (short) 0x7e00;

  /** The largest finite value, 65504. */
  public static final float MAX_VALUE = 65504f;

  private static final int FLOAT_EXPONENT_REBIAS = (127 - 15) << 23;
  private static final int OVERFLOW_THRESHOLD_BITS = 0x477ff000; // 65520, halfway to 65536
  private static final int SMALLEST_NORMAL_BITS = 0x38800000; // 2^-14
  private static final int HALF_OF_SMALLEST_SUBNORMAL_BITS = 0x33000000; // 2^-25

  private Float16() {}

  /** The exact float32 value of a binary16 bit pattern (NaN payloads are kept). */
  public static float toFloat(short bits) {
    int sign = (bits & 0x8000) << 16;
    int exponent = (bits >>> 10) & 0x1f;
    int mantissa = bits & 0x3ff;
    if (exponent == 0x1f) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mantissa << 13));
    }
    if (exponent == 0) {
      float magnitude = mantissa * 0x1p-24f;
      return sign == 0 ? magnitude : -magnitude;
    }
    return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }

  /** {@code value} rounded to the nearest binary16, ties to even. */
  public static short fromFloat(float value) {
    int bits = Float.floatToRawIntBits(value);
    int sign = (bits >>> 16) & 0x8000;
    int magnitude = bits & 0x7fffffff;
    if (magnitude > 0x7f800000) {
      // NaN: keep the top payload bits and set the quiet bit, so the result is still a NaN.
      return (short) (sign | 0x7e00 | ((magnitude >>> 13) & 0x3ff));
    }
    if (magnitude >= OVERFLOW_THRESHOLD_BITS) {
      return (short) (sign | 0x7c00);
    }
    if (magnitude >= SMALLEST_NORMAL_BITS) {
      int lowestKeptBit = (magnitude >>> 13) & 1;
      return (short) (sign | ((magnitude - FLOAT_EXPONENT_REBIAS + 0xfff + lowestKeptBit) >>> 13));
    }
    if (magnitude <= HALF_OF_SMALLEST_SUBNORMAL_BITS) {
      return (short) sign;
    }
    // Subnormal result: value = significand · 2^(exponent − 150), counted in units of 2^-24.
    int exponent = magnitude >>> 23;
    int significand = (magnitude & 0x7fffff) | 0x800000;
    int shift = 126 - exponent;
    int result = significand >>> shift;
    int remainder = significand & ((1 << shift) - 1);
    int halfway = 1 << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (result & 1) != 0)) {
      result++;
    }
    return (short) (sign | result);
  }

  /** Widens {@code count} values from {@code source} into {@code target}. */
  public static void toFloats(
      short[] source, int sourceOffset, float[] target, int targetOffset, int count) {
    for (int i = 0; i < count; i++) {
      target[targetOffset + i] = toFloat(source[sourceOffset + i]);
    }
  }

  /** Rounds {@code count} values from {@code source} into {@code target}. */
  public static void fromFloats(
      float[] source, int sourceOffset, short[] target, int targetOffset, int count) {
    for (int i = 0; i < count; i++) {
      target[targetOffset + i] = fromFloat(source[sourceOffset + i]);
    }
  }
}

package io.embednorm.engine;

/**
 * bfloat16 conversions: the upper half of a float32, so widening is a shift and narrowing rounds
 * the lower 16 bits away, to nearest with ties to even. Overflow becomes infinity by the carry into
 * the exponent; NaN stays NaN (its quiet bit is set, so a payload held only in the dropped bits
 * cannot turn it into an infinity).
 */
public final class BFloat16 {
  private BFloat16() {}

  /** The exact float32 value of a bfloat16 bit pattern. */
  public static float toFloat(short bits) {
    return Float.intBitsToFloat(bits << 16);
  }

  /** {@code value} rounded to the nearest bfloat16, ties to even. */
  public static short fromFloat(float value) {
    int bits = Float.floatToRawIntBits(value);
    if ((bits & 0x7fffffff) > 0x7f800000) {
      return (short) ((bits >>> 16) | 0x0040);
    }
    int lowestKeptBit = (bits >>> 16) & 1;
    return (short) ((bits + 0x7fff + lowestKeptBit) >>> 16);
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

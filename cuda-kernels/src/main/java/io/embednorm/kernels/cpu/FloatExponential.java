package io.embednorm.kernels.cpu;

/**
 * exp(x) for x ≤ 0 (and NaN) in float32 arithmetic, the softmax exponential: Math.exp in float64
 * was most of softmax's time, and this form vectorizes. Cody–Waite reduction x = n·ln2 + r with |r|
 * ≤ ln2/2, Cephes' degree-7 polynomial for exp(r) (error about 2 ulp, far inside DESIGN.md's 1e-5
 * relative), and 2^n built from exponent bits.
 *
 * <p>Only multiplications and additions, no fused multiply-add, in an order that {@code
 * VectorRowPasses} repeats lane by lane: scalar and SIMD results are the same bits. Inputs are
 * first raised to {@link #FLOOR}, where n = −127 and 2^n's exponent bits are 0: every x ≤ −87.68
 * (including −inf) gives +0, without a comparison. Those exponentials are below float32's normal
 * range and far below the tolerance of a softmax whose largest term is exp(0) = 1. exp(0) = 1
 * exactly; NaN stays NaN.
 */
final class FloatExponential {
  /**
   * The least argument: x · log2(e) rounds to −127 here (−126.96), so 2^n is +0 and so is exp(x),
   * as for every smaller x.
   */
  static final float FLOOR = -88f;

  static final float LOG2_E = 1.44269504088896341f;

  /** 1.5·2^23: adding it rounds a float of magnitude below 2^22 to an integer in the low bits. */
  static final float ROUNDING = 0x1.8p23f;

  static final int ROUNDING_BITS = Float.floatToRawIntBits(ROUNDING);

  /** ln 2 split so that n · LN2_HIGH is exact for |n| below 2^15. */
  static final float LN2_HIGH = 0.693359375f;

  static final float LN2_LOW = -2.12194440e-4f;

  static final float P0 = 1.9875691500e-4f;
  static final float P1 = 1.3981999507e-3f;
  static final float P2 = 8.3334519073e-3f;
  static final float P3 = 4.1665795894e-2f;
  static final float P4 = 1.6666665459e-1f;
  static final float P5 = 5.0000001201e-1f;

  /** Elements per piece of {@link #exponentials}: its scratch of arguments fits the L1 cache. */
  static final int PIECE = 512;

  private FloatExponential() {}

  /** exp(x) for x ≤ 0 or NaN. */
  static float exp(float x) {
    float floored = Math.max(x, FLOOR);
    float rounded = floored * LOG2_E + ROUNDING;
    float n = rounded - ROUNDING;
    float r = floored - n * LN2_HIGH - n * LN2_LOW;
    float polynomial = ((((P0 * r + P1) * r + P2) * r + P3) * r + P4) * r + P5;
    float mantissa = polynomial * (r * r) + r + 1f;
    return mantissa * power(rounded);
  }

  /** 2^n from {@code rounded} = n + {@link #ROUNDING}, n in [−127, 0]: +0 for −127. */
  private static float power(float rounded) {
    return Float.intBitsToFloat((Float.floatToRawIntBits(rounded) + (127 - ROUNDING_BITS)) << 23);
  }

  /**
   * Row by row, {@code output[j] = exp(input[j] − shifts[row])} for the {@code rows} rows of {@code
   * width} elements from {@code inputOffset}, into the same layout from {@code outputOffset}: the
   * bits of {@link #exp} element by element. Input and output may be the same array at the same
   * offset. {@code arguments} and {@code mantissas} are scratch of {@link #PIECE} floats each.
   *
   * <p>Why not one loop of {@link #exp}: C2 (JDK 17) vectorizes no loop that moves bits between
   * float and int, nor one that loads and stores at two different offsets, and that loop ran at
   * about 4 ns an element. Here each piece of {@link #PIECE} elements is copied to {@code
   * arguments}, the polynomial runs there (offsets from zero: vectorized) and stores n + ROUNDING
   * and the mantissa, and a scalar loop multiplies by the powers of two into the output: 1.1-1.9 ns
   * an element (docs/PERFORMANCE.md).
   */
  static void exponentials(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows,
      float[] shifts,
      float[] arguments,
      float[] mantissas) {
    int total = Math.multiplyExact(width, rows);
    for (int done = 0; done < total; done += PIECE) {
      int length = Math.min(PIECE, total - done);
      System.arraycopy(input, inputOffset + done, arguments, 0, length);
      for (int from = 0; from < length; ) {
        int row = (done + from) / width;
        int to = Math.min(length, (row + 1) * width - done);
        subtract(arguments, from, to, shifts[row]);
        from = to;
      }
      mantissas(arguments, mantissas, length);
      int out = outputOffset + done;
      for (int i = 0; i < length; i++) {
        output[out + i] = mantissas[i] * power(arguments[i]);
      }
    }
  }

  /** As above, with {@code scratch}'s arrays for the pieces. */
  static void exponentials(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows,
      float[] shifts,
      RowScratch scratch) {
    exponentials(
        input,
        inputOffset,
        output,
        outputOffset,
        width,
        rows,
        shifts,
        scratch.exponentArguments(),
        scratch.exponentMantissas());
  }

  /** arguments[i] −= shift for i in [from, to): one row's part of a piece. */
  private static void subtract(float[] arguments, int from, int to, float shift) {
    for (int i = from; i < to; i++) {
      arguments[i] -= shift;
    }
  }

  /**
   * For x = arguments[i], i below {@code length}: n + ROUNDING stored back into arguments and exp's
   * polynomial part into mantissas. One loop over the whole piece, apart from the subtraction of
   * each row's shift: in loops as short as a narrow row, the floor's Math.max cost C2's vector
   * loops their speed (width 32: 2.3-2.7 ns an element against 2.0).
   */
  private static void mantissas(float[] arguments, float[] mantissas, int length) {
    for (int i = 0; i < length; i++) {
      float floored = Math.max(arguments[i], FLOOR);
      float rounded = floored * LOG2_E + ROUNDING;
      float n = rounded - ROUNDING;
      float r = floored - n * LN2_HIGH - n * LN2_LOW;
      float polynomial = ((((P0 * r + P1) * r + P2) * r + P3) * r + P4) * r + P5;
      arguments[i] = rounded;
      mantissas[i] = polynomial * (r * r) + r + 1f;
    }
  }
}

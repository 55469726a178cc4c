package io.embednorm.kernels.cpu;

/**
 * exp(x) for x ≤ 0 (and NaN) in float32 arithmetic, the softmax exponential: Math.exp in float64
 * was most of softmax's time, and this form vectorizes. Cody–Waite reduction x = n·ln2 + r with |r|
 * ≤ ln2/2, Cephes' degree-7 polynomial for exp(r) (error about 2 ulp, far inside DESIGN.md's 1e-5
 * relative), and 2^n built from exponent bits.
 *
 * <p>Only multiplications and additions, no fused multiply-add, in an order that {@code
 * VectorRowPasses} repeats lane by lane: scalar and SIMD results are the same bits. Inputs below
 * {@link #LOWEST} (including −inf) give 0: their exponentials are below float32's normal range and
 * far below the tolerance of a softmax whose largest term is exp(0) = 1. exp(0) = 1 exactly; NaN
 * stays NaN.
 */
final class FloatExponential {
  /** ln(2^-126): below it exp(x) is subnormal and taken as 0. */
  static final float LOWEST = -87.33654f;

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
    float rounded = x * LOG2_E + ROUNDING;
    float n = rounded - ROUNDING;
    float r = x - n * LN2_HIGH - n * LN2_LOW;
    float polynomial = ((((P0 * r + P1) * r + P2) * r + P3) * r + P4) * r + P5;
    float mantissa = polynomial * (r * r) + r + 1f;
    float power =
        Float.intBitsToFloat((Float.floatToRawIntBits(rounded) + (127 - ROUNDING_BITS)) << 23);
    float result = mantissa * power;
    return x < LOWEST ? 0f : result;
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
   * arguments}, the polynomial runs there (offsets from zero: vectorized) and stores x and the
   * mantissa, and a scalar loop multiplies by the powers of two into the output: 1.3-2.1 ns an
   * element (docs/PERFORMANCE.md).
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
        mantissas(arguments, mantissas, from, to, shifts[row]);
        from = to;
      }
      int out = outputOffset + done;
      for (int i = 0; i < length; i++) {
        float x = arguments[i];
        float rounded = x * LOG2_E + ROUNDING;
        float power =
            Float.intBitsToFloat((Float.floatToRawIntBits(rounded) + (127 - ROUNDING_BITS)) << 23);
        float result = mantissas[i] * power;
        output[out + i] = x < LOWEST ? 0f : result;
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

  /**
   * x = arguments[i] − shift stored back, and exp's polynomial part for it, for i in [from, to).
   */
  private static void mantissas(
      float[] arguments, float[] mantissas, int from, int to, float shift) {
    for (int i = from; i < to; i++) {
      float x = arguments[i] - shift;
      float rounded = x * LOG2_E + ROUNDING;
      float n = rounded - ROUNDING;
      float r = x - n * LN2_HIGH - n * LN2_LOW;
      float polynomial = ((((P0 * r + P1) * r + P2) * r + P3) * r + P4) * r + P5;
      arguments[i] = x;
      mantissas[i] = polynomial * (r * r) + r + 1f;
    }
  }
}

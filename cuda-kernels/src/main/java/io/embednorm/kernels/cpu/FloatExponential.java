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
}

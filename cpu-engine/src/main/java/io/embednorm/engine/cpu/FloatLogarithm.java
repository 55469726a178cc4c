package io.embednorm.engine.cpu;

/**
 * log(x) for the sums of log-softmax (x in [1, 2^31) or NaN) in float32 arithmetic: Math.log in
 * float64 cost about as much per row as the rest of a 32-wide row, and this form runs eight rows at
 * a time. x = 2^e · m with m in [√½, √2), Cephes' degree-9 polynomial for log(1 + f), f = m − 1,
 * and e·ln2 added in two parts (error about 1 ulp, far inside the 1e-5 relative of
 * docs/SEMANTICS.md, Accuracy).
 *
 * <p>Only multiplications and additions, no fused multiply-add, in an order that {@code
 * VectorRowPasses} repeats lane by lane: scalar and SIMD results are the same bits. log(1) = 0
 * exactly; NaN gives NaN. Meant for normal positive inputs only (the exponent is read from the
 * bits).
 */
final class FloatLogarithm {
  static final float SQRT_HALF = 0.70710678118654752f;
  static final int MANTISSA_BITS = 0x007fffff;

  /** The exponent bits of 0.5: m = 2^-1 · 1.mantissa lies in [0.5, 1). */
  static final int HALF_BITS = 0x3f000000;

  static final float LN2_HIGH = 0.693359375f;
  static final float LN2_LOW = -2.12194440e-4f;

  static final float Q0 = 7.0376836292e-2f;
  static final float Q1 = -1.1514610310e-1f;
  static final float Q2 = 1.1676998740e-1f;
  static final float Q3 = -1.2420140846e-1f;
  static final float Q4 = 1.4249322787e-1f;
  static final float Q5 = -1.6668057665e-1f;
  static final float Q6 = 2.0000714765e-1f;
  static final float Q7 = -2.4999993993e-1f;
  static final float Q8 = 3.3333331174e-1f;

  private FloatLogarithm() {}

  /** log(x) for x ≥ 1 (normal, finite) or NaN. */
  static float log(float x) {
    int bits = Float.floatToRawIntBits(x);
    int exponent = (bits >>> 23) - 126;
    float m = Float.intBitsToFloat((bits & MANTISSA_BITS) | HALF_BITS);
    float f;
    if (m < SQRT_HALF) {
      exponent -= 1;
      f = (m + m) - 1f;
    } else {
      f = m - 1f;
    }
    float e = exponent;
    float z = f * f;
    float polynomial =
        (((((((Q0 * f + Q1) * f + Q2) * f + Q3) * f + Q4) * f + Q5) * f + Q6) * f + Q7) * f + Q8;
    float y = polynomial * f * z;
    y = y + e * LN2_LOW;
    y = y + z * -0.5f;
    float result = (f + y) + e * LN2_HIGH;
    return x != x ? Float.NaN : result;
  }
}

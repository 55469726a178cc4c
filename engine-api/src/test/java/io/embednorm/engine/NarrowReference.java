package io.embednorm.engine;

import java.util.Arrays;

/**
 * Test reference for float16 and bfloat16, written from the IEEE 754 definitions and independent of
 * {@link Float16} and {@link BFloat16}: the value of every bit pattern, and rounding to nearest
 * with ties to even by searching the sorted grid of representable values.
 */
public enum NarrowReference {
  FLOAT16(10, 15, 0x7c00),
  BFLOAT16(7, 127, 0x7f80);

  private final int mantissaBits;
  private final int bias;
  private final int infinityBits;
  private final double[] grid;

  NarrowReference(int mantissaBits, int bias, int infinityBits) {
    this.mantissaBits = mantissaBits;
    this.bias = bias;
    this.infinityBits = infinityBits;
    // grid[i] is the value of the non-negative pattern i; the last entry stands for infinity at the
    // value the next binade would start at, which is where IEEE overflow rounding puts it.
    this.grid = new double[infinityBits + 1];
    for (int bits = 0; bits < infinityBits; bits++) {
      grid[bits] = value((short) bits);
    }
    grid[infinityBits] = Math.scalb(1.0, (infinityBits >>> mantissaBits) - bias);
  }

  /** The exact value of a bit pattern. */
  public double value(short bits) {
    int pattern = bits & 0xffff;
    boolean negative = (pattern & 0x8000) != 0;
    int exponent = (pattern & 0x7fff) >>> mantissaBits;
    int mantissa = pattern & ((1 << mantissaBits) - 1);
    int maximumExponent = 0x7fff >>> mantissaBits;
    double magnitude;
    if (exponent == maximumExponent) {
      magnitude = mantissa == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
    } else if (exponent == 0) {
      magnitude = Math.scalb((double) mantissa, 1 - bias - mantissaBits);
    } else {
      magnitude =
          Math.scalb((double) ((1 << mantissaBits) + mantissa), exponent - bias - mantissaBits);
    }
    return negative ? -magnitude : magnitude;
  }

  /** Whether a bit pattern is a NaN. */
  public boolean isNaN(short bits) {
    return Double.isNaN(value(bits));
  }

  /** {@code value} correctly rounded (to nearest, ties to even); NaN gives the canonical NaN. */
  public short round(double value) {
    if (Double.isNaN(value)) {
      return (short) (infinityBits | (1 << (mantissaBits - 1)));
    }
    int sign = (Double.doubleToRawLongBits(value) < 0) ? 0x8000 : 0;
    double magnitude = Math.abs(value);
    if (magnitude >= grid[infinityBits]) {
      return (short) (sign | infinityBits);
    }
    int found = Arrays.binarySearch(grid, magnitude);
    int below = found >= 0 ? found : -found - 2;
    if (found >= 0) {
      return (short) (sign | below);
    }
    double toBelow = magnitude - grid[below];
    double toAbove = grid[below + 1] - magnitude;
    int nearest;
    if (toBelow < toAbove) {
      nearest = below;
    } else if (toAbove < toBelow) {
      nearest = below + 1;
    } else {
      nearest = (below & 1) == 0 ? below : below + 1;
    }
    return (short) (sign | nearest);
  }

  /**
   * A position on the number line: adjacent finite values differ by 1, both zeros are 0. Used to
   * count ulps between two non-NaN patterns.
   */
  public static int ordinal(short bits) {
    int pattern = bits & 0xffff;
    return (pattern & 0x8000) != 0 ? -(pattern & 0x7fff) : pattern;
  }
}

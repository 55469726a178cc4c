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

  /**
   * The value of every bit pattern, from {@link #exactValue}: tests look values up by the million.
   */
  private final double[] values = new double[1 << 16];

  /**
   * binades[e + 1023] is the first grid index whose value is at least 2^e, for e from -1022 to
   * 1024, and 0 for e = -1023 (zero and the subnormal doubles): the search for a magnitude of
   * binade e need only look from binades[e + 1023] to binades[e + 1024].
   */
  private final int[] binades = new int[2048];

  NarrowReference(int mantissaBits, int bias, int infinityBits) {
    this.mantissaBits = mantissaBits;
    this.bias = bias;
    this.infinityBits = infinityBits;
    for (int bits = 0; bits < values.length; bits++) {
      values[bits] = exactValue(bits);
    }
    // grid[i] is the value of the non-negative pattern i; the last entry stands for infinity at the
    // value the next binade would start at, which is where IEEE overflow rounding puts it.
    this.grid = new double[infinityBits + 1];
    for (int bits = 0; bits < infinityBits; bits++) {
      grid[bits] = values[bits];
    }
    grid[infinityBits] = Math.scalb(1.0, (infinityBits >>> mantissaBits) - bias);
    int index = 0;
    for (int exponent = Double.MIN_EXPONENT; exponent <= Double.MAX_EXPONENT + 1; exponent++) {
      double start = Math.scalb(1.0, exponent);
      while (index <= infinityBits && grid[index] < start) {
        index++;
      }
      binades[exponent + 1023] = index;
    }
  }

  /** The exact value of a bit pattern. */
  public double value(short bits) {
    return values[bits & 0xffff];
  }

  private double exactValue(int pattern) {
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
    int below = below(magnitude);
    if (grid[below] == magnitude) {
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
   * The largest grid index whose value is at most {@code magnitude} (below the overflow entry):
   * searched for in the magnitude's binade [2^e, 2^(e+1)) alone, since every grid value before it
   * is smaller and every one after it larger. In a binade of normal values, the magnitude's leading
   * mantissa bits count the grid values at or below it: that guess, where the grid confirms it,
   * saves the search (tests round values by the million).
   */
  private int below(double magnitude) {
    // Math.getExponent gives -1023 for zero and the subnormal doubles.
    int exponent = Math.getExponent(magnitude);
    int from = binades[exponent + 1023];
    int to = binades[exponent + 1024];
    long leading = Double.doubleToRawLongBits(magnitude) >>> (52 - mantissaBits);
    int guess = from + (int) (leading & ((1 << mantissaBits) - 1));
    if (guess < to && grid[guess] <= magnitude && magnitude < grid[guess + 1]) {
      return guess;
    }
    int found = Arrays.binarySearch(grid, from, to, magnitude);
    return found >= 0 ? found : -found - 2;
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

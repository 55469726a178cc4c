package io.embednorm.engine.cpu;

import io.embednorm.engine.NarrowReference;
import java.nio.ByteBuffer;

/**
 * Compares float16 / bfloat16 outputs with the float64 reference: within 1 ulp of the correctly
 * rounded reference, NaN and ±inf exactly where it has them. Outputs near zero that come from
 * cancellation may instead be within the float32 absolute bound plus one narrow ulp
 * (docs/SEMANTICS.md, Accuracy); each such use is counted in {@code allowances[0]} so that callers
 * can check it stays rare.
 */
public final class NarrowComparison {
  private NarrowComparison() {}

  public static String firstViolation(
      NarrowReference narrow, double[] reference, ByteBuffer output, int start, long[] allowances) {
    return firstViolation(narrow, reference, rounded(narrow, reference), output, start, allowances);
  }

  /** The reference correctly rounded to {@code narrow}, element by element. */
  public static short[] rounded(NarrowReference narrow, double[] reference) {
    short[] bits = new short[reference.length];
    for (int i = 0; i < reference.length; i++) {
      bits[i] = narrow.round(reference[i]);
    }
    return bits;
  }

  /**
   * As above, with the reference already rounded ({@link #rounded}), for callers that compare
   * several outputs with one reference: the rounding search is most of the comparison's time.
   */
  public static String firstViolation(
      NarrowReference narrow,
      double[] reference,
      short[] rounded,
      ByteBuffer output,
      int start,
      long[] allowances) {
    double rowMaximum = 0;
    for (double value : reference) {
      if (Double.isFinite(value)) {
        rowMaximum = Math.max(rowMaximum, Math.abs(value));
      }
    }
    for (int i = 0; i < reference.length; i++) {
      short actual = output.getShort((start + i) * 2);
      short expected = rounded[i];
      boolean good;
      if (Double.isNaN(reference[i])) {
        good = narrow.isNaN(actual);
      } else if (Double.isInfinite(narrow.value(expected))) {
        good = actual == expected;
      } else {
        good =
            !narrow.isNaN(actual)
                && Math.abs(NarrowReference.ordinal(actual) - NarrowReference.ordinal(expected))
                    <= 1;
        if (!good
            && Math.abs(narrow.value(actual) - reference[i])
                <= RowComparison.FLOAT32_ABSOLUTE * rowMaximum + ulp(narrow, expected)) {
          good = true;
          allowances[0]++;
        }
      }
      if (!good) {
        return String.format(
            "element %d: %04x (%s) but the reference %s rounds to %04x (%s)",
            i, actual, narrow.value(actual), reference[i], expected, narrow.value(expected));
      }
    }
    return null;
  }

  /** The gap from {@code bits} to the next value away from zero. */
  static double ulp(NarrowReference narrow, short bits) {
    int magnitude = bits & 0x7fff;
    return narrow.value((short) (magnitude + 1)) - narrow.value((short) magnitude);
  }
}

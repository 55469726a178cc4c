package io.embednorm.engine.cpu;

/**
 * Compares a row against its reference with the float32 bound of docs/SEMANTICS.md, Accuracy: |y −
 * ref| ≤ relative·|ref| + absolute·max|ref of its row| (the row maximum over finite reference
 * values), and NaN and ±inf exactly where the reference has them.
 */
public final class RowComparison {
  /** docs/SEMANTICS.md, Accuracy: the bound for float32 outputs. */
  public static final double FLOAT32_RELATIVE = 1e-5;

  public static final double FLOAT32_ABSOLUTE = 1e-6;

  /**
   * Our bound for float64 outputs: the kernels accumulate in float64 with errors of a few dozen
   * ulps (about 1e-14), so 1e-12 relative plus 1e-13 of the row maximum leaves a margin of 100
   * without hiding a float32 step (1e-7).
   */
  public static final double FLOAT64_RELATIVE = 1e-12;

  public static final double FLOAT64_ABSOLUTE = 1e-13;

  private RowComparison() {}

  /** A description of the first element out of tolerance, or null when all are within it. */
  public static String firstViolation(
      double[] reference, double[] actual, double relative, double absolute) {
    double rowMaximum = 0;
    for (double value : reference) {
      if (Double.isFinite(value)) {
        rowMaximum = Math.max(rowMaximum, Math.abs(value));
      }
    }
    for (int i = 0; i < reference.length; i++) {
      double expected = reference[i];
      double value = actual[i];
      boolean good;
      if (Double.isNaN(expected)) {
        good = Double.isNaN(value);
      } else if (Double.isInfinite(expected)) {
        good = value == expected;
      } else {
        good = Math.abs(value - expected) <= relative * Math.abs(expected) + absolute * rowMaximum;
      }
      if (!good) {
        return "element "
            + i
            + " of "
            + reference.length
            + " is "
            + value
            + " but the reference is "
            + expected
            + " (row maximum "
            + rowMaximum
            + ")";
      }
    }
    return null;
  }

  public static String firstViolation(double[] reference, float[] actual) {
    return firstViolation(
        reference, ReferenceNormalization.widen(actual), FLOAT32_RELATIVE, FLOAT32_ABSOLUTE);
  }

  public static String firstViolation(double[] reference, double[] actual) {
    return firstViolation(reference, actual, FLOAT64_RELATIVE, FLOAT64_ABSOLUTE);
  }
}

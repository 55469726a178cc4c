package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.util.Float16;

/**
 * Compares normalized rows with {@link Reference} under the bounds of docs/SEMANTICS.md, Accuracy:
 * float32 within 1e-5·|ref| + 1e-6·max|ref of row|; float16 within 1 ulp of a float32 result that
 * meets that bound, rounded to float16; float64 within 1e-12·|ref| + 1e-13·max|ref of row|. NaN and
 * ±inf exactly where the reference has them.
 */
final class ReferenceCheck {
  private static final int REPORTED_FAILURES = 8;

  private ReferenceCheck() {}

  /** Asserts that {@code output} is the normalization of every non-null row of {@code input}. */
  static void assertNormalized(
      Normalization normalization,
      ElementType type,
      Double[][] input,
      Double[][] output,
      String context) {
    assertThat(output.length).as("%s: row count", context).isEqualTo(input.length);
    List<String> failures = new ArrayList<>();
    for (int row = 0; row < input.length; row++) {
      if (input[row] == null || containsNull(input[row])) {
        if (output[row] != null) {
          failures.add("row " + row + " should be null");
        }
        continue;
      }
      if (output[row] == null || output[row].length != input[row].length) {
        failures.add("row " + row + " should have " + input[row].length + " elements");
        continue;
      }
      double[] reference = Reference.normalize(normalization, type, unbox(input[row]));
      compareRow(type, reference, output[row], row, failures);
    }
    assertThat(failures.subList(0, Math.min(failures.size(), REPORTED_FAILURES)))
        .as("%s: %d elements off the reference (%s)", context, failures.size(), normalization)
        .isEmpty();
  }

  static void compareRow(
      ElementType type, double[] reference, Double[] actual, int row, List<String> failures) {
    double rowMax = 0;
    for (double value : reference) {
      if (Double.isFinite(value)) {
        rowMax = Math.max(rowMax, Math.abs(value));
      }
    }
    for (int i = 0; i < reference.length; i++) {
      double expected = reference[i];
      Double value = actual[i];
      if (value == null || !matches(type, expected, value, rowMax)) {
        failures.add(
            String.format(
                "row %d element %d: got %s, reference %s (row max %s)",
                row, i, value, expected, rowMax));
      }
    }
  }

  static boolean matches(ElementType type, double expected, double actual, double rowMax) {
    if (Double.isNaN(expected) || Double.isInfinite(expected)) {
      return Double.compare(expected, actual) == 0;
    }
    if (!Double.isFinite(actual)) {
      return false;
    }
    switch (type) {
      case FLOAT64:
        return Math.abs(actual - expected) <= 1e-12 * Math.abs(expected) + 1e-13 * rowMax;
      case FLOAT32:
        return Math.abs(actual - expected) <= floatTolerance(expected, rowMax);
      case FLOAT16:
      default:
        double tolerance = floatTolerance(expected, rowMax);
        int low = ordinal(half(expected - tolerance)) - 1;
        int high = ordinal(half(expected + tolerance)) + 1;
        int got = ordinal(half(actual));
        return low <= got && got <= high;
    }
  }

  private static double floatTolerance(double expected, double rowMax) {
    return 1e-5 * Math.abs(expected) + 1e-6 * rowMax;
  }

  private static short half(double value) {
    return Float16.toFloat16((float) value);
  }

  /** Half-precision bits as a position on the number line: adjacent values differ by 1. */
  static int ordinal(short bits) {
    int magnitude = bits & 0x7fff;
    return (bits & 0x8000) != 0 ? -magnitude : magnitude;
  }

  static boolean containsNull(Double[] row) {
    for (Double value : row) {
      if (value == null) {
        return true;
      }
    }
    return false;
  }

  static double[] unbox(Double[] row) {
    double[] values = new double[row.length];
    for (int i = 0; i < row.length; i++) {
      values[i] = row[i];
    }
    return values;
  }
}

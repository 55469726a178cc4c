package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.List;

/**
 * The bound of docs/SEMANTICS.md, Accuracy: |y − ref| ≤ relative·|ref| + absolute·max|ref of the
 * row|, NaN and ±inf exactly where the reference has them.
 */
final class Accuracy {
  /** float32 outputs: 1e-5 relative, 1e-6 of the row's largest magnitude. */
  static final Accuracy FLOAT = new Accuracy(1e-5, 1e-6);

  /** float64 outputs: 1e-12 relative, 1e-13 of the row's largest magnitude. */
  static final Accuracy DOUBLE = new Accuracy(1e-12, 1e-13);

  private final double relative;
  private final double absolute;

  private Accuracy(double relative, double absolute) {
    this.relative = relative;
    this.absolute = absolute;
  }

  static Accuracy of(String elementType) {
    return elementType.equals("float") ? FLOAT : DOUBLE;
  }

  /** Asserts that {@code actual} (a collected array, or null) matches {@code expected}. */
  void assertRow(String context, List<?> actual, double[] expected) {
    if (expected == null) {
      assertThat(actual).as(context + ": expected a null result").isNull();
      return;
    }
    assertThat(actual).as(context + ": expected a result").isNotNull();
    assertThat(actual).as(context + ": width").hasSize(expected.length);
    double rowMaximum = 0;
    for (double value : expected) {
      if (Double.isFinite(value)) {
        rowMaximum = Math.max(rowMaximum, Math.abs(value));
      }
    }
    for (int i = 0; i < expected.length; i++) {
      double value = ((Number) actual.get(i)).doubleValue();
      double reference = expected[i];
      boolean matches;
      if (Double.isNaN(reference) || Double.isInfinite(reference)) {
        matches = Double.compare(value, reference) == 0;
      } else {
        matches =
            Math.abs(value - reference) <= relative * Math.abs(reference) + absolute * rowMaximum;
      }
      if (!matches) {
        fail(
            "%s: element %d of %d is %s, reference %s (error %.3e, bound %.3e)",
            context,
            i,
            expected.length,
            value,
            reference,
            Math.abs(value - reference),
            relative * Math.abs(reference) + absolute * rowMaximum);
      }
    }
  }
}

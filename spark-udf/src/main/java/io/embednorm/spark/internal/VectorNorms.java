package io.embednorm.spark.internal;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Op;
import java.util.Locale;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * SQL's {@code vector_norm(x [, p])} and the p of {@code lp_normalize} (docs/SEMANTICS.md, Ops):
 * the l1, l2 or l_inf norm of one row, in float64 whatever the row's type, rounded once to float32
 * for {@code array<float>}. A float64 sum that over- or underflows (rows of 1e200 or 1e-200) is
 * taken again over x / max |x|, so the norm is accurate wherever it is representable; a NaN makes
 * it NaN, an infinity (without NaN) infinite. An empty row's norm is 0; a row holding a null is
 * null.
 */
public final class VectorNorms {
  /** Below this a float64 sum of squares may have lost digits to underflow. */
  private static final double SMALLEST_SAFE_SUM = 0x1p-900;

  private VectorNorms() {}

  /**
   * The norm of an {@code array<float>} row as a float32, or null for a row holding a null.
   *
   * @param p 1, 2 or infinity, as a number or as SQL's text ({@code 'inf'}, {@code 'Infinity'})
   * @throws EmbedNormException for another p
   */
  public static Float ofFloats(ArrayData row, Object p) {
    double order = order("vector_norm", p);
    if (hasNullElement(row)) {
      return null;
    }
    float[] values = row.toFloatArray();
    double[] wide = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      wide[i] = values[i];
    }
    return (float) norm(wide, order);
  }

  /** As {@link #ofFloats}, for an {@code array<double>} row, as a float64. */
  public static Double ofDoubles(ArrayData row, Object p) {
    double order = order("vector_norm", p);
    if (hasNullElement(row)) {
      return null;
    }
    return norm(row.toDoubleArray(), order);
  }

  /**
   * The p of a call as a number, 1, 2 or +∞: from a number, a decimal or a text ({@code 'inf'},
   * {@code 'infinity'}, {@code '+inf'}, any case, or a number such as {@code '2'}).
   *
   * @throws EmbedNormException naming {@code function} for any other value
   */
  public static double order(String function, Object p) {
    double value;
    if (p instanceof Number) {
      value = ((Number) p).doubleValue();
    } else if (p instanceof Decimal) {
      value = ((Decimal) p).toDouble();
    } else if (p instanceof UTF8String || p instanceof String) {
      value = parse(function, p.toString());
    } else {
      throw refused(function, String.valueOf(p));
    }
    try {
      Op.lpNormalize(value);
    } catch (EmbedNormException notANorm) {
      throw refused(function, String.valueOf(value));
    }
    return value;
  }

  private static double parse(String function, String text) {
    String trimmed = text.trim().toLowerCase(Locale.ROOT);
    if (trimmed.equals("inf")
        || trimmed.equals("+inf")
        || trimmed.equals("infinity")
        || trimmed.equals("+infinity")) {
      return Double.POSITIVE_INFINITY;
    }
    try {
      return Double.parseDouble(trimmed);
    } catch (NumberFormatException notANumber) {
      throw refused(function, "'" + text + "'");
    }
  }

  private static EmbedNormException refused(String function, String p) {
    String verb = function.equals("vector_norm") ? "compute" : "configure";
    return new EmbedNormException(
        "Cannot " + verb + " " + function + ": p must be 1, 2 or infinity, got " + p);
  }

  /** The p-norm of {@code values} in float64 (p already checked). */
  static double norm(double[] values, double p) {
    double largest = 0;
    for (double value : values) {
      largest = Double.isNaN(value) ? value : Math.max(largest, Math.abs(value));
      if (Double.isNaN(largest)) {
        return largest;
      }
    }
    if (p == Double.POSITIVE_INFINITY || largest == 0 || largest == Double.POSITIVE_INFINITY) {
      return largest;
    }
    double sum = sum(values, p, 1);
    if (Double.isFinite(sum) && sum >= SMALLEST_SAFE_SUM) {
      return p == 1 ? sum : Math.sqrt(sum);
    }
    // Over- or underflow: the same sum over x / max |x|, whose terms lie in [0, 1].
    double scaled = sum(values, p, largest);
    return p == 1 ? largest * scaled : largest * Math.sqrt(scaled);
  }

  private static double sum(double[] values, double p, double divisor) {
    double sum = 0;
    for (double value : values) {
      double term = Math.abs(value) / divisor;
      sum += p == 1 ? term : term * term;
    }
    return sum;
  }

  private static boolean hasNullElement(ArrayData row) {
    for (int i = 0, width = row.numElements(); i < width; i++) {
      if (row.isNullAt(i)) {
        return true;
      }
    }
    return false;
  }
}

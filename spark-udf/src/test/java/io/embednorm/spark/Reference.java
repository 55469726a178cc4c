package io.embednorm.spark;

import java.util.Arrays;

/**
 * The float64 reference of the five ops (docs/SEMANTICS.md, Ops), written independently of the code
 * under test: plain two-pass formulas in double precision (LayerNorm shifted by the row's first
 * value).
 */
final class Reference {
  private Reference() {}

  /** The default epsilon of a SQL function; NaN for those without one. */
  static double defaultEpsilon(String function) {
    switch (function) {
      case "rms_norm":
        return 1e-6;
      case "layer_norm":
        return 1e-5;
      case "l2_normalize":
      case "l1_normalize":
      case "linf_normalize":
        return 1e-12;
      default:
        return Double.NaN;
    }
  }

  /**
   * The reference result of {@code function} on {@code x}; null for a null row or a row with a null
   * element.
   */
  static double[] compute(
      String function, Double[] x, double epsilon, double[] weight, double[] bias) {
    if (x == null) {
      return null;
    }
    double[] values = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      if (x[i] == null) {
        return null;
      }
      values[i] = x[i];
    }
    return compute(function, values, epsilon, weight, bias);
  }

  static double[] compute(
      String function, double[] x, double epsilon, double[] weight, double[] bias) {
    if (x.length == 0) {
      return new double[0];
    }
    switch (function) {
      case "rms_norm":
        return rmsNorm(x, epsilon, weight);
      case "layer_norm":
        return layerNorm(x, epsilon, weight, bias);
      case "softmax":
        return softmax(x, false);
      case "log_softmax":
        return softmax(x, true);
      case "l2_normalize":
        return l2Normalize(x, epsilon);
      case "l1_normalize":
        return normalizeBy(x, Arrays.stream(x).map(Math::abs).sum(), epsilon);
      case "linf_normalize":
        return normalizeBy(x, Arrays.stream(x).map(Math::abs).reduce(0, Math::max), epsilon);
      default:
        throw new IllegalArgumentException("Unknown function " + function);
    }
  }

  private static double[] rmsNorm(double[] x, double epsilon, double[] weight) {
    double sumOfSquares = 0;
    for (double value : x) {
      sumOfSquares += value * value;
    }
    double scale = 1.0 / Math.sqrt(sumOfSquares / x.length + epsilon);
    double[] y = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      y[i] = x[i] * scale * (weight == null ? 1.0 : weight[i]);
    }
    return y;
  }

  /**
   * Shifting by the first element keeps (x − mean) accurate for rows whose mean is large against
   * their spread: differences of nearby doubles are exact.
   */
  private static double[] layerNorm(double[] x, double epsilon, double[] gamma, double[] beta) {
    double shift = x[0];
    double sum = 0;
    for (double value : x) {
      sum += value - shift;
    }
    double mean = sum / x.length;
    double sumOfSquares = 0;
    for (double value : x) {
      double centered = (value - shift) - mean;
      sumOfSquares += centered * centered;
    }
    double scale = 1.0 / Math.sqrt(sumOfSquares / x.length + epsilon);
    double[] y = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      y[i] =
          ((x[i] - shift) - mean) * scale * (gamma == null ? 1.0 : gamma[i])
              + (beta == null ? 0.0 : beta[i]);
    }
    return y;
  }

  private static double[] softmax(double[] x, boolean logarithm) {
    double maximum = Double.NEGATIVE_INFINITY;
    for (double value : x) {
      maximum = Math.max(maximum, value);
    }
    double sum = 0;
    for (double value : x) {
      sum += Math.exp(value - maximum);
    }
    double[] y = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      y[i] = logarithm ? x[i] - maximum - Math.log(sum) : Math.exp(x[i] - maximum) / sum;
    }
    return y;
  }

  private static double[] l2Normalize(double[] x, double epsilon) {
    double sumOfSquares = 0;
    for (double value : x) {
      sumOfSquares += value * value;
    }
    double divisor = Math.max(Math.sqrt(sumOfSquares), epsilon);
    double[] y = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      y[i] = x[i] / divisor;
    }
    return y;
  }

  /** x / max(norm, eps), elementwise. */
  static double[] normalizeBy(double[] x, double norm, double epsilon) {
    double divisor = Math.max(norm, epsilon);
    double[] y = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      y[i] = x[i] / divisor;
    }
    return y;
  }
}

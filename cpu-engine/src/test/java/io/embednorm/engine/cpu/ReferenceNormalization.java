package io.embednorm.engine.cpu;

import io.embednorm.engine.Op;

/**
 * The float64 test reference of docs/SEMANTICS.md, Ops and Accuracy, written straight from the
 * formulas and sharing no code with the kernels: compensated (Neumaier) sums, division rather than
 * reciprocals, and a refined mean for LayerNorm (the mean of the residuals after subtracting a
 * first estimate), so that rows with a large mean stay exact to a few float64 ulps.
 */
public final class ReferenceNormalization {
  private ReferenceNormalization() {}

  /** The op applied to {@code x}; weight and bias may be null. */
  public static double[] apply(Op op, double[] x, double epsilon, double[] weight, double[] bias) {
    int width = x.length;
    double[] y = new double[width];
    switch (op) {
      case RMS_NORM -> {
        double meanSquare = sum(width, i -> x[i] * x[i]) / width;
        double root = Math.sqrt(meanSquare + epsilon);
        for (int i = 0; i < width; i++) {
          y[i] = x[i] / root * (weight == null ? 1.0 : weight[i]);
        }
      }
      case LAYER_NORM -> {
        double estimate = sum(width, i -> x[i]) / width;
        double correction = sum(width, i -> x[i] - estimate) / width;
        double[] centered = new double[width];
        for (int i = 0; i < width; i++) {
          centered[i] = (x[i] - estimate) - correction;
        }
        double variance = sum(width, i -> centered[i] * centered[i]) / width;
        double deviation = Math.sqrt(variance + epsilon);
        for (int i = 0; i < width; i++) {
          y[i] =
              centered[i] / deviation * (weight == null ? 1.0 : weight[i])
                  + (bias == null ? 0.0 : bias[i]);
        }
      }
      case SOFTMAX, LOG_SOFTMAX -> {
        double maximum = x[0];
        for (double value : x) {
          maximum = Math.max(maximum, value);
        }
        double shift = maximum;
        double total = sum(width, i -> Math.exp(x[i] - shift));
        for (int i = 0; i < width; i++) {
          y[i] =
              op == Op.SOFTMAX ? Math.exp(x[i] - shift) / total : (x[i] - shift) - Math.log(total);
        }
      }
      case L2_NORMALIZE -> {
        double norm = Math.sqrt(sum(width, i -> x[i] * x[i]));
        double denominator = Math.max(norm, epsilon);
        for (int i = 0; i < width; i++) {
          y[i] = x[i] / denominator;
        }
      }
      case L1_NORMALIZE, LINF_NORMALIZE -> {
        double norm = 0;
        if (op == Op.L1_NORMALIZE) {
          norm = sum(width, i -> Math.abs(x[i]));
        } else {
          for (double value : x) {
            norm =
                Double.isNaN(value) || Double.isNaN(norm)
                    ? Double.NaN
                    : Math.max(norm, Math.abs(value));
          }
        }
        double denominator = Math.max(norm, epsilon);
        for (int i = 0; i < width; i++) {
          y[i] = x[i] / denominator;
        }
      }
      default -> throw new IllegalArgumentException(op.toString());
    }
    return y;
  }

  /** The float32 values widened, or null. */
  public static double[] widen(float[] values) {
    if (values == null) {
      return null;
    }
    double[] wide = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      wide[i] = values[i];
    }
    return wide;
  }

  private interface Term {
    double at(int index);
  }

  /** Neumaier's compensated sum. */
  private static double sum(int count, Term term) {
    double sum = 0;
    double compensation = 0;
    for (int i = 0; i < count; i++) {
      double value = term.at(i);
      double next = sum + value;
      if (Math.abs(sum) >= Math.abs(value)) {
        compensation += (sum - next) + value;
      } else {
        compensation += (value - next) + sum;
      }
      sum = next;
    }
    // With an infinite term the compensation is inf - inf = NaN: IEEE's plain sum is the answer.
    return Double.isFinite(sum) ? sum + compensation : sum;
  }
}

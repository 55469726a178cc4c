package io.embednorm.arrow;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;

/** The ops in plain float64, straight from the formulas of docs/SEMANTICS.md, Ops. */
final class Reference {
  private Reference() {}

  static double[] normalize(Normalization normalization, ElementType type, double[] x) {
    int width = x.length;
    double[] y = new double[width];
    if (width == 0) {
      return y;
    }
    double[] weight = parameter(normalization.weight(), normalization.floatWeight(), type);
    double[] bias = parameter(normalization.bias(), normalization.floatBias(), type);
    double epsilon = normalization.epsilon();
    switch (normalization.op()) {
      case RMS_NORM:
        {
          double squares = 0;
          for (double value : x) {
            squares += value * value;
          }
          double root = Math.sqrt(squares / width + epsilon);
          for (int i = 0; i < width; i++) {
            y[i] = x[i] / root * (weight == null ? 1 : weight[i]);
          }
          return y;
        }
      case LAYER_NORM:
        {
          double sum = 0;
          for (double value : x) {
            sum += value;
          }
          double mean = sum / width;
          double squares = 0;
          for (double value : x) {
            squares += (value - mean) * (value - mean);
          }
          double deviation = Math.sqrt(squares / width + epsilon);
          for (int i = 0; i < width; i++) {
            y[i] =
                (x[i] - mean) / deviation * (weight == null ? 1 : weight[i])
                    + (bias == null ? 0 : bias[i]);
          }
          return y;
        }
      case SOFTMAX:
      case LOG_SOFTMAX:
        {
          double max = Double.NEGATIVE_INFINITY;
          for (double value : x) {
            max = Math.max(max, value);
          }
          double sum = 0;
          for (double value : x) {
            sum += Math.exp(value - max);
          }
          for (int i = 0; i < width; i++) {
            y[i] =
                normalization.op() == io.embednorm.engine.Op.SOFTMAX
                    ? Math.exp(x[i] - max) / sum
                    : x[i] - max - Math.log(sum);
          }
          return y;
        }
      case L1_NORMALIZE:
      case LINF_NORMALIZE:
        {
          double norm = 0;
          for (double value : x) {
            norm =
                normalization.op() == io.embednorm.engine.Op.L1_NORMALIZE
                    ? norm + Math.abs(value)
                    : Math.max(norm, Math.abs(value));
          }
          for (int i = 0; i < width; i++) {
            y[i] = x[i] / Math.max(norm, epsilon);
          }
          return y;
        }
      case L2_NORMALIZE:
      default:
        {
          double squares = 0;
          for (double value : x) {
            squares += value * value;
          }
          double norm = Math.max(Math.sqrt(squares), epsilon);
          for (int i = 0; i < width; i++) {
            y[i] = x[i] / norm;
          }
          return y;
        }
    }
  }

  /** The weight or bias as the engine applies it: float32 for all but float64 rows. */
  private static double[] parameter(double[] values, float[] floats, ElementType type) {
    if (values == null || type == ElementType.FLOAT64) {
      return values;
    }
    double[] widened = new double[floats.length];
    for (int i = 0; i < floats.length; i++) {
      widened[i] = floats[i];
    }
    return widened;
  }
}

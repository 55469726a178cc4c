package io.embednorm.kernels.cpu;

/**
 * The five ops on a float64 row, accumulating in float64 (see {@link DoubleSums}). Also the
 * recomputation path of float32 rows whose float32 sums leave the safe range. Callers have checked
 * bounds and widths; {@code width} is at least 1; weight and bias may be null.
 */
final class DoubleRowKernels {
  private DoubleRowKernels() {}

  /** y = x · (1 / sqrt(Σx² / D + eps)) · w. */
  static void rmsNorm(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width,
      double epsilon,
      double[] weight) {
    double sumOfSquares = DoubleSums.sumOfSquares(input, inputOffset, width);
    double scale = 1.0 / Math.sqrt(sumOfSquares / width + epsilon);
    scale(input, inputOffset, output, outputOffset, width, scale, weight);
  }

  /**
   * y = (x − μ) · rstd · γ + β, in two passes over d = x − x[0]: shifting by a value of the row
   * keeps the sums small when the mean is large against the spread.
   */
  static void layerNorm(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width,
      double epsilon,
      double[] gamma,
      double[] beta) {
    double shift = input[inputOffset];
    double mean = DoubleSums.sumOfDifferences(input, inputOffset, width, shift) / width;
    double sumOfSquares = DoubleSums.sumOfSquaredDeviations(input, inputOffset, width, shift, mean);
    double inverseDeviation = 1.0 / Math.sqrt(sumOfSquares / width + epsilon);
    for (int i = 0; i < width; i++) {
      double value = (input[inputOffset + i] - shift - mean) * inverseDeviation;
      if (gamma != null) {
        value *= gamma[i];
      }
      if (beta != null) {
        value += beta[i];
      }
      output[outputOffset + i] = value;
    }
  }

  /** y = e / Σe with e = exp(x − max); the exponentials are stored first, then scaled. */
  static void softmax(
      double[] input, int inputOffset, double[] output, int outputOffset, int width) {
    double maximum = DoubleSums.maximum(input, inputOffset, width);
    for (int i = 0; i < width; i++) {
      output[outputOffset + i] = Math.exp(input[inputOffset + i] - maximum);
    }
    double inverseSum = 1.0 / DoubleSums.sumOfDifferences(output, outputOffset, width, 0.0);
    for (int i = 0; i < width; i++) {
      output[outputOffset + i] *= inverseSum;
    }
  }

  /** y = x − max − log Σ exp(x − max). */
  static void logSoftmax(
      double[] input, int inputOffset, double[] output, int outputOffset, int width) {
    double maximum = DoubleSums.maximum(input, inputOffset, width);
    double logSum = Math.log(DoubleSums.sumOfExponentials(input, inputOffset, width, maximum));
    for (int i = 0; i < width; i++) {
      output[outputOffset + i] = input[inputOffset + i] - maximum - logSum;
    }
  }

  /** y = x · (1 / max(sqrt(Σx²), eps)). */
  static void l2Normalize(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width,
      double epsilon) {
    double sumOfSquares = DoubleSums.sumOfSquares(input, inputOffset, width);
    double scale = 1.0 / Math.max(Math.sqrt(sumOfSquares), epsilon);
    scale(input, inputOffset, output, outputOffset, width, scale, null);
  }

  private static void scale(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width,
      double scale,
      double[] weight) {
    if (weight == null) {
      for (int i = 0; i < width; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale;
      }
    } else {
      for (int i = 0; i < width; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale * weight[i];
      }
    }
  }
}

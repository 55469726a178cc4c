package io.embednorm.engine.cpu;

/**
 * The ops on a float64 row, accumulating in float64 (see {@link DoubleSums}), with the loops of
 * {@link RowPasses}. Also the recomputation path of float32 rows whose float32 sums leave the safe
 * range. Callers have checked bounds and widths; {@code width} is at least 1; weight and bias may
 * be null.
 */
final class DoubleRowKernels {
  private DoubleRowKernels() {}

  /** y = x · (1 / sqrt(Σx² / D + eps)) · w. */
  static void rmsNorm(
      RowPasses passes,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width,
      double epsilon,
      double[] weight) {
    double sumOfSquares = passes.sumOfSquares(input, inputOffset, width);
    double scale = 1.0 / Math.sqrt(sumOfSquares / width + epsilon);
    passes.scale(input, inputOffset, output, outputOffset, width, scale, weight);
  }

  /**
   * y = (x − μ) · rstd · γ + β, in two passes over d = x − x[0]: shifting by a value of the row
   * keeps the sums small when the mean is large against the spread.
   */
  static void layerNorm(
      RowPasses passes,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width,
      double epsilon,
      double[] gamma,
      double[] beta) {
    double shift = input[inputOffset];
    double mean = passes.sumOfDifferences(input, inputOffset, width, shift) / width;
    double sumOfSquares = passes.sumOfSquaredDeviations(input, inputOffset, width, shift, mean);
    double inverseDeviation = 1.0 / Math.sqrt(sumOfSquares / width + epsilon);
    passes.standardize(
        input,
        inputOffset,
        output,
        outputOffset,
        width,
        shift,
        mean,
        inverseDeviation,
        gamma,
        beta);
  }

  /**
   * y = e / Σe with e = exp(x − max); the exponentials are stored first (Math.exp, scalar on both
   * paths: no float64 polynomial here), then summed and scaled.
   */
  static void softmax(
      RowPasses passes,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width) {
    double maximum = passes.maximum(input, inputOffset, width);
    for (int i = 0; i < width; i++) {
      output[outputOffset + i] = Math.exp(input[inputOffset + i] - maximum);
    }
    double inverseSum = 1.0 / passes.sumOfDifferences(output, outputOffset, width, 0.0);
    passes.scale(output, outputOffset, output, outputOffset, width, inverseSum, null);
  }

  /** y = x − max − log Σ exp(x − max). */
  static void logSoftmax(
      RowPasses passes,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width) {
    double maximum = passes.maximum(input, inputOffset, width);
    double logSum = Math.log(DoubleSums.sumOfExponentials(input, inputOffset, width, maximum));
    passes.subtract(input, inputOffset, output, outputOffset, width, maximum, logSum);
  }

  /** y = x · (1 / max(sqrt(Σx²), eps)). */
  static void l2Normalize(
      RowPasses passes,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width,
      double epsilon) {
    double sumOfSquares = passes.sumOfSquares(input, inputOffset, width);
    double scale = 1.0 / Math.max(Math.sqrt(sumOfSquares), epsilon);
    passes.scale(input, inputOffset, output, outputOffset, width, scale, null);
  }

  /**
   * y = x · (1 / max(‖x‖, eps)) for the l1 norm (Σ|x|, {@code magnitudeSum}) or the l_inf norm (max
   * |x|), both in plain Java on either passes ({@link DoubleSums}), so that they give the same
   * bits.
   */
  static void normalizeByMagnitudes(
      RowPasses passes,
      boolean magnitudeSum,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width,
      double epsilon) {
    double norm =
        magnitudeSum
            ? DoubleSums.sumOfMagnitudes(input, inputOffset, width)
            : DoubleSums.maximumMagnitude(input, inputOffset, width);
    double scale = 1.0 / Math.max(norm, epsilon);
    passes.scale(input, inputOffset, output, outputOffset, width, scale, null);
  }
}

package io.embednorm.kernels.cpu;

/**
 * The five ops on a float32 row. Sums accumulate in float32 (see {@link FloatSums}); the few
 * per-row scalars (mean, 1/sqrt, log) and each output element are computed in float64 from those
 * sums and rounded to float32 once.
 *
 * <p>A row whose float32 sum of squares leaves the safe range is recomputed entirely in float64 by
 * {@link DoublePrecisionFallback}: above 2^100 (the squares overflowed or nearly so), or below
 * 2^-100 when eps is too small to dominate it (the squares underflowed). Rows of 1e30 or 1e-30 with
 * eps = 0 thus match the float64 reference, while ordinary rows, zero rows with the default eps and
 * NaN rows stay on the float32 path.
 *
 * <p>Callers have checked bounds and widths; {@code width} is at least 1; weight and bias may be
 * null.
 */
final class FloatRowKernels {
  private static final float LARGEST_SAFE_SUM = 0x1p100f;
  private static final float SMALLEST_SAFE_SUM = 0x1p-100f;

  /** Below this, eps no longer dominates a mean square smaller than 2^-100. */
  private static final double SMALLEST_DOMINATING_VARIANCE_EPSILON = 0x1p-60;

  /** Below this, eps no longer dominates a norm smaller than 2^-50. */
  private static final double SMALLEST_DOMINATING_NORM_EPSILON = 0x1p-40;

  private FloatRowKernels() {}

  /** y = x · (1 / sqrt(Σx² / D + eps)) · w. */
  static void rmsNorm(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double epsilon,
      float[] weight) {
    float sumOfSquares = FloatSums.sumOfSquares(input, inputOffset, width);
    if (outsideSafeRange(sumOfSquares, epsilon, SMALLEST_DOMINATING_VARIANCE_EPSILON)) {
      DoublePrecisionFallback.rmsNorm(
          input, inputOffset, output, outputOffset, width, epsilon, weight);
      return;
    }
    double scale = 1.0 / Math.sqrt((double) sumOfSquares / width + epsilon);
    scale(input, inputOffset, output, outputOffset, width, scale, weight);
  }

  /**
   * y = (x − μ) · rstd · γ + β, in two passes over d = x − x[0] (never E[x²] − E[x]²): shifting by
   * a value of the row keeps float32 rows with mean 1e6 and spread 0.5 exact in d, where PyTorch's
   * float32 kernel loses about ε·|mean|/σ.
   */
  static void layerNorm(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double epsilon,
      float[] gamma,
      float[] beta) {
    float shift = input[inputOffset];
    double mean = (double) FloatSums.sumOfDifferences(input, inputOffset, width, shift) / width;
    float sumOfSquares =
        FloatSums.sumOfSquaredDeviations(input, inputOffset, width, shift, (float) mean);
    if (outsideSafeRange(sumOfSquares, epsilon, SMALLEST_DOMINATING_VARIANCE_EPSILON)) {
      DoublePrecisionFallback.layerNorm(
          input, inputOffset, output, outputOffset, width, epsilon, gamma, beta);
      return;
    }
    double inverseDeviation = 1.0 / Math.sqrt((double) sumOfSquares / width + epsilon);
    for (int i = 0; i < width; i++) {
      double value = (input[inputOffset + i] - (double) shift - mean) * inverseDeviation;
      if (gamma != null) {
        value *= gamma[i];
      }
      if (beta != null) {
        value += beta[i];
      }
      output[outputOffset + i] = (float) value;
    }
  }

  /**
   * y = e · (1 / Σe) with e = exp(x − max): each exponential is computed once, stored in the
   * output, summed from there and scaled in place. A NaN or +inf makes the whole row NaN, a row of
   * all −inf is NaN (−inf − −inf), an isolated −inf gives 0; all of it by IEEE arithmetic.
   */
  static void softmax(float[] input, int inputOffset, float[] output, int outputOffset, int width) {
    double maximum = FloatSums.maximum(input, inputOffset, width);
    for (int i = 0; i < width; i++) {
      output[outputOffset + i] = (float) Math.exp(input[inputOffset + i] - maximum);
    }
    double inverseSum = 1.0 / FloatSums.sumOfDifferences(output, outputOffset, width, 0f);
    for (int i = 0; i < width; i++) {
      output[outputOffset + i] = (float) (output[outputOffset + i] * inverseSum);
    }
  }

  /**
   * y = x − max − log Σ exp(x − max). The sum is taken without storing the exponentials, so that
   * the input may be the output.
   */
  static void logSoftmax(
      float[] input, int inputOffset, float[] output, int outputOffset, int width) {
    float maximum = FloatSums.maximum(input, inputOffset, width);
    double logSum = Math.log(FloatSums.sumOfExponentials(input, inputOffset, width, maximum));
    for (int i = 0; i < width; i++) {
      output[outputOffset + i] = (float) (input[inputOffset + i] - (double) maximum - logSum);
    }
  }

  /** y = x · (1 / max(sqrt(Σx²), eps)). */
  static void l2Normalize(
      float[] input, int inputOffset, float[] output, int outputOffset, int width, double epsilon) {
    float sumOfSquares = FloatSums.sumOfSquares(input, inputOffset, width);
    if (outsideSafeRange(sumOfSquares, epsilon, SMALLEST_DOMINATING_NORM_EPSILON)) {
      DoublePrecisionFallback.l2Normalize(input, inputOffset, output, outputOffset, width, epsilon);
      return;
    }
    double scale = 1.0 / Math.max(Math.sqrt(sumOfSquares), epsilon);
    scale(input, inputOffset, output, outputOffset, width, scale, null);
  }

  /** False for NaN: a NaN row stays NaN on either path, so it keeps the cheap one. */
  private static boolean outsideSafeRange(
      float sumOfSquares, double epsilon, double smallestDominatingEpsilon) {
    return sumOfSquares > LARGEST_SAFE_SUM
        || (sumOfSquares < SMALLEST_SAFE_SUM && epsilon < smallestDominatingEpsilon);
  }

  private static void scale(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double scale,
      float[] weight) {
    if (weight == null) {
      for (int i = 0; i < width; i++) {
        output[outputOffset + i] = (float) (input[inputOffset + i] * scale);
      }
    } else {
      for (int i = 0; i < width; i++) {
        output[outputOffset + i] = (float) (input[inputOffset + i] * scale * weight[i]);
      }
    }
  }
}

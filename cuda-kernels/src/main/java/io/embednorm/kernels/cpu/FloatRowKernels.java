package io.embednorm.kernels.cpu;

/**
 * The five ops on a float32 row. Sums accumulate in float32 (blocked, see {@link FloatSums}); the
 * few per-row scalars (mean, 1/sqrt, log) are computed in float64 from those sums and rounded to
 * float32 once; each output element is a short chain of float32 operations, which SIMD runs eight
 * lanes at a time. The loops themselves are {@link RowPasses}, scalar or SIMD, with equal bits.
 *
 * <p>A row whose float32 sum of squares leaves the safe range is recomputed entirely in float64 by
 * {@link DoublePrecisionFallback}: above 2^100 (the squares overflowed or nearly so), or below
 * 2^-100 when eps is too small to dominate it (the squares underflowed). Rows of 1e30 or 1e-30 with
 * eps = 0 thus match the float64 reference, while ordinary rows, zero rows with the default eps and
 * NaN rows stay on the float32 path. So does a row whose float32 scale factor would not be a normal
 * number (only with an eps beyond any practical value).
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

  /** y = (x · (1 / sqrt(Σx² / D + eps))) · w. */
  static void rmsNorm(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double epsilon,
      float[] weight) {
    float sumOfSquares = passes.sumOfSquares(input, inputOffset, width);
    float scale = (float) (1.0 / Math.sqrt((double) sumOfSquares / width + epsilon));
    if (outsideSafeRange(sumOfSquares, epsilon, SMALLEST_DOMINATING_VARIANCE_EPSILON)
        || notNormal(scale)) {
      DoublePrecisionFallback.rmsNorm(
          passes, input, inputOffset, output, outputOffset, width, epsilon, weight);
      return;
    }
    passes.scale(input, inputOffset, output, outputOffset, width, scale, weight);
  }

  /**
   * y = (x − μ) · rstd · γ + β, in two passes over d = x − x[0] (never E[x²] − E[x]²): shifting by
   * a value of the row keeps float32 rows with mean 1e6 and spread 0.5 exact in d, where PyTorch's
   * float32 kernel loses about ε·|mean|/σ.
   */
  static void layerNorm(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double epsilon,
      float[] gamma,
      float[] beta) {
    float shift = input[inputOffset];
    double meanOfDifferences =
        (double) passes.sumOfDifferences(input, inputOffset, width, shift) / width;
    float sumOfSquares =
        passes.sumOfSquaredDeviations(input, inputOffset, width, shift, (float) meanOfDifferences);
    float inverseDeviation = (float) (1.0 / Math.sqrt((double) sumOfSquares / width + epsilon));
    if (outsideSafeRange(sumOfSquares, epsilon, SMALLEST_DOMINATING_VARIANCE_EPSILON)
        || notNormal(inverseDeviation)) {
      DoublePrecisionFallback.layerNorm(
          passes, input, inputOffset, output, outputOffset, width, epsilon, gamma, beta);
      return;
    }
    // The mean of x as a float32 pair, so that x − centerHigh is exact for x near the mean.
    double center = shift + meanOfDifferences;
    float centerHigh = (float) center;
    float centerLow = (float) (center - centerHigh);
    passes.standardize(
        input,
        inputOffset,
        output,
        outputOffset,
        width,
        centerHigh,
        centerLow,
        inverseDeviation,
        gamma,
        beta);
  }

  /**
   * y = e · (1 / Σe) with e = exp(x − max): each exponential is computed once, stored in the output
   * (and summed on the way), and scaled in place. A NaN or +inf makes the whole row NaN, a row of
   * all −inf is NaN (−inf − −inf), an isolated −inf gives 0; all of it by IEEE arithmetic. Σe lies
   * in [1, D], so 1 / Σe is a normal float.
   */
  static void softmax(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width) {
    float maximum = passes.maximum(input, inputOffset, width);
    float sum = passes.storeExponentials(input, inputOffset, output, outputOffset, width, maximum);
    float inverseSum = (float) (1.0 / sum);
    passes.scale(output, outputOffset, output, outputOffset, width, inverseSum, null);
  }

  /**
   * y = (x − max) − log Σ exp(x − max). The sum is taken without storing the exponentials, so that
   * the input may be the output.
   */
  static void logSoftmax(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width) {
    float maximum = passes.maximum(input, inputOffset, width);
    float logSum = (float) Math.log(passes.sumOfExponentials(input, inputOffset, width, maximum));
    passes.subtract(input, inputOffset, output, outputOffset, width, maximum, logSum);
  }

  /** y = x · (1 / max(sqrt(Σx²), eps)). */
  static void l2Normalize(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double epsilon) {
    float sumOfSquares = passes.sumOfSquares(input, inputOffset, width);
    float scale = (float) (1.0 / Math.max(Math.sqrt(sumOfSquares), epsilon));
    if (outsideSafeRange(sumOfSquares, epsilon, SMALLEST_DOMINATING_NORM_EPSILON)
        || notNormal(scale)) {
      DoublePrecisionFallback.l2Normalize(
          passes, input, inputOffset, output, outputOffset, width, epsilon);
      return;
    }
    passes.scale(input, inputOffset, output, outputOffset, width, scale, null);
  }

  /** False for NaN: a NaN row stays NaN on either path, so it keeps the cheap one. */
  private static boolean outsideSafeRange(
      float sumOfSquares, double epsilon, double smallestDominatingEpsilon) {
    return sumOfSquares > LARGEST_SAFE_SUM
        || (sumOfSquares < SMALLEST_SAFE_SUM && epsilon < smallestDominatingEpsilon);
  }

  /** A positive scale that float32 would hold inexactly (subnormal, zero) or as infinity. */
  private static boolean notNormal(float scale) {
    return scale < Float.MIN_NORMAL || scale == Float.POSITIVE_INFINITY;
  }
}

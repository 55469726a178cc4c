package io.embednorm.kernels.cpu;

/**
 * The loops over a row that the op kernels ({@link FloatRowKernels}, {@link DoubleRowKernels}) are
 * made of: reductions and element-wise passes. Two implementations exist, {@link ScalarRowPasses}
 * and the Vector API one ({@code VectorRowPasses}, chosen at run time by {@link RowPassSelection}).
 * Both perform the same IEEE operations in the same order (the reductions use the lanes, blocks and
 * split points of {@link FloatSums}), so they give the same bits for every row: which one runs is
 * invisible in the output.
 *
 * <p>Callers have checked bounds; {@code count} is at least 1; weight, gamma and beta may be null.
 */
interface RowPasses {

  /** What runs, for the engine's description, e.g. {@code java simd, 256-bit}. */
  String description();

  /** The maximum of the row; NaN as soon as any element is NaN. */
  float maximum(float[] values, int offset, int count);

  /** Σ x². */
  float sumOfSquares(float[] values, int offset, int count);

  /** Σ (x − shift). */
  float sumOfDifferences(float[] values, int offset, int count, float shift);

  /** Σ ((x − shift) − center)². */
  float sumOfSquaredDeviations(float[] values, int offset, int count, float shift, float center);

  /** Σ exp(x − maximum), with {@link FloatExponential}. */
  float sumOfExponentials(float[] values, int offset, int count, float maximum);

  /**
   * Stores e = exp(x − maximum) into the output and returns Σ e, summed as {@link
   * #sumOfDifferences} with shift 0 would sum the stored values.
   */
  float storeExponentials(
      float[] input, int inputOffset, float[] output, int outputOffset, int count, float maximum);

  /** y = (x · scale) · w. */
  void scale(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float scale,
      float[] weight);

  /**
   * y = (((x − centerHigh) − centerLow) · inverseDeviation) · γ + β, where centerHigh + centerLow
   * is the row mean as an unevaluated float32 pair: x − centerHigh is exact for x near the mean, so
   * outputs near zero keep the precision they would have in float64.
   */
  void standardize(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float centerHigh,
      float centerLow,
      float inverseDeviation,
      float[] gamma,
      float[] beta);

  /** y = (x − maximum) − logSum. */
  void subtract(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float maximum,
      float logSum);

  /**
   * The per-row scale factors of a group of rows, from their float32 sums, in float64 and rounded
   * once: {@code values[i] = (float) (1 / sqrt(values[i] / divisor + epsilon))} for i below {@code
   * count} (RMSNorm, LayerNorm). Done for many rows at once, so that SIMD can take four at a time.
   */
  void inverseSquareRoots(float[] values, int count, double divisor, double epsilon);

  /** {@code values[i] = (float) (1 / max(sqrt(values[i]), epsilon))} (L2 normalization). */
  void inverseNorms(float[] values, int count, double epsilon);

  /** {@code values[i] = (float) (1 / values[i])}, in float64 (softmax). */
  void inverses(float[] values, int count);

  /** As {@link #maximum(float[], int, int)}, in float64. */
  double maximum(double[] values, int offset, int count);

  /** As {@link #sumOfSquares(float[], int, int)}, in float64. */
  double sumOfSquares(double[] values, int offset, int count);

  /** As {@link #sumOfDifferences(float[], int, int, float)}, in float64. */
  double sumOfDifferences(double[] values, int offset, int count, double shift);

  /** As {@link #sumOfSquaredDeviations(float[], int, int, float, float)}, in float64. */
  double sumOfSquaredDeviations(
      double[] values, int offset, int count, double shift, double center);

  /** y = (x · scale) · w, in float64. */
  void scale(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double scale,
      double[] weight);

  /**
   * As {@link #standardize(float[], int, float[], int, int, float, float, float, float[],
   * float[])}.
   */
  void standardize(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double shift,
      double mean,
      double inverseDeviation,
      double[] gamma,
      double[] beta);

  /** y = (x − maximum) − logSum, in float64. */
  void subtract(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double maximum,
      double logSum);
}

package io.embednorm.engine.cpu;

/**
 * The ops on float32 rows. Sums accumulate in float32 (blocked, see {@link FloatSums}); the few
 * per-row scalars (mean, 1/sqrt, log) are computed in float64 from those sums and rounded to
 * float32 once; each output element is a short chain of float32 operations, which SIMD runs eight
 * lanes at a time. The loops themselves are {@link RowPasses}, scalar or SIMD, with equal bits.
 *
 * <p>Each kernel takes a run of rows of one width, laid out back to back, and runs each pass over
 * up to {@link #GROUP_ROWS} rows (one call of a {@link RowPasses} method) before the next pass: a
 * narrow row is a short chain of dependent steps (a reduction, a square root, a division, a
 * scaling), and rows side by side give the processor independent chains to overlap; the per-row
 * float64 arithmetic runs four rows at a time. Every row still sees exactly the operations it would
 * see alone, so its bits do not depend on the rows around it; one row is a run of one.
 *
 * <p>A row whose float32 sum of squares leaves the safe range is recomputed entirely in float64 by
 * {@link DoublePrecisionFallback}: above 2^100 (the squares overflowed or nearly so), or below
 * 2^-100 when eps is too small to dominate it (the squares underflowed). Rows of 1e30 or 1e-30 with
 * eps = 0 thus match the float64 reference, while ordinary rows, zero rows with the default eps and
 * NaN rows stay on the float32 path. So does a row whose float32 scale factor would not be a normal
 * number (only with an eps beyond any practical value).
 *
 * <p>Callers have checked bounds and widths; {@code width} and {@code rows} are at least 1; input
 * and output are either the same array at the same offset or do not overlap; weight and bias may be
 * null.
 */
final class FloatRowKernels {
  /** Rows whose passes run side by side; the size of the per-row scalar arrays in scratch. */
  static final int GROUP_ROWS = 64;

  static final float LARGEST_SAFE_SUM = 0x1p100f;
  private static final float SMALLEST_SAFE_SUM = 0x1p-100f;

  /** Below this, eps no longer dominates a mean square smaller than 2^-100. */
  static final double SMALLEST_DOMINATING_VARIANCE_EPSILON = 0x1p-60;

  /** Below this, eps no longer dominates a norm smaller than 2^-50. */
  static final double SMALLEST_DOMINATING_NORM_EPSILON = 0x1p-40;

  /**
   * Marks a row that {@link DoublePrecisionFallback} has already written, and that the element-wise
   * passes skip: no row on the float32 path has a zero scale (see {@link #notNormal}).
   */
  private static final float DONE = 0f;

  private FloatRowKernels() {}

  /** y = (x · (1 / sqrt(Σx² / D + eps))) · w. */
  static void rmsNorm(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows,
      double epsilon,
      float[] weight) {
    RowScratch scratch = RowScratch.current();
    float[] sums = scratch.rowScalars(0);
    float[] scales = scratch.rowScalars(1);
    for (int group = 0; group < rows; group += GROUP_ROWS) {
      int count = Math.min(GROUP_ROWS, rows - group);
      int groupInput = inputOffset + group * width;
      int groupOutput = outputOffset + group * width;
      passes.sumsOfSquares(input, groupInput, width, count, sums);
      System.arraycopy(sums, 0, scales, 0, count);
      passes.inverseSquareRoots(scales, count, width, epsilon);
      float smallest = smallestSafeSum(epsilon, SMALLEST_DOMINATING_VARIANCE_EPSILON);
      boolean unsafe = passes.anyUnsafe(sums, scales, count, smallest, LARGEST_SAFE_SUM);
      for (int row = 0; unsafe && row < count; row++) {
        if (needsFallback(sums[row], scales[row], epsilon, SMALLEST_DOMINATING_VARIANCE_EPSILON)) {
          DoublePrecisionFallback.rmsNorm(
              passes,
              input,
              groupInput + row * width,
              output,
              groupOutput + row * width,
              width,
              epsilon,
              weight);
          scales[row] = DONE;
        }
      }
      passes.scaleRows(input, groupInput, output, groupOutput, width, count, scales, weight);
    }
  }

  /**
   * y = (x − μ) · rstd · γ + β, the statistics from d = x − s with s near the mean ({@link
   * LayerNormStatistics}; never E[x²] − E[x]² on x): shifting by values of the row keeps float32
   * rows with mean 1e6 and spread 0.5 exact in d, where PyTorch's float32 kernel loses about
   * ε·|mean|/σ.
   */
  static void layerNorm(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows,
      double epsilon,
      float[] gamma,
      float[] beta) {
    RowScratch scratch = RowScratch.current();
    float[] shifts = scratch.rowScalars(0);
    float[] means = scratch.rowScalars(1);
    float[] centersHigh = scratch.rowScalars(2);
    float[] centersLow = scratch.rowScalars(3);
    float[] sumsOfSquares = scratch.rowScalars(4);
    float[] inverseDeviations = scratch.rowScalars(5);
    float smallest = smallestSafeSum(epsilon, SMALLEST_DOMINATING_VARIANCE_EPSILON);
    for (int group = 0; group < rows; ) {
      group +=
          passes.layerNormInEights(
              input,
              inputOffset + group * width,
              output,
              outputOffset + group * width,
              width,
              rows - group,
              epsilon,
              smallest,
              LARGEST_SAFE_SUM,
              gamma,
              beta);
      if (group == rows) {
        return;
      }
      int count = Math.min(GROUP_ROWS, rows - group);
      int groupInput = inputOffset + group * width;
      int groupOutput = outputOffset + group * width;
      group += count;
      LayerNormStatistics.compute(
          passes,
          input,
          groupInput,
          width,
          count,
          shifts,
          means,
          centersHigh,
          centersLow,
          sumsOfSquares);
      System.arraycopy(sumsOfSquares, 0, inverseDeviations, 0, count);
      passes.inverseSquareRoots(inverseDeviations, count, width, epsilon);
      boolean unsafe =
          passes.anyUnsafe(sumsOfSquares, inverseDeviations, count, smallest, LARGEST_SAFE_SUM);
      for (int row = 0; unsafe && row < count; row++) {
        if (needsFallback(
            sumsOfSquares[row],
            inverseDeviations[row],
            epsilon,
            SMALLEST_DOMINATING_VARIANCE_EPSILON)) {
          DoublePrecisionFallback.layerNorm(
              passes,
              input,
              groupInput + row * width,
              output,
              groupOutput + row * width,
              width,
              epsilon,
              gamma,
              beta);
          inverseDeviations[row] = DONE;
        }
      }
      passes.standardizeRows(
          input,
          groupInput,
          output,
          groupOutput,
          width,
          count,
          centersHigh,
          centersLow,
          inverseDeviations,
          gamma,
          beta);
    }
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
      int width,
      int rows) {
    float[] scalars = RowScratch.current().rowScalars(0);
    for (int group = 0; group < rows; group += GROUP_ROWS) {
      int count = Math.min(GROUP_ROWS, rows - group);
      int groupInput = inputOffset + group * width;
      int groupOutput = outputOffset + group * width;
      passes.maxima(input, groupInput, width, count, scalars);
      passes.storeExponentials(
          input, groupInput, output, groupOutput, width, count, scalars, scalars);
      passes.inverses(scalars, count);
      passes.scaleRows(output, groupOutput, output, groupOutput, width, count, scalars, null);
    }
  }

  /**
   * y = (x − max) − log Σ exp(x − max), the logarithm by {@link FloatLogarithm} (Σ lies in [1, D]).
   * The sum is taken without storing the exponentials, so that the input may be the output.
   */
  static void logSoftmax(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows) {
    RowScratch scratch = RowScratch.current();
    float[] maxima = scratch.rowScalars(0);
    float[] logSums = scratch.rowScalars(1);
    for (int group = 0; group < rows; group += GROUP_ROWS) {
      int count = Math.min(GROUP_ROWS, rows - group);
      int groupInput = inputOffset + group * width;
      int groupOutput = outputOffset + group * width;
      passes.maxima(input, groupInput, width, count, maxima);
      passes.sumsOfExponentials(input, groupInput, width, count, maxima, logSums);
      passes.logarithms(logSums, count);
      passes.subtractRows(input, groupInput, output, groupOutput, width, count, maxima, logSums);
    }
  }

  /** y = x · (1 / max(sqrt(Σx²), eps)). */
  static void l2Normalize(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows,
      double epsilon) {
    RowScratch scratch = RowScratch.current();
    float[] sums = scratch.rowScalars(0);
    float[] scales = scratch.rowScalars(1);
    for (int group = 0; group < rows; group += GROUP_ROWS) {
      int count = Math.min(GROUP_ROWS, rows - group);
      int groupInput = inputOffset + group * width;
      int groupOutput = outputOffset + group * width;
      passes.sumsOfSquares(input, groupInput, width, count, sums);
      System.arraycopy(sums, 0, scales, 0, count);
      passes.inverseNorms(scales, count, epsilon);
      float smallest = smallestSafeSum(epsilon, SMALLEST_DOMINATING_NORM_EPSILON);
      boolean unsafe = passes.anyUnsafe(sums, scales, count, smallest, LARGEST_SAFE_SUM);
      for (int row = 0; unsafe && row < count; row++) {
        if (needsFallback(sums[row], scales[row], epsilon, SMALLEST_DOMINATING_NORM_EPSILON)) {
          DoublePrecisionFallback.l2Normalize(
              passes,
              input,
              groupInput + row * width,
              output,
              groupOutput + row * width,
              width,
              epsilon);
          scales[row] = DONE;
        }
      }
      passes.scaleRows(input, groupInput, output, groupOutput, width, count, scales, null);
    }
  }

  /**
   * y = x · (1 / max(‖x‖, eps)) for the l1 norm (Σ|x|, {@code magnitudeSum}) or the l_inf norm (max
   * |x|): l2_normalize's steps with its norm replaced. A norm outside [2^-100, 2^100] (where eps
   * does not dominate it) goes to the float64 fallback, as l2's sums of squares do, so that the
   * float32 scale factor is always a normal number.
   */
  static void normalizeByMagnitudes(
      RowPasses passes,
      boolean magnitudeSum,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows,
      double epsilon) {
    RowScratch scratch = RowScratch.current();
    float[] norms = scratch.rowScalars(0);
    float[] scales = scratch.rowScalars(1);
    float smallest = smallestSafeSum(epsilon, SMALLEST_DOMINATING_NORM_EPSILON);
    for (int group = 0; group < rows; group += GROUP_ROWS) {
      int count = Math.min(GROUP_ROWS, rows - group);
      int groupInput = inputOffset + group * width;
      int groupOutput = outputOffset + group * width;
      if (magnitudeSum) {
        passes.sumsOfMagnitudes(input, groupInput, width, count, norms);
      } else {
        passes.maximaOfMagnitudes(input, groupInput, width, count, norms);
      }
      for (int row = 0; row < count; row++) {
        scales[row] = (float) (1.0 / Math.max(norms[row], epsilon));
      }
      boolean unsafe = passes.anyUnsafe(norms, scales, count, smallest, LARGEST_SAFE_SUM);
      for (int row = 0; unsafe && row < count; row++) {
        if (needsFallback(norms[row], scales[row], epsilon, SMALLEST_DOMINATING_NORM_EPSILON)) {
          DoublePrecisionFallback.normalizeByMagnitudes(
              passes,
              magnitudeSum,
              input,
              groupInput + row * width,
              output,
              groupOutput + row * width,
              width,
              epsilon);
          scales[row] = DONE;
        }
      }
      passes.scaleRows(input, groupInput, output, groupOutput, width, count, scales, null);
    }
  }

  /** The sums below this may need the fallback: 2^-100 unless eps dominates them. */
  static float smallestSafeSum(double epsilon, double smallestDominatingEpsilon) {
    return epsilon < smallestDominatingEpsilon ? SMALLEST_SAFE_SUM : Float.NEGATIVE_INFINITY;
  }

  /**
   * Whether a row with this float32 sum of squares and scale factor is recomputed in float64: its
   * sum outside the safe range, or its scale not a normal float.
   */
  static boolean needsFallback(
      float sumOfSquares, float scale, double epsilon, double smallestDominatingEpsilon) {
    return outsideSafeRange(sumOfSquares, epsilon, smallestDominatingEpsilon) || notNormal(scale);
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

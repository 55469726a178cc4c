package io.embednorm.engine.cpu;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.RowEncoder;
import java.nio.ByteBuffer;

/**
 * The loops over a row that the op kernels ({@link FloatRowKernels}, {@link DoubleRowKernels}) are
 * made of: reductions and element-wise passes. Two implementations exist, {@link ScalarRowPasses}
 * and the Vector API one ({@code VectorRowPasses}, chosen at run time by {@link RowPassSelection}).
 * Both perform the same IEEE operations in the same order (the reductions use the lanes, blocks and
 * split points of {@link FloatSums}), so they give the same bits for every row: which one runs is
 * invisible in the output.
 *
 * <p>Callers have checked bounds; {@code count} and {@code width} are at least 1; weight, gamma and
 * beta may be null; input and output are the same array at the same offset or do not overlap.
 */
interface RowPasses {

  /** What runs, for the engine's description, e.g. {@code java simd, 256-bit}. */
  String description();

  /**
   * Normalizes the float32 row of {@code width} elements at element {@code start} of {@code input}
   * into the same elements of {@code output}, straight between the buffers (little-endian, the same
   * memory or disjoint; weight and bias lengths checked) with the bits of {@link FloatRowKernels};
   * false, having written nothing, where these passes have no such path for the op or the row needs
   * the float64 fallback. The engine uses it for rows wider than its chunk (see {@code
   * BufferRowKernels} for why); these default passes have none.
   */
  default boolean normalizeBetweenBuffers(
      Normalization normalization, ByteBuffer input, ByteBuffer output, int start, int width) {
    return false;
  }

  // ---- float32: each method runs over a group of count rows of one width, back to back from
  // offset; the results of the reductions and the per-row factors are indexed by row in the group.
  // Every row gets exactly the bits it gets in a group of one.

  /**
   * {@code maxima[row]} = the maximum of the row. For a row that holds a NaN, and between +0 and
   * −0, implementations may differ (today both return NaN and +0, as {@link FloatSums#maximum}
   * does): the softmaxes' outputs do not depend on it.
   */
  void maxima(float[] values, int offset, int width, int count, float[] maxima);

  /** {@code sums[row]} = Σ x² ({@link FloatSums#sumOfSquares}). */
  void sumsOfSquares(float[] values, int offset, int width, int count, float[] sums);

  /** {@code sums[row]} = Σ |x| ({@link FloatSums#sumOfMagnitudes}). */
  void sumsOfMagnitudes(float[] values, int offset, int width, int count, float[] sums);

  /**
   * {@code maxima[row]} = max |x| ({@link FloatSums#maximumMagnitude}; NaN if the row holds one).
   */
  void maximaOfMagnitudes(float[] values, int offset, int width, int count, float[] maxima);

  /** {@code shifts[row]} = {@link FloatSums#layerNormShift} of the row. */
  void layerNormShifts(float[] values, int offset, int width, int count, float[] shifts);

  /**
   * {@code sums[row]} = Σ (x − shifts[row]) and {@code squares[row]} = Σ (x − shifts[row])², each
   * in FloatSums' order ({@link FloatSums#differencesAndSquares} block by block, {@link SumTree}):
   * LayerNorm's one pass ({@link LayerNormStatistics}).
   */
  void sumsAndSquaresOfDifferences(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sums,
      float[] squares);

  /**
   * Σ ((x − shift) − center)² of one row in {@link FloatSums#sumOfSquaredDeviations}' order:
   * LayerNorm's second pass, for rows whose shift is far from their mean.
   */
  float sumOfSquaredDeviations(float[] values, int offset, int width, float shift, float center);

  /**
   * {@code sums[row]} = Σ exp(x − maxima[row]) with {@link FloatExponential}, summed as {@link
   * FloatSums#sumOfDifferences} with shift 0 sums the exponentials; sums may be the maxima array.
   */
  void sumsOfExponentials(
      float[] values, int offset, int width, int count, float[] maxima, float[] sums);

  /**
   * Stores e = exp(x − maxima[row]) into the output and {@code sums[row]} = Σ e, summed as {@link
   * FloatSums#sumOfDifferences} with shift 0 sums the stored values; sums may be the maxima array,
   * the output the input at the same offset.
   */
  void storeExponentials(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima,
      float[] sums);

  /**
   * y = (x · scales[row]) · w, skipping the rows whose scale is 0 (written already by the float64
   * fallback: no row on the float32 path has a zero factor).
   */
  void scaleRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] scales,
      float[] weight);

  /**
   * LayerNorm of the group's leading rows, eight at a time, in one pass per eight rows where the
   * implementation has one for this width (γ and β as in {@link #standardizeRows}): the rows it
   * wrote, a multiple of eight, stopping before eight rows of which any would take another path (a
   * second pass for its variance, the float64 fallback: sums of squares outside [{@code smallest},
   * {@code largest}], an inverse deviation that is not a normal float). Each row it writes gets the
   * bits of {@link LayerNormStatistics}, {@link #inverseSquareRoots} and {@link #standardizeRows};
   * 0 where it has no such pass.
   */
  int layerNormInEights(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      double epsilon,
      float smallest,
      float largest,
      float[] gamma,
      float[] beta);

  /**
   * y = (((x − high[row]) − low[row]) · inverseDeviations[row]) · γ + β, where high + low is the
   * row mean as an unevaluated float32 pair: x − high is exact for x near the mean, so outputs near
   * zero keep the precision they would have in float64. Rows whose inverse deviation is 0 are
   * skipped, as in {@link #scaleRows}.
   */
  void standardizeRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations,
      float[] gamma,
      float[] beta);

  /** y = (x − maxima[row]) − logSums[row]. */
  void subtractRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima,
      float[] logSums);

  // ---- float32 per-row scalars of a group, in float64, rounded to float32 once; count is at
  // most FloatRowKernels.GROUP_ROWS ----

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

  /**
   * The LayerNorm centers of rows from their sums of differences from {@code shifts[i]}: with m =
   * sums[i] / divisor in float64, {@code means[i] = (float) m} (the center of the second pass) and
   * the row mean shifts[i] + m as an unevaluated float32 pair, {@code high[i] = (float) (shifts[i]
   * + m)} and {@code low[i] = (float) ((shifts[i] + m) − high[i])}, for i below {@code count}. High
   * may be the sums array.
   */
  void centers(
      float[] shifts,
      float[] sums,
      int count,
      double divisor,
      float[] means,
      float[] high,
      float[] low);

  /**
   * A screen for the float64 fallback: whether any of the first {@code count} rows may have a sum
   * (of squares: +0 or more, or NaN) above {@code largest} or below {@code smallest}, or a scale
   * (positive or NaN) below {@link Float#MIN_NORMAL} or infinite. It may say yes for NaN; the
   * kernels check the rows one by one, exactly, only when it says yes. Both arrays hold {@link
   * FloatRowKernels#GROUP_ROWS} values (a multiple of eight).
   */
  default boolean anyUnsafe(
      float[] sums, float[] scales, int count, float smallest, float largest) {
    boolean unsafe = false;
    for (int i = 0; i < count; i++) {
      float scale = scales[i];
      unsafe |=
          sums[i] > largest
              | sums[i] < smallest
              | scale < Float.MIN_NORMAL
              | scale == Float.POSITIVE_INFINITY;
    }
    return unsafe;
  }

  /** {@code values[i] = FloatLogarithm.log(values[i])} (log-softmax: Σ exp(x − max) ≥ 1). */
  void logarithms(float[] values, int count);

  // ---- binary16 (Arrow's Float2Vector) to and from float32, for a chunk of float16 rows ----

  /** {@code floats[i] = Float16.toFloat(halves[i])} for i below count: the same bits. */
  void halvesToFloats(short[] halves, float[] floats, int count);

  /** {@code halves[i] = Float16.fromFloat(floats[i])} for i below count: the same bits. */
  void floatsToHalves(float[] floats, short[] halves, int count);

  // ---- encodings of a float32 row (normalizeEncoded) ----

  /**
   * Writes the {@link Encoding} of {@code values[offset, offset + width)} into {@code target} from
   * {@code targetOffset}, with the bytes of {@link RowEncoder}; returns the int8 scale, else 1.
   */
  float encodeRow(
      Encoding encoding, float[] values, int offset, int width, byte[] target, int targetOffset);

  // ---- float64: one row at a time ----

  /** The maximum of the row; NaN as soon as any element is NaN. */
  double maximum(double[] values, int offset, int count);

  /** Σ x² ({@link DoubleSums#sumOfSquares}). */
  double sumOfSquares(double[] values, int offset, int count);

  /** Σ (x − shift). */
  double sumOfDifferences(double[] values, int offset, int count, double shift);

  /** Σ ((x − shift) − center)². */
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

  /** y = (((x − shift) − mean) · inverseDeviation) · γ + β. */
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

package io.embednorm.engine.cpu;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.Float16;
import io.embednorm.engine.RowEncoder;

/**
 * The plain Java passes: the reductions of {@link FloatSums} and {@link DoubleSums} (eight
 * independent accumulators, which the JIT keeps in registers) and simple element-wise loops. Runs
 * on every JVM; the fallback when the Vector API is missing.
 */
final class ScalarRowPasses implements RowPasses {
  static final ScalarRowPasses INSTANCE = new ScalarRowPasses();

  private ScalarRowPasses() {}

  @Override
  public String description() {
    return "java scalar";
  }

  @Override
  public void maxima(float[] values, int offset, int width, int count, float[] maxima) {
    for (int row = 0; row < count; row++) {
      maxima[row] = FloatSums.maximum(values, offset + row * width, width);
    }
  }

  @Override
  public void sumsOfSquares(float[] values, int offset, int width, int count, float[] sums) {
    for (int row = 0; row < count; row++) {
      sums[row] = FloatSums.sumOfSquares(values, offset + row * width, width);
    }
  }

  @Override
  public void sumsOfMagnitudes(float[] values, int offset, int width, int count, float[] sums) {
    for (int row = 0; row < count; row++) {
      sums[row] = FloatSums.sumOfMagnitudes(values, offset + row * width, width);
    }
  }

  @Override
  public void maximaOfMagnitudes(float[] values, int offset, int width, int count, float[] maxima) {
    for (int row = 0; row < count; row++) {
      maxima[row] = FloatSums.maximumMagnitude(values, offset + row * width, width);
    }
  }

  /** None: the scalar passes' per-row work is the same either way. */
  @Override
  public int layerNormInEights(
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
      float[] beta) {
    return 0;
  }

  @Override
  public void layerNormShifts(float[] values, int offset, int width, int count, float[] shifts) {
    for (int row = 0; row < count; row++) {
      shifts[row] = FloatSums.layerNormShift(values, offset + row * width, width);
    }
  }

  @Override
  public float sumOfSquaredDeviations(
      float[] values, int offset, int width, float shift, float center) {
    return FloatSums.sumOfSquaredDeviations(values, offset, width, shift, center);
  }

  @Override
  public void sumsAndSquaresOfDifferences(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sums,
      float[] squares) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] sumLanes = scratch.lanes(count * blocks * 8);
    float[] squareLanes = scratch.squareLanes(count * blocks * 8);
    int at = 0;
    for (int row = 0, start = offset; row < count; row++, start += width) {
      for (int block = 0, from = 0; block < blocks; block++, at += 8) {
        FloatSums.differencesAndSquares(
            values, start + from, ends[block] - from, shifts[row], sumLanes, squareLanes, at);
        from = ends[block];
      }
    }
    tree.sums(sumLanes, count, sums);
    tree.sums(squareLanes, count, squares);
  }

  @Override
  public void sumsOfExponentials(
      float[] values, int offset, int width, int count, float[] maxima, float[] sums) {
    FloatExponential.exponentialsAndSums(
        values, offset, null, 0, width, count, maxima, sums, RowScratch.current());
  }

  @Override
  public void storeExponentials(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima,
      float[] sums) {
    FloatExponential.exponentialsAndSums(
        input, inputOffset, output, outputOffset, width, count, maxima, sums, RowScratch.current());
  }

  @Override
  public void scaleRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] scales,
      float[] weight) {
    for (int row = 0; row < count; row++) {
      if (scales[row] != 0f) {
        scale(
            input,
            inputOffset + row * width,
            output,
            outputOffset + row * width,
            width,
            scales[row],
            weight);
      }
    }
  }

  private static void scale(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float scale,
      float[] weight) {
    if (weight == null && input == output && inputOffset == outputOffset) {
      scaleInPlace(output, outputOffset, count, scale);
    } else if (weight == null) {
      for (int i = 0; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale;
      }
    } else {
      for (int i = 0; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale * weight[i];
      }
    }
  }

  /**
   * y = x · scale on one array, the engine's case (it normalizes in place). Inlined into the row
   * kernels, the two-array loop measured about half as fast as before the kernels took runs of rows
   * (C2 vectorizes a loop over one array and one offset more readily); standardize and subtract
   * take the same one-array path. The same operations either way, so the same bits.
   */
  private static void scaleInPlace(float[] values, int offset, int count, float scale) {
    for (int i = offset, end = offset + count; i < end; i++) {
      values[i] = values[i] * scale;
    }
  }

  @Override
  public void standardizeRows(
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
      float[] beta) {
    for (int row = 0; row < count; row++) {
      if (inverseDeviations[row] != 0f) {
        standardize(
            input,
            inputOffset + row * width,
            output,
            outputOffset + row * width,
            width,
            high[row],
            low[row],
            inverseDeviations[row],
            gamma,
            beta);
      }
    }
  }

  private static void standardize(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float centerHigh,
      float centerLow,
      float inverseDeviation,
      float[] gamma,
      float[] beta) {
    if (gamma == null && beta == null && input == output && inputOffset == outputOffset) {
      for (int i = outputOffset, end = outputOffset + count; i < end; i++) {
        output[i] = (output[i] - centerHigh - centerLow) * inverseDeviation;
      }
      return;
    }
    for (int i = 0; i < count; i++) {
      float value = (input[inputOffset + i] - centerHigh - centerLow) * inverseDeviation;
      if (gamma != null) {
        value *= gamma[i];
      }
      if (beta != null) {
        value += beta[i];
      }
      output[outputOffset + i] = value;
    }
  }

  @Override
  public void subtractRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima,
      float[] logSums) {
    for (int row = 0; row < count; row++) {
      subtract(
          input,
          inputOffset + row * width,
          output,
          outputOffset + row * width,
          width,
          maxima[row],
          logSums[row]);
    }
  }

  private static void subtract(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float maximum,
      float logSum) {
    if (input == output && inputOffset == outputOffset) {
      for (int i = outputOffset, end = outputOffset + count; i < end; i++) {
        output[i] = output[i] - maximum - logSum;
      }
      return;
    }
    for (int i = 0; i < count; i++) {
      output[outputOffset + i] = input[inputOffset + i] - maximum - logSum;
    }
  }

  @Override
  public void inverseSquareRoots(float[] values, int count, double divisor, double epsilon) {
    inverseSquareRoots(values, 0, count, divisor, epsilon);
  }

  @Override
  public void inverseNorms(float[] values, int count, double epsilon) {
    inverseNorms(values, 0, count, epsilon);
  }

  @Override
  public void inverses(float[] values, int count) {
    inverses(values, 0, count);
  }

  @Override
  public void centers(
      float[] shifts,
      float[] sums,
      int count,
      double divisor,
      float[] means,
      float[] high,
      float[] low) {
    centers(shifts, sums, 0, count, divisor, means, high, low);
  }

  @Override
  public void logarithms(float[] values, int count) {
    logarithms(values, 0, count);
  }

  @Override
  public void halvesToFloats(short[] halves, float[] floats, int count) {
    Float16.toFloats(halves, 0, floats, 0, count);
  }

  @Override
  public void floatsToHalves(float[] floats, short[] halves, int count) {
    Float16.fromFloats(floats, 0, halves, 0, count);
  }

  @Override
  public float encodeRow(
      Encoding encoding, float[] values, int offset, int width, byte[] target, int targetOffset) {
    return RowEncoder.encode(encoding, values, offset, width, target, targetOffset);
  }

  /** {@link #inverseSquareRoots(float[], int, double, double)} on [first, end): the SIMD tail. */
  static void inverseSquareRoots(
      float[] values, int first, int end, double divisor, double epsilon) {
    for (int i = first; i < end; i++) {
      values[i] = (float) (1.0 / Math.sqrt(values[i] / divisor + epsilon));
    }
  }

  /** {@link #inverseNorms(float[], int, double)} on [first, end). */
  static void inverseNorms(float[] values, int first, int end, double epsilon) {
    for (int i = first; i < end; i++) {
      values[i] = (float) (1.0 / Math.max(Math.sqrt(values[i]), epsilon));
    }
  }

  /** {@link #inverses(float[], int)} on [first, end). */
  static void inverses(float[] values, int first, int end) {
    for (int i = first; i < end; i++) {
      values[i] = (float) (1.0 / values[i]);
    }
  }

  /** {@link #centers(float[], float[], int, double, float[], float[], float[])} on [first, end). */
  static void centers(
      float[] shifts,
      float[] sums,
      int first,
      int end,
      double divisor,
      float[] means,
      float[] high,
      float[] low) {
    for (int i = first; i < end; i++) {
      double mean = sums[i] / divisor;
      double center = shifts[i] + mean;
      means[i] = (float) mean;
      float centerHigh = (float) center;
      high[i] = centerHigh;
      low[i] = (float) (center - centerHigh);
    }
  }

  /** {@link #logarithms(float[], int)} on [first, end). */
  static void logarithms(float[] values, int first, int end) {
    for (int i = first; i < end; i++) {
      values[i] = FloatLogarithm.log(values[i]);
    }
  }

  @Override
  public double maximum(double[] values, int offset, int count) {
    return DoubleSums.maximum(values, offset, count);
  }

  @Override
  public double sumOfSquares(double[] values, int offset, int count) {
    return DoubleSums.sumOfSquares(values, offset, count);
  }

  @Override
  public double sumOfDifferences(double[] values, int offset, int count, double shift) {
    return DoubleSums.sumOfDifferences(values, offset, count, shift);
  }

  @Override
  public double sumOfSquaredDeviations(
      double[] values, int offset, int count, double shift, double center) {
    return DoubleSums.sumOfSquaredDeviations(values, offset, count, shift, center);
  }

  @Override
  public void scale(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double scale,
      double[] weight) {
    if (weight == null) {
      for (int i = 0; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale;
      }
    } else {
      for (int i = 0; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale * weight[i];
      }
    }
  }

  @Override
  public void standardize(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double shift,
      double mean,
      double inverseDeviation,
      double[] gamma,
      double[] beta) {
    for (int i = 0; i < count; i++) {
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

  @Override
  public void subtract(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double maximum,
      double logSum) {
    for (int i = 0; i < count; i++) {
      output[outputOffset + i] = input[inputOffset + i] - maximum - logSum;
    }
  }
}

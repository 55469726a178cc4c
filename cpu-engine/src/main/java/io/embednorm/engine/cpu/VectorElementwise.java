package io.embednorm.engine.cpu;

import static io.embednorm.engine.cpu.VectorShapes.DOUBLES;
import static io.embednorm.engine.cpu.VectorShapes.DOUBLE_LANES;
import static io.embednorm.engine.cpu.VectorShapes.FLOATS;
import static io.embednorm.engine.cpu.VectorShapes.FLOAT_CLASS;
import static io.embednorm.engine.cpu.VectorShapes.FLOAT_LANES;
import static io.embednorm.engine.cpu.VectorShapes.STEP;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;

/**
 * The element-wise passes of {@link VectorRowPasses}: y = (x · scale) · w (RMSNorm, L2, softmax), y
 * = (((x − high) − low) · r) · γ + β (LayerNorm) and y = (x − max) − log Σ (log_softmax), over a
 * group of float32 rows or one float64 row; rows whose factor is 0 (written by the float64
 * fallback) are skipped. Each form (flat rows, rows of 32, with or without γ and β) is a loop of
 * its own. Keeps {@link VectorRowPasses}' rules for the Vector API.
 */
final class VectorElementwise {
  private VectorElementwise() {}

  // ---- float32 element-wise passes over a group of rows ----

  static void scaleRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] scales,
      float[] weight) {
    if (weight == null && VectorShapes.isFlat(width) && noneSkipped(scales, count)) {
      int perRow = width / STEP;
      int left = perRow;
      int row = 0;
      int shift = outputOffset - inputOffset;
      for (int index = inputOffset, end = inputOffset + count * width; index < end; index += STEP) {
        FloatVector scale = FloatVector.broadcast(FLOATS, scales[row]);
        FloatVector a = FloatVector.fromArray(FLOATS, input, index).mul(scale);
        FloatVector b = FloatVector.fromArray(FLOATS, input, index + 8).mul(scale);
        FloatVector c = FloatVector.fromArray(FLOATS, input, index + 16).mul(scale);
        FloatVector d = FloatVector.fromArray(FLOATS, input, index + 24).mul(scale);
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(output, index + shift);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(output, index + shift + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(output, index + shift + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(output, index + shift + 24);
        if (--left == 0) {
          left = perRow;
          row++;
        }
      }
      return;
    }
    int full = width & ~(FLOAT_LANES - 1);
    for (int row = 0; row < count; row++) {
      float scale = scales[row];
      if (scale == 0f) {
        continue;
      }
      int in = inputOffset + row * width;
      int out = outputOffset + row * width;
      int i = 0;
      if (weight == null) {
        for (; i < full; i += FLOAT_LANES) {
          ((FloatVector)
                  FLOAT_CLASS.cast(
                      FloatVector.fromArray(FLOATS, input, in + i)
                          .mul(FloatVector.broadcast(FLOATS, scale))))
              .intoArray(output, out + i);
        }
        for (; i < width; i++) {
          output[out + i] = input[in + i] * scale;
        }
      } else {
        for (; i < full; i += FLOAT_LANES) {
          ((FloatVector)
                  FLOAT_CLASS.cast(
                      FloatVector.fromArray(FLOATS, input, in + i)
                          .mul(FloatVector.broadcast(FLOATS, scale))
                          .mul(FloatVector.fromArray(FLOATS, weight, i))))
              .intoArray(output, out + i);
        }
        for (; i < width; i++) {
          output[out + i] = input[in + i] * scale * weight[i];
        }
      }
    }
  }

  static void standardizeRows(
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
    if (gamma == null
        && beta == null
        && VectorShapes.isFlat(width)
        && noneSkipped(inverseDeviations, count)) {
      if (width == STEP) {
        standardizeSteps(
            input, inputOffset, output, outputOffset, count, high, low, inverseDeviations);
        return;
      }
      int perRow = width / STEP;
      int left = perRow;
      int row = 0;
      int shift = outputOffset - inputOffset;
      for (int index = inputOffset, end = inputOffset + count * width; index < end; index += STEP) {
        FloatVector centerHigh = FloatVector.broadcast(FLOATS, high[row]);
        FloatVector centerLow = FloatVector.broadcast(FLOATS, low[row]);
        FloatVector inverseDeviation = FloatVector.broadcast(FLOATS, inverseDeviations[row]);
        FloatVector a =
            FloatVector.fromArray(FLOATS, input, index)
                .sub(centerHigh)
                .sub(centerLow)
                .mul(inverseDeviation);
        FloatVector b =
            FloatVector.fromArray(FLOATS, input, index + 8)
                .sub(centerHigh)
                .sub(centerLow)
                .mul(inverseDeviation);
        FloatVector c =
            FloatVector.fromArray(FLOATS, input, index + 16)
                .sub(centerHigh)
                .sub(centerLow)
                .mul(inverseDeviation);
        FloatVector d =
            FloatVector.fromArray(FLOATS, input, index + 24)
                .sub(centerHigh)
                .sub(centerLow)
                .mul(inverseDeviation);
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(output, index + shift);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(output, index + shift + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(output, index + shift + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(output, index + shift + 24);
        if (--left == 0) {
          left = perRow;
          row++;
        }
      }
      return;
    }
    if (gamma == null && beta == null) {
      standardizeEachRow(
          input, inputOffset, output, outputOffset, width, count, high, low, inverseDeviations);
      return;
    }
    RowScratch scratch = RowScratch.current();
    standardizeEachRowAffine(
        input,
        inputOffset,
        output,
        outputOffset,
        width,
        count,
        high,
        low,
        inverseDeviations,
        gamma == null ? scratch.ones(width) : gamma,
        beta == null ? scratch.negativeZeros(width) : beta);
  }

  /**
   * {@link #standardizeRows} row by row without γ and β, skipping rows whose inverse deviation is 0
   * (done by the float64 fallback). A loop of its own: with γ and β as branches in one loop the
   * value was a vector reassigned in a branch, which C2 kept in an object in some JVMs (a whole
   * module's tests first: 3.6-24.6 KB a call from width 16 up, SimdAllocationTest). Not {@link
   * #standardizeEachRowAffine} with ones and −0s: that is two operations an element more for
   * LayerNorm's default, which has neither.
   */
  private static void standardizeEachRow(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations) {
    int full = width & ~(FLOAT_LANES - 1);
    for (int row = 0; row < count; row++) {
      float inverseDeviation = inverseDeviations[row];
      if (inverseDeviation == 0f) {
        continue;
      }
      float centerHigh = high[row];
      float centerLow = low[row];
      int in = inputOffset + row * width;
      int out = outputOffset + row * width;
      int i = 0;
      for (; i < full; i += FLOAT_LANES) {
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.fromArray(FLOATS, input, in + i)
                        .sub(FloatVector.broadcast(FLOATS, centerHigh))
                        .sub(FloatVector.broadcast(FLOATS, centerLow))
                        .mul(FloatVector.broadcast(FLOATS, inverseDeviation))))
            .intoArray(output, out + i);
      }
      for (; i < width; i++) {
        output[out + i] = (input[in + i] - centerHigh - centerLow) * inverseDeviation;
      }
    }
  }

  /**
   * {@link #standardizeEachRow} with γ and β, a missing one as ones or −0s ({@link
   * RowScratch#ones}): the bits of skipping it.
   */
  private static void standardizeEachRowAffine(
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
    int full = width & ~(FLOAT_LANES - 1);
    for (int row = 0; row < count; row++) {
      float inverseDeviation = inverseDeviations[row];
      if (inverseDeviation == 0f) {
        continue;
      }
      float centerHigh = high[row];
      float centerLow = low[row];
      int in = inputOffset + row * width;
      int out = outputOffset + row * width;
      int i = 0;
      for (; i < full; i += FLOAT_LANES) {
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.fromArray(FLOATS, input, in + i)
                        .sub(FloatVector.broadcast(FLOATS, centerHigh))
                        .sub(FloatVector.broadcast(FLOATS, centerLow))
                        .mul(FloatVector.broadcast(FLOATS, inverseDeviation))
                        .mul(FloatVector.fromArray(FLOATS, gamma, i))
                        .add(FloatVector.fromArray(FLOATS, beta, i))))
            .intoArray(output, out + i);
      }
      for (; i < width; i++) {
        output[out + i] =
            (input[in + i] - centerHigh - centerLow) * inverseDeviation * gamma[i] + beta[i];
      }
    }
  }

  static void subtractRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima,
      float[] logSums) {
    if (VectorShapes.isFlat(width)) {
      int perRow = width / STEP;
      int left = perRow;
      int row = 0;
      int shift = outputOffset - inputOffset;
      for (int index = inputOffset, end = inputOffset + count * width; index < end; index += STEP) {
        FloatVector maximum = FloatVector.broadcast(FLOATS, maxima[row]);
        FloatVector logSum = FloatVector.broadcast(FLOATS, logSums[row]);
        FloatVector a = FloatVector.fromArray(FLOATS, input, index).sub(maximum).sub(logSum);
        FloatVector b = FloatVector.fromArray(FLOATS, input, index + 8).sub(maximum).sub(logSum);
        FloatVector c = FloatVector.fromArray(FLOATS, input, index + 16).sub(maximum).sub(logSum);
        FloatVector d = FloatVector.fromArray(FLOATS, input, index + 24).sub(maximum).sub(logSum);
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(output, index + shift);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(output, index + shift + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(output, index + shift + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(output, index + shift + 24);
        if (--left == 0) {
          left = perRow;
          row++;
        }
      }
      return;
    }
    int full = width & ~(FLOAT_LANES - 1);
    for (int row = 0; row < count; row++) {
      float maximum = maxima[row];
      float logSum = logSums[row];
      int in = inputOffset + row * width;
      int out = outputOffset + row * width;
      int i = 0;
      for (; i < full; i += FLOAT_LANES) {
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.fromArray(FLOATS, input, in + i)
                        .sub(FloatVector.broadcast(FLOATS, maximum))
                        .sub(FloatVector.broadcast(FLOATS, logSum))))
            .intoArray(output, out + i);
      }
      for (; i < width; i++) {
        output[out + i] = input[in + i] - maximum - logSum;
      }
    }
  }

  /**
   * {@link #standardizeSteps} with γ and β: (((x − high) − low) · inverse) · γ + β, γ and β in
   * registers. The four registers of a row are written out: as a loop over them (γ and β loaded in
   * it) LayerNorm's kernel with γ and β ran 10 % to twice as slow.
   */
  static void standardizeAffineSteps(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations,
      float[] gamma,
      float[] beta) {
    FloatVector gammaA = FloatVector.fromArray(FLOATS, gamma, 0);
    FloatVector gammaB = FloatVector.fromArray(FLOATS, gamma, 8);
    FloatVector gammaC = FloatVector.fromArray(FLOATS, gamma, 16);
    FloatVector gammaD = FloatVector.fromArray(FLOATS, gamma, 24);
    FloatVector betaA = FloatVector.fromArray(FLOATS, beta, 0);
    FloatVector betaB = FloatVector.fromArray(FLOATS, beta, 8);
    FloatVector betaC = FloatVector.fromArray(FLOATS, beta, 16);
    FloatVector betaD = FloatVector.fromArray(FLOATS, beta, 24);
    for (int row = 0; row < count; row++) {
      int in = inputOffset + row * STEP;
      int out = outputOffset + row * STEP;
      FloatVector centerHigh = FloatVector.broadcast(FLOATS, high[row]);
      FloatVector centerLow = FloatVector.broadcast(FLOATS, low[row]);
      FloatVector inverseDeviation = FloatVector.broadcast(FLOATS, inverseDeviations[row]);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, input, in)
                      .sub(centerHigh)
                      .sub(centerLow)
                      .mul(inverseDeviation)
                      .mul(gammaA)
                      .add(betaA)))
          .intoArray(output, out);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, input, in + 8)
                      .sub(centerHigh)
                      .sub(centerLow)
                      .mul(inverseDeviation)
                      .mul(gammaB)
                      .add(betaB)))
          .intoArray(output, out + 8);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, input, in + 16)
                      .sub(centerHigh)
                      .sub(centerLow)
                      .mul(inverseDeviation)
                      .mul(gammaC)
                      .add(betaC)))
          .intoArray(output, out + 16);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, input, in + 24)
                      .sub(centerHigh)
                      .sub(centerLow)
                      .mul(inverseDeviation)
                      .mul(gammaD)
                      .add(betaD)))
          .intoArray(output, out + 24);
    }
  }

  /**
   * {@link #standardizeRows} for rows of 32 without γ, β or skipped rows: the flat loop's
   * arithmetic in a loop per row, which needs no row counter; 5 % faster at 32 than the flat loop
   * (LayerNorm's kernel).
   */
  static void standardizeSteps(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations) {
    for (int row = 0; row < count; row++) {
      int in = inputOffset + row * STEP;
      int out = outputOffset + row * STEP;
      FloatVector centerHigh = FloatVector.broadcast(FLOATS, high[row]);
      FloatVector centerLow = FloatVector.broadcast(FLOATS, low[row]);
      FloatVector inverseDeviation = FloatVector.broadcast(FLOATS, inverseDeviations[row]);
      FloatVector a =
          FloatVector.fromArray(FLOATS, input, in)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      FloatVector b =
          FloatVector.fromArray(FLOATS, input, in + 8)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      FloatVector c =
          FloatVector.fromArray(FLOATS, input, in + 16)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      FloatVector d =
          FloatVector.fromArray(FLOATS, input, in + 24)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(output, out);
      ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(output, out + 8);
      ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(output, out + 16);
      ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(output, out + 24);
    }
  }

  /** No row's factor is 0 (a row the float64 fallback wrote, which the pass must skip). */
  private static boolean noneSkipped(float[] factors, int count) {
    for (int row = 0; row < count; row++) {
      if (factors[row] == 0f) {
        return false;
      }
    }
    return true;
  }

  // ---- float64 element-wise passes ----

  static void scale(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double scale,
      double[] weight) {
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    if (weight == null) {
      for (; i < full; i += DOUBLE_LANES) {
        DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
            .mul(scale)
            .intoArray(output, outputOffset + i);
      }
      for (; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale;
      }
    } else {
      for (; i < full; i += DOUBLE_LANES) {
        DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
            .mul(scale)
            .mul(DoubleVector.fromArray(DOUBLES, weight, i))
            .intoArray(output, outputOffset + i);
      }
      for (; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale * weight[i];
      }
    }
  }

  static void standardize(
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
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    for (; i < full; i += DOUBLE_LANES) {
      DoubleVector value =
          DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
              .sub(shift)
              .sub(mean)
              .mul(inverseDeviation);
      if (gamma != null) {
        value = value.mul(DoubleVector.fromArray(DOUBLES, gamma, i));
      }
      if (beta != null) {
        value = value.add(DoubleVector.fromArray(DOUBLES, beta, i));
      }
      value.intoArray(output, outputOffset + i);
    }
    for (; i < count; i++) {
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

  static void subtract(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double maximum,
      double logSum) {
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    for (; i < full; i += DOUBLE_LANES) {
      DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
          .sub(maximum)
          .sub(logSum)
          .intoArray(output, outputOffset + i);
    }
    for (; i < count; i++) {
      output[outputOffset + i] = input[inputOffset + i] - maximum - logSum;
    }
  }
}

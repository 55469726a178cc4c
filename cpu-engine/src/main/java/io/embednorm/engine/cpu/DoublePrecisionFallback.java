package io.embednorm.engine.cpu;

/**
 * Recomputes a float32 row in float64 when its float32 sums overflowed or underflowed: the row,
 * weight and bias are widened into per-thread scratch (exactly), {@link DoubleRowKernels} runs, and
 * each output is rounded to float32 once. Softmax needs no fallback: its terms lie in [0, 1] and
 * its sum in [1, D].
 */
final class DoublePrecisionFallback {
  private DoublePrecisionFallback() {}

  static void rmsNorm(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double epsilon,
      float[] weight) {
    RowScratch scratch = RowScratch.current();
    double[] values = widen(input, inputOffset, scratch.fallbackValues(width), width);
    double[] wideWeight =
        weight == null ? null : widen(weight, 0, scratch.fallbackWeight(width), width);
    DoubleRowKernels.rmsNorm(passes, values, 0, values, 0, width, epsilon, wideWeight);
    narrow(values, output, outputOffset, width);
  }

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
    RowScratch scratch = RowScratch.current();
    double[] values = widen(input, inputOffset, scratch.fallbackValues(width), width);
    double[] wideGamma =
        gamma == null ? null : widen(gamma, 0, scratch.fallbackWeight(width), width);
    double[] wideBeta = beta == null ? null : widen(beta, 0, scratch.fallbackBias(width), width);
    DoubleRowKernels.layerNorm(passes, values, 0, values, 0, width, epsilon, wideGamma, wideBeta);
    narrow(values, output, outputOffset, width);
  }

  static void l2Normalize(
      RowPasses passes,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double epsilon) {
    double[] values = widen(input, inputOffset, RowScratch.current().fallbackValues(width), width);
    DoubleRowKernels.l2Normalize(passes, values, 0, values, 0, width, epsilon);
    narrow(values, output, outputOffset, width);
  }

  static void normalizeByMagnitudes(
      RowPasses passes,
      boolean magnitudeSum,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      double epsilon) {
    double[] values = widen(input, inputOffset, RowScratch.current().fallbackValues(width), width);
    DoubleRowKernels.normalizeByMagnitudes(
        passes, magnitudeSum, values, 0, values, 0, width, epsilon);
    narrow(values, output, outputOffset, width);
  }

  private static double[] widen(float[] source, int sourceOffset, double[] target, int width) {
    for (int i = 0; i < width; i++) {
      target[i] = source[sourceOffset + i];
    }
    return target;
  }

  private static void narrow(double[] source, float[] target, int targetOffset, int width) {
    for (int i = 0; i < width; i++) {
      target[targetOffset + i] = (float) source[i];
    }
  }
}

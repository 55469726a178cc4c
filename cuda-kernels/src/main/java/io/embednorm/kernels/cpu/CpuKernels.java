package io.embednorm.kernels.cpu;

import io.embednorm.kernels.Normalization;

/**
 * The five ops on one row held in a Java array: the CPU implementation of DESIGN.md §2, used by the
 * CPU engine and by Spark's row-at-a-time path. float32 rows accumulate in float32 and fall back to
 * float64 for rows whose sums would overflow or underflow; float64 rows accumulate in float64.
 */
public final class CpuKernels {
  private CpuKernels() {}

  /**
   * Normalizes {@code input[inputOffset, inputOffset + width)} into {@code output[outputOffset,
   * outputOffset + width)}; input and output may be the same array at the same offset.
   *
   * @throws io.embednorm.kernels.EmbedNormException when weight or bias length differs from {@code
   *     width} (row index unknown here)
   */
  public static void normalizeRow(
      Normalization normalization,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width) {
    throw new UnsupportedOperationException("TODO");
  }

  /** As {@link #normalizeRow(Normalization, float[], int, float[], int, int)}, in float64. */
  public static void normalizeRow(
      Normalization normalization,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width) {
    throw new UnsupportedOperationException("TODO");
  }
}

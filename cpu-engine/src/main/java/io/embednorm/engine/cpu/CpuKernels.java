package io.embednorm.engine.cpu;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.Objects;

/**
 * The ops on one row held in a Java array: the CPU implementation of docs/SEMANTICS.md, Ops, used
 * by the CPU engine and by Spark's row-at-a-time path. float32 rows accumulate in float32 and fall
 * back to float64 for rows whose sums would overflow or underflow; float64 rows accumulate in
 * float64.
 *
 * <p>A row's output bits depend only on the row and the normalization, so any batching gives the
 * same result. The loops run with the JDK Vector API where the JVM has it ({@code --add-modules
 * jdk.incubator.vector}) and in plain Java otherwise; both give the same bits (see {@link
 * RowPasses}). Thread-safe; allocates nothing per row (the float64 fallback uses per-thread
 * scratch).
 */
public final class CpuKernels {
  private CpuKernels() {}

  /** Which loops run in this JVM: {@code java simd, 256-bit} or {@code java scalar}. */
  public static String implementation() {
    return RowPassSelection.DEFAULT.description();
  }

  /**
   * Normalizes {@code input[inputOffset, inputOffset + width)} into {@code output[outputOffset,
   * outputOffset + width)}; input and output may be the same array at the same offset. An empty row
   * writes nothing.
   *
   * @throws io.embednorm.engine.EmbedNormException when weight or bias length differs from {@code
   *     width} (row index unknown here)
   * @throws IndexOutOfBoundsException when a range does not fit its array
   */
  public static void normalizeRow(
      Normalization normalization,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width) {
    normalizeRow(
        RowPassSelection.DEFAULT, normalization, input, inputOffset, output, outputOffset, width);
  }

  /** As the public float32 method, with the given loops (tests run both). */
  static void normalizeRow(
      RowPasses passes,
      Normalization normalization,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width) {
    normalizeRows(passes, normalization, input, inputOffset, output, outputOffset, width, 1);
  }

  /**
   * Normalizes {@code rows} rows of {@code width} elements each, back to back from {@code
   * inputOffset}, into the same layout from {@code outputOffset}: every row gets the bits it would
   * get alone, and narrow rows run several times faster than one call per row (see {@link
   * FloatRowKernels}). Input and output are the same array at the same offset or do not overlap.
   */
  static void normalizeRows(
      RowPasses passes,
      Normalization normalization,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows) {
    int elements = Math.multiplyExact(width, rows);
    Objects.checkFromIndexSize(inputOffset, elements, input.length);
    Objects.checkFromIndexSize(outputOffset, elements, output.length);
    normalization.checkWidth(-1, width);
    if (elements == 0) {
      return;
    }
    double epsilon = normalization.epsilon();
    switch (normalization.op()) {
      case RMS_NORM ->
          FloatRowKernels.rmsNorm(
              passes,
              input,
              inputOffset,
              output,
              outputOffset,
              width,
              rows,
              epsilon,
              normalization.floatWeight());
      case LAYER_NORM ->
          FloatRowKernels.layerNorm(
              passes,
              input,
              inputOffset,
              output,
              outputOffset,
              width,
              rows,
              epsilon,
              normalization.floatWeight(),
              normalization.floatBias());
      case SOFTMAX ->
          FloatRowKernels.softmax(passes, input, inputOffset, output, outputOffset, width, rows);
      case LOG_SOFTMAX ->
          FloatRowKernels.logSoftmax(passes, input, inputOffset, output, outputOffset, width, rows);
      case L2_NORMALIZE ->
          FloatRowKernels.l2Normalize(
              passes, input, inputOffset, output, outputOffset, width, rows, epsilon);
      case L1_NORMALIZE, LINF_NORMALIZE ->
          FloatRowKernels.normalizeByMagnitudes(
              passes,
              normalization.op() == Op.L1_NORMALIZE,
              input,
              inputOffset,
              output,
              outputOffset,
              width,
              rows,
              epsilon);
      default -> throw new IllegalStateException("Unknown op " + normalization.op());
    }
  }

  /** As {@link #normalizeRow(Normalization, float[], int, float[], int, int)}, in float64. */
  public static void normalizeRow(
      Normalization normalization,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width) {
    normalizeRow(
        RowPassSelection.DEFAULT, normalization, input, inputOffset, output, outputOffset, width);
  }

  /** As the public float64 method, with the given loops (tests run both). */
  static void normalizeRow(
      RowPasses passes,
      Normalization normalization,
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int width) {
    Objects.checkFromIndexSize(inputOffset, width, input.length);
    Objects.checkFromIndexSize(outputOffset, width, output.length);
    normalization.checkWidth(-1, width);
    if (width == 0) {
      return;
    }
    double epsilon = normalization.epsilon();
    switch (normalization.op()) {
      case RMS_NORM ->
          DoubleRowKernels.rmsNorm(
              passes,
              input,
              inputOffset,
              output,
              outputOffset,
              width,
              epsilon,
              normalization.weight());
      case LAYER_NORM ->
          DoubleRowKernels.layerNorm(
              passes,
              input,
              inputOffset,
              output,
              outputOffset,
              width,
              epsilon,
              normalization.weight(),
              normalization.bias());
      case SOFTMAX ->
          DoubleRowKernels.softmax(passes, input, inputOffset, output, outputOffset, width);
      case LOG_SOFTMAX ->
          DoubleRowKernels.logSoftmax(passes, input, inputOffset, output, outputOffset, width);
      case L2_NORMALIZE ->
          DoubleRowKernels.l2Normalize(
              passes, input, inputOffset, output, outputOffset, width, epsilon);
      case L1_NORMALIZE, LINF_NORMALIZE ->
          DoubleRowKernels.normalizeByMagnitudes(
              passes,
              normalization.op() == Op.L1_NORMALIZE,
              input,
              inputOffset,
              output,
              outputOffset,
              width,
              epsilon);
      default -> throw new IllegalStateException("Unknown op " + normalization.op());
    }
  }
}

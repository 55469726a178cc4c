package io.embednorm.arrow;

import io.embednorm.arrow.internal.HostOutputs;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.NormalizationEngine;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.BaseListVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;

/**
 * {@code causal_conv} over an Arrow column of sequences (docs/SEMANTICS.md, Causal convolution):
 * {@code List<FixedSizeList<float>>} or {@code FixedSizeList<FixedSizeList<float>>}, each row T
 * steps of C channels, into a new column of the same type and shape. A null row, step or element
 * gives a null row. The rows go to the engine in few batches ({@link ConvolutionBatches}: on a GPU,
 * one launch for many sequences). The caller closes the returned vector; the input and the
 * allocator stay the caller's. {@link ArrowNormalizer#causalConv} runs it on the normalizer's
 * device.
 */
public final class ArrowConvolution {
  private ArrowConvolution() {}

  /**
   * Convolves every row of {@code sequences} with {@code kernel}, adding {@code eps}, on the CPU
   * engine (its threads sharing the sequences).
   */
  public static FieldVector causalConv(
      FieldVector sequences, ConvolutionKernel kernel, float eps, BufferAllocator allocator) {
    try (NormalizationEngine cpu = Engines.cpu()) {
      return causalConv(sequences, kernel, eps, allocator, cpu, null);
    }
  }

  /**
   * As {@link #causalConv(FieldVector, ConvolutionKernel, float, BufferAllocator)}, on {@code
   * engine}, through {@code staging} (a GPU's pinned slots; null: in place and Java arrays).
   */
  static FieldVector causalConv(
      FieldVector sequences,
      ConvolutionKernel kernel,
      float eps,
      BufferAllocator allocator,
      NormalizationEngine engine,
      StagingPool staging) {
    int channels = kernel.channels();
    FixedSizeListVector steps = steps(sequences, channels);
    Float4Vector values = (Float4Vector) steps.getDataVector();
    int rows = sequences.getValueCount();
    int[] counts = new int[rows];
    long[] inputStarts = new long[rows];
    long[] outputStarts = new long[rows + 1];
    boolean fixed = sequences instanceof FixedSizeListVector;
    boolean anyNull = steps.getNullCount() > 0 || values.getNullCount() > 0;
    for (int row = 0; row < rows; row++) {
      int first = start(sequences, row);
      int count = end(sequences, row) - first;
      boolean isNull =
          sequences.isNull(row) || anyNull && hasNull(steps, values, first, count, channels);
      counts[row] = isNull ? -1 : count;
      inputStarts[row] = first;
      outputStarts[row + 1] = outputStarts[row] + (isNull && !fixed ? 0 : count);
    }
    if (outputStarts[rows] * channels > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot convolve column '"
              + sequences.getName()
              + "' with causal_conv: its "
              + outputStarts[rows] * channels
              + " output elements pass Arrow's limit of "
              + Integer.MAX_VALUE
              + " a vector");
    }
    FieldVector output = sequences.getField().createVector(allocator);
    try {
      Float4Vector outputValues = allocate(output, allocator, counts, outputStarts, channels);
      new ConvolutionBatches(
              engine,
              kernel,
              eps,
              values.getDataBuffer(),
              outputValues.getDataBuffer(),
              inputStarts,
              outputStarts,
              counts,
              staging)
          .run();
      return output;
    } catch (RuntimeException failure) {
      output.close();
      throw failure;
    }
  }

  /**
   * The float elements under {@code sequences}, null rows' included; 0 for a column that is not one
   * of sequences (which {@link #causalConv} then refuses, saying why).
   */
  static int elementCount(FieldVector sequences) {
    return sequences instanceof BaseListVector list
            && list.getChildrenFromFields().size() == 1
            && list.getChildrenFromFields().get(0) instanceof FixedSizeListVector steps
        ? steps.getDataVector().getValueCount()
        : 0;
  }

  /**
   * The output's buffers, loaded without zeroing (the values from the pool of {@link HostOutputs},
   * whose pages earlier calls touched), and its structure: offsets, every vector's validity and
   * count. A null row of a fixed-size column keeps its place as zeros; the engine writes every
   * other value. Returns the values.
   */
  private static Float4Vector allocate(
      FieldVector output,
      BufferAllocator allocator,
      int[] counts,
      long[] outputStarts,
      int channels) {
    int rows = counts.length;
    int steps = (int) outputStarts[rows];
    int floats = steps * channels;
    FixedSizeListVector outputSteps =
        (FixedSizeListVector) ((BaseListVector) output).getChildrenFromFields().get(0);
    Float4Vector outputValues = (Float4Vector) outputSteps.getDataVector();
    if (output instanceof ListVector) {
      ListColumn.loadUnzeroed(output, allocator, rows, 4L * (rows + 1));
      for (int row = 0; row <= rows; row++) {
        output.getOffsetBuffer().setInt(4L * row, (int) outputStarts[row]);
      }
    } else {
      ListColumn.loadUnzeroed(output, allocator, rows);
    }
    ListColumn.loadUnzeroed(outputSteps, allocator, steps);
    ListColumn.loadUnzeroed(
        outputValues, allocator, HostOutputs::buffer, floats, (long) floats * Float.BYTES);
    ArrowBuf valueValidity = outputValues.getValidityBuffer();
    valueValidity.setZero(0, valueValidity.capacity());
    for (int row = 0; row < rows; row++) {
      long first = outputStarts[row];
      long end = outputStarts[row + 1];
      if (counts[row] < 0) {
        outputValues
            .getDataBuffer()
            .setZero(first * channels * Float.BYTES, (end - first) * channels * Float.BYTES);
        continue;
      }
      BitRanges.set(output.getValidityBuffer(), row, row + 1L);
      BitRanges.set(outputSteps.getValidityBuffer(), first, end);
      BitRanges.set(valueValidity, first * channels, end * channels);
    }
    return outputValues;
  }

  /** Whether a step or an element of a row is null. */
  private static boolean hasNull(
      FixedSizeListVector steps, Float4Vector values, int first, int count, int channels) {
    return !BitRanges.allSet(steps.getValidityBuffer(), first, (long) first + count)
        || !BitRanges.allSet(
            values.getValidityBuffer(), (long) first * channels, (long) (first + count) * channels);
  }

  private static int start(FieldVector sequences, int row) {
    return sequences instanceof ListVector list
        ? list.getElementStartIndex(row)
        : row * ((FixedSizeListVector) sequences).getListSize();
  }

  private static int end(FieldVector sequences, int row) {
    return sequences instanceof ListVector list
        ? list.getElementEndIndex(row)
        : (row + 1) * ((FixedSizeListVector) sequences).getListSize();
  }

  private static FixedSizeListVector steps(FieldVector sequences, int channels) {
    FieldVector inner =
        sequences instanceof ListVector list
            ? list.getDataVector()
            : sequences instanceof FixedSizeListVector fixed ? fixed.getDataVector() : null;
    if (!(inner instanceof FixedSizeListVector steps)
        || !(steps.getDataVector() instanceof Float4Vector)) {
      throw new EmbedNormException(
          "Cannot convolve column '"
              + sequences.getName()
              + "' with causal_conv: it is "
              + sequences.getField().getType()
              + ", not List<FixedSizeList<float>> or FixedSizeList<FixedSizeList<float>>");
    }
    if (steps.getListSize() != channels) {
      throw new EmbedNormException(
          "Cannot convolve column '"
              + sequences.getName()
              + "' with causal_conv: its steps have "
              + steps.getListSize()
              + " channels where the kernel has "
              + channels);
    }
    return steps;
  }
}

package io.embednorm.arrow;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.BaseListVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;

/**
 * {@code causal_conv} over an Arrow column of sequences (docs/SEMANTICS.md, Causal convolution):
 * {@code List<FixedSizeList<float>>} or {@code FixedSizeList<FixedSizeList<float>>}, each row T
 * steps of C channels, into a new column of the same type and shape, on the CPU engine. A null row,
 * step or element gives a null row. The caller closes the returned vector; the input and the
 * allocator stay the caller's.
 */
public final class ArrowConvolution {
  private ArrowConvolution() {}

  /** Convolves every row of {@code sequences} with {@code kernel}, adding {@code eps}. */
  public static FieldVector causalConv(
      FieldVector sequences, ConvolutionKernel kernel, float eps, BufferAllocator allocator) {
    FixedSizeListVector steps = steps(sequences, kernel.channels());
    Float4Vector values = (Float4Vector) steps.getDataVector();
    int channels = kernel.channels();
    FieldVector output = sequences.getField().createVector(allocator);
    try {
      output.setInitialCapacity(sequences.getValueCount());
      output.allocateNew();
      BaseListVector outer = (BaseListVector) output;
      FixedSizeListVector outputSteps = (FixedSizeListVector) outer.getChildrenFromFields().get(0);
      Float4Vector outputValues = (Float4Vector) outputSteps.getDataVector();
      int written = 0;
      for (int row = 0; row < sequences.getValueCount(); row++) {
        int first = start(sequences, row);
        int count = end(sequences, row) - first;
        float[] in = sequences.isNull(row) ? null : read(steps, values, first, count, channels);
        if (in == null) {
          output.setNull(row);
          if (output instanceof FixedSizeListVector) {
            written += count; // a fixed-size list keeps the null row's positions
          }
          continue;
        }
        if (output instanceof ListVector list) {
          list.startNewValue(row);
        }
        float[] out = new float[in.length];
        Engines.causalConvolution().convolve(kernel, eps, in, 0, count, out, 0);
        for (int t = 0; t < count; t++) {
          outputSteps.setNotNull(written + t);
          for (int c = 0; c < channels; c++) {
            outputValues.setSafe((written + t) * channels + c, out[t * channels + c]);
          }
        }
        written += count;
        if (output instanceof ListVector list) {
          list.endValue(row, count);
        } else {
          ((FixedSizeListVector) output).setNotNull(row);
        }
      }
      outputValues.setValueCount(written * channels);
      outputSteps.setValueCount(written);
      output.setValueCount(sequences.getValueCount());
      return output;
    } catch (RuntimeException failure) {
      output.close();
      throw failure;
    }
  }

  /** The steps of a row, or null when the row, a step or an element is null. */
  private static float[] read(
      FixedSizeListVector steps, Float4Vector values, int first, int count, int channels) {
    float[] in = new float[count * channels];
    for (int t = 0; t < count; t++) {
      if (steps.isNull(first + t)) {
        return null;
      }
      for (int c = 0; c < channels; c++) {
        int index = (first + t) * channels + c;
        if (values.isNull(index)) {
          return null;
        }
        in[t * channels + c] = values.get(index);
      }
    }
    return in;
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

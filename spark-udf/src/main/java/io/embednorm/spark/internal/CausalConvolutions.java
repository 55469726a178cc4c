package io.embednorm.spark.internal;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * {@code causal_conv} on Spark's row values (docs/SEMANTICS.md, Causal convolution): reads a
 * sequence ({@code array<array<float>>}, steps × channels) and the kernel (channels × kernel
 * steps), runs the CPU engine's loops and builds the result. Nulls anywhere give null. The row
 * path; the columnar operator runs a projection's calls over a column with a constant kernel a
 * batch at a time ({@link SparkSequences}, {@link ColumnConvolution}).
 */
public final class CausalConvolutions {
  public static final String NAME = "causal_conv";

  /** The SQL type of a result: {@code array<array<float>>}, no null step or element. */
  public static final DataType RESULT_TYPE =
      DataTypes.createArrayType(DataTypes.createArrayType(DataTypes.FloatType, false), false);

  private CausalConvolutions() {}

  /** The kernel held in {@code w}, or null when it or any part of it is null. */
  public static ConvolutionKernel kernel(ArrayData w) {
    if (w == null) {
      return null;
    }
    float[][] rows = new float[w.numElements()][];
    for (int c = 0; c < rows.length; c++) {
      if (w.isNullAt(c)) {
        return null;
      }
      ArrayData row = w.getArray(c);
      if (hasNull(row)) {
        return null;
      }
      rows[c] = row.toFloatArray();
    }
    try {
      return ConvolutionKernel.of(rows);
    } catch (EmbedNormException failure) {
      throw new EmbedNormException(
          "Cannot convolve with "
              + NAME
              + ": "
              + failure.getMessage().replace("Cannot ", "cannot "));
    }
  }

  /** The convolution of {@code sequence}; null for a null sequence, step or element. */
  public static ArrayData convolve(ArrayData sequence, ConvolutionKernel kernel, float eps) {
    if (sequence == null || kernel == null) {
      return null;
    }
    int steps = sequence.numElements();
    int channels = kernel.channels();
    float[] values = floats(sequence, channels);
    if (values == null) {
      return null;
    }
    float[] out = new float[values.length];
    Engines.causalConvolution().convolve(kernel, eps, values, 0, steps, out, 0);
    Object[] result = new Object[steps];
    for (int t = 0; t < steps; t++) {
      float[] step = new float[channels];
      System.arraycopy(out, t * channels, step, 0, channels);
      result[t] = ArrayData.toArrayData(step);
    }
    return new GenericArrayData(result);
  }

  /**
   * The floats of {@code sequence} step after step, or null where a step or an element is null; the
   * row path and the columnar operator read sequences alike.
   *
   * @throws EmbedNormException when a step has other than {@code channels} elements
   */
  static float[] floats(ArrayData sequence, int channels) {
    int steps = sequence.numElements();
    float[] values = new float[steps * channels];
    for (int t = 0; t < steps; t++) {
      if (sequence.isNullAt(t)) {
        return null;
      }
      ArrayData step = sequence.getArray(t);
      if (step.numElements() != channels) {
        throw stepWidthFailure(t, step.numElements(), channels);
      }
      for (int c = 0; c < channels; c++) {
        if (step.isNullAt(c)) {
          return null;
        }
        values[t * channels + c] = step.getFloat(c);
      }
    }
    return values;
  }

  /**
   * The failure for step {@code step} of a sequence having {@code width} channels where the kernel
   * has {@code channels}: one line, the same on the row path and in the columnar operator.
   */
  static EmbedNormException stepWidthFailure(int step, int width, int channels) {
    return new EmbedNormException(
        "Cannot convolve a sequence with "
            + NAME
            + ": step "
            + step
            + " has "
            + width
            + " channels where the kernel has "
            + channels);
  }

  private static boolean hasNull(ArrayData values) {
    for (int i = 0; i < values.numElements(); i++) {
      if (values.isNullAt(i)) {
        return true;
      }
    }
    return false;
  }
}

package io.embednorm.spark.internal;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * The row-at-a-time CPU path of the SQL functions: both the interpreted {@code eval} and the
 * generated code of {@code EmbedNormExpression} call these methods, one per element type.
 *
 * <p>A null array or an array with a null element gives null; an empty array gives an empty array.
 * Elements are copied in bulk (no boxing) and the result is an {@link UnsafeArrayData} without
 * nulls.
 */
public final class RowNormalizer {
  private RowNormalizer() {}

  /**
   * Normalizes one {@code array<float>} row.
   *
   * @throws io.embednorm.engine.EmbedNormException when weight or bias length differs from the
   *     row's
   */
  public static ArrayData normalizeFloats(Normalization normalization, ArrayData row) {
    if (row == null || hasNullElement(row)) {
      return null;
    }
    int width = row.numElements();
    checkWidth(normalization, width);
    float[] values = row.toFloatArray();
    if (width > 0) {
      Engines.arrayKernels().normalize(normalization, values, 0, width);
    }
    return UnsafeArrayData.fromPrimitiveArray(values);
  }

  /**
   * Normalizes one {@code array<double>} row.
   *
   * @throws io.embednorm.engine.EmbedNormException when weight or bias length differs from the
   *     row's
   */
  public static ArrayData normalizeDoubles(Normalization normalization, ArrayData row) {
    if (row == null || hasNullElement(row)) {
      return null;
    }
    int width = row.numElements();
    checkWidth(normalization, width);
    double[] values = row.toDoubleArray();
    if (width > 0) {
      Engines.arrayKernels().normalize(normalization, values, 0, width);
    }
    return UnsafeArrayData.fromPrimitiveArray(values);
  }

  /**
   * As {@link Normalization#checkWidth}; this path has no row numbers, but in a task the message
   * names the partition, e.g. {@code Cannot apply layer_norm to a row of partition 3: gamma has 3
   * elements but the row has 5}.
   */
  private static void checkWidth(Normalization normalization, int width) {
    TaskContext task = width == 0 ? null : TaskContext.get();
    if (task != null) {
      checkLength(normalization, normalization.weightName(), normalization.weight(), width, task);
      checkLength(normalization, normalization.biasName(), normalization.bias(), width, task);
    }
    normalization.checkWidth(-1, width);
  }

  private static void checkLength(
      Normalization normalization, String name, double[] values, int width, TaskContext task) {
    if (values != null && values.length != width) {
      throw new EmbedNormException(
          "Cannot apply "
              + normalization.op()
              + " to a row of partition "
              + task.partitionId()
              + ": "
              + name
              + " has "
              + values.length
              + " elements but the row has "
              + width);
    }
  }

  private static boolean hasNullElement(ArrayData row) {
    for (int i = 0, width = row.numElements(); i < width; i++) {
      if (row.isNullAt(i)) {
        return true;
      }
    }
    return false;
  }
}

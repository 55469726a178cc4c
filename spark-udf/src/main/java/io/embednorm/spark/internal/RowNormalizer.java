package io.embednorm.spark.internal;

import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
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
    normalization.checkWidth(-1, width);
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
    normalization.checkWidth(-1, width);
    double[] values = row.toDoubleArray();
    if (width > 0) {
      Engines.arrayKernels().normalize(normalization, values, 0, width);
    }
    return UnsafeArrayData.fromPrimitiveArray(values);
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

package io.embednorm.spark.internal;

import io.embednorm.engine.Encoding;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;

/**
 * Copies an encoded Arrow column ({@code ArrowNormalizer.normalizeEncoded}) into a Spark vector:
 * {@code binary}, or {@code struct<values: binary, scale: float>} for int8.
 */
final class EncodedVectors {
  private EncodedVectors() {}

  static DataType sparkType(Encoding encoding) {
    if (!encoding.hasScales()) {
      return DataTypes.BinaryType;
    }
    return DataTypes.createStructType(
        new StructField[] {
          DataTypes.createStructField("values", DataTypes.BinaryType, false),
          DataTypes.createStructField("scale", DataTypes.FloatType, false)
        });
  }

  /** Overwrites {@code target} with the rows of {@code result}; returns it. */
  static OnHeapColumnVector toSpark(FieldVector result, OnHeapColumnVector target) {
    int rows = result.getValueCount();
    target.reset();
    target.reserve(rows);
    if (result instanceof StructVector struct) {
      WritableColumnVector values = (WritableColumnVector) target.getChild(0);
      WritableColumnVector scales = (WritableColumnVector) target.getChild(1);
      values.reserve(rows);
      scales.reserve(rows);
      copyBinary((FieldVector) struct.getChild("values"), values, rows);
      Float4Vector scale = (Float4Vector) struct.getChild("scale");
      for (int row = 0; row < rows; row++) {
        if (struct.isNull(row)) {
          target.putNull(row);
          scales.putNull(row);
        } else {
          target.putNotNull(row);
          scales.putFloat(row, scale.get(row));
        }
      }
    } else {
      copyBinary(result, target, rows);
    }
    return target;
  }

  private static void copyBinary(FieldVector source, WritableColumnVector target, int rows) {
    for (int row = 0; row < rows; row++) {
      if (source.isNull(row)) {
        target.putNull(row);
        continue;
      }
      byte[] bytes =
          source instanceof VarBinaryVector variable
              ? variable.get(row)
              : ((FixedSizeBinaryVector) source).get(row);
      target.putByteArray(row, bytes);
    }
  }
}

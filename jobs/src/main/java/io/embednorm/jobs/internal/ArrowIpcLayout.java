package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * The Arrow fields of one output file: every column with the Arrow type Spark's own Arrow
 * conversion gives it ({@link #asSpark}), except the embedding column once its width is known, a
 * {@code FixedSizeList<float|double, width>} whose child is named {@code item} and nullable, as
 * pyarrow's {@code pa.list_(pa.float32(), width)} ({@link #fixedSizeList}).
 */
final class ArrowIpcLayout {
  private ArrowIpcLayout() {}

  /** {@code field} as Spark's Arrow conversion types it (an array: {@code List<element>}). */
  static Field asSpark(StructField field, String timeZone) {
    StructType alone = new StructType(new StructField[] {field});
    return ArrowUtils.toArrowSchema(alone, timeZone, true, false).getFields().get(0);
  }

  /** {@code field}, an array of float or double, as a fixed-size list of {@code width}. */
  static Field fixedSizeList(StructField field, int width) {
    Field item = new Field("item", FieldType.nullable(elementType(field)), null);
    return new Field(
        field.name(), FieldType.nullable(new ArrowType.FixedSizeList(width)), List.of(item));
  }

  /** The bytes of one element of {@code field}, an array of float (4) or double (8). */
  static int elementBytes(StructField field) {
    return elementType(field).getPrecision() == FloatingPointPrecision.SINGLE ? 4 : 8;
  }

  private static ArrowType.FloatingPoint elementType(StructField field) {
    DataType type = field.dataType();
    if (type instanceof ArrayType array && array.elementType().equals(DataTypes.FloatType)) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
    }
    if (type instanceof ArrayType array && array.elementType().equals(DataTypes.DoubleType)) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    }
    throw new EmbedNormException(
        "Cannot write column '"
            + field.name()
            + "' as an Arrow fixed-size list: its type is "
            + type.simpleString()
            + "; expected array<float> or array<double>");
  }
}

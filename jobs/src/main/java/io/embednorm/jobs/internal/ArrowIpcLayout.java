package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * The Arrow schema of one output file: every column with the Arrow type Spark's own Arrow
 * conversion gives it, except the embedding column, a {@code FixedSizeList<float|double, width>}
 * whose child is named {@code item} and nullable, as pyarrow's {@code pa.list_(pa.float32(),
 * width)}. {@code fixedOrdinal} is that column's position, or -1 when the schema has none (no
 * column named, or width 0: the column is then written as Spark writes arrays, {@code
 * List<element>}).
 */
record ArrowIpcLayout(Schema schema, int fixedOrdinal, int width, int elementBytes) {

  static ArrowIpcLayout of(StructType spark, String column, int width, String timeZone) {
    List<Field> fields = new ArrayList<>();
    int fixedOrdinal = -1;
    int elementBytes = 0;
    StructField[] columns = spark.fields();
    for (int ordinal = 0; ordinal < columns.length; ordinal++) {
      StructField field = columns[ordinal];
      if (width > 0 && field.name().equals(column)) {
        ArrowType.FloatingPoint element = elementType(field);
        fixedOrdinal = ordinal;
        elementBytes = element.getPrecision() == FloatingPointPrecision.SINGLE ? 4 : 8;
        Field item = new Field("item", FieldType.nullable(element), null);
        fields.add(
            new Field(
                field.name(),
                FieldType.nullable(new ArrowType.FixedSizeList(width)),
                List.of(item)));
      } else {
        StructType alone = new StructType(new StructField[] {field});
        fields.add(ArrowUtils.toArrowSchema(alone, timeZone, true, false).getFields().get(0));
      }
    }
    return new ArrowIpcLayout(new Schema(fields), fixedOrdinal, width, elementBytes);
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

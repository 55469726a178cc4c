package io.embednorm.jobs.internal;

import io.embednorm.arrow.ArrowOutputFile;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** Writes sample embeddings ({@code id bigint, embedding array<float>}) as Parquet or Arrow IPC. */
public final class SampleData {
  /** Rows per Arrow record batch. */
  static final int ARROW_BATCH_ROWS = 8192;

  private SampleData() {}

  /** The Spark schema of sample data. */
  public static StructType sparkSchema() {
    return new StructType()
        .add("id", DataTypes.LongType, false)
        .add("embedding", DataTypes.createArrayType(DataTypes.FloatType, false), false);
  }

  /**
   * Writes {@code rows} rows of {@code width} with Spark in {@code format}, replacing the output if
   * it is a previous Spark output ({@link OutputFolders}).
   */
  public static void writeWithSpark(
      SparkSession spark, String output, String format, long rows, int width, long seed) {
    OutputFolders.check(spark, output, List.of(), SaveMode.Overwrite);
    int partitions = Math.max(1, spark.sparkContext().defaultParallelism());
    spark
        .range(0, rows, 1, partitions)
        .map(
            (MapFunction<Long, org.apache.spark.sql.Row>)
                id -> RowFactory.create(id, SampleRows.row(seed, id, width)),
            Encoders.row(sparkSchema()))
        .write()
        .mode(SaveMode.Overwrite)
        .format(format)
        .save(output);
  }

  /**
   * Writes an Arrow IPC file with a BigInt {@code id} column and a FixedSizeList&lt;float32&gt;
   * {@code embedding} column. The file appears only when complete; {@code output} must be absent or
   * a regular file ({@link ArrowOutputFile#create}).
   */
  public static void writeArrow(
      BufferAllocator allocator, Path output, long rows, int width, long seed) {
    Field element =
        new Field(
            "element",
            FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
            null);
    Field embedding =
        new Field(
            "embedding", FieldType.nullable(new ArrowType.FixedSizeList(width)), List.of(element));
    Field id = new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null);
    try (ArrowOutputFile file =
        ArrowOutputFile.create(output, new Schema(List.of(id, embedding)), allocator)) {
      VectorSchemaRoot root = file.root();
      float[] values = new float[width];
      for (long first = 0; first < rows; first += ARROW_BATCH_ROWS) {
        int count = (int) Math.min(ARROW_BATCH_ROWS, rows - first);
        root.getFieldVectors().forEach(vector -> vector.setInitialCapacity(count));
        root.allocateNew();
        BigIntVector ids = (BigIntVector) root.getVector("id");
        FixedSizeListVector lists = (FixedSizeListVector) root.getVector("embedding");
        Float4Vector data = (Float4Vector) lists.getDataVector();
        data.setValueCount(count * width);
        for (int row = 0; row < count; row++) {
          ids.set(row, first + row);
          lists.setNotNull(row);
          SampleRows.fill(seed, first + row, values);
          for (int i = 0; i < width; i++) {
            data.set(row * width + i, values[i]);
          }
        }
        root.setRowCount(count);
        file.writeBatch();
      }
      file.commit();
    }
  }
}

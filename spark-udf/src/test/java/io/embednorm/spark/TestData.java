package io.embednorm.spark;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** Seeded test rows and the DataFrames holding them, as {@code (id int, x array<type>)}. */
final class TestData {
  /** The seed of every random row; override with {@code -Dembednorm.test.seed=N}. */
  static final long SEED = Long.getLong("embednorm.test.seed", 20250611L);

  /** Widths of the random rows: around warp and vector boundaries, embedding sizes, one huge. */
  static final int[] WIDTHS = {1, 2, 3, 31, 32, 33, 767, 768, 4096, 32769};

  private static final float NEGATIVE_INFINITY = Float.NEGATIVE_INFINITY;
  private static final float POSITIVE_INFINITY = Float.POSITIVE_INFINITY;

  private TestData() {}

  /**
   * Ragged random rows: several per small width, one or two at large widths, with scales from 1e-2
   * to 1e2 and offsets; plus a row with mean 1e6 and spread 0.5, and (float only) rows whose
   * squares overflow or underflow float32. Values are rounded to float for {@code float}.
   */
  static List<Double[]> randomRows(String elementType, long seed) {
    boolean asFloat = elementType.equals("float");
    Random random = new Random(seed);
    List<Double[]> rows = new ArrayList<>();
    for (int width : WIDTHS) {
      int count = width <= 33 ? 4 : width <= 768 ? 2 : 1;
      for (int row = 0; row < count; row++) {
        double scale = Math.pow(10, random.nextDouble() * 4 - 2);
        double offset = row % 2 == 0 ? 0 : random.nextGaussian() * scale * 3;
        rows.add(gaussianRow(random, width, offset, scale, asFloat));
      }
    }
    rows.add(gaussianRow(random, 768, 1e6, 0.5, asFloat));
    double extreme = asFloat ? 1e30 : 1e100;
    rows.add(gaussianRow(random, 33, 0, extreme, asFloat));
    rows.add(gaussianRow(random, 33, 0, 1 / extreme, asFloat));
    return rows;
  }

  /**
   * Rows of the edge cases of docs/SEMANTICS.md (Empty, null and ragged rows; NaN and infinities),
   * for either element type.
   */
  static List<Double[]> edgeRows(String elementType) {
    boolean asFloat = elementType.equals("float");
    double extreme = asFloat ? 1e30 : 1e100;
    List<Double[]> rows =
        Arrays.asList(
            null,
            new Double[0],
            new Double[] {1.0, null, 3.0},
            new Double[] {1.0, Double.NaN, 3.0},
            new Double[] {Double.NaN},
            boxed(NEGATIVE_INFINITY, NEGATIVE_INFINITY, NEGATIVE_INFINITY),
            boxed(POSITIVE_INFINITY, 1, 2),
            boxed(NEGATIVE_INFINITY, 0, 1),
            boxed(NEGATIVE_INFINITY),
            boxed(0, 0, 0, 0),
            boxed(5),
            new Double[] {extreme, -2 * extreme, 3 * extreme},
            new Double[] {1 / extreme, -2 / extreme, 3 / extreme});
    List<Double[]> result = new ArrayList<>();
    for (Double[] row : rows) {
      result.add(asFloat ? roundToFloat(row) : row);
    }
    return result;
  }

  /** The row with each element rounded to float32, as a float column holds it. */
  static Double[] roundToFloat(Double[] row) {
    if (row == null) {
      return null;
    }
    Double[] result = new Double[row.length];
    for (int i = 0; i < row.length; i++) {
      result[i] = row[i] == null ? null : (double) (float) (double) row[i];
    }
    return result;
  }

  /** A DataFrame {@code (id int, x array<elementType>)} with row ids 0, 1, 2, … */
  static Dataset<Row> frame(SparkSession spark, String elementType, List<Double[]> rows) {
    boolean asFloat = elementType.equals("float");
    DataType element = asFloat ? DataTypes.FloatType : DataTypes.DoubleType;
    StructType schema =
        new StructType()
            .add("id", DataTypes.IntegerType, false)
            .add("x", DataTypes.createArrayType(element, true), true);
    List<Row> data = new ArrayList<>();
    for (int id = 0; id < rows.size(); id++) {
      data.add(RowFactory.create(id, asFloat ? toFloats(rows.get(id)) : rows.get(id)));
    }
    return spark.createDataFrame(data, schema);
  }

  /**
   * Writes {@code frame} as Parquet to {@code folder} and reads it back as the view {@code name}.
   */
  static void parquetView(SparkSession spark, Dataset<Row> frame, Path folder, String name) {
    frame.write().parquet(folder.toString());
    spark.read().parquet(folder.toString()).createOrReplaceTempView(name);
  }

  private static Double[] gaussianRow(
      Random random, int width, double offset, double scale, boolean asFloat) {
    Double[] row = new Double[width];
    for (int i = 0; i < width; i++) {
      double value = offset + scale * random.nextGaussian();
      row[i] = asFloat ? (double) (float) value : value;
    }
    return row;
  }

  private static Double[] boxed(double... values) {
    return Arrays.stream(values).boxed().toArray(Double[]::new);
  }

  private static Float[] toFloats(Double[] row) {
    if (row == null) {
      return null;
    }
    Float[] result = new Float[row.length];
    for (int i = 0; i < row.length; i++) {
      result[i] = row[i] == null ? null : (float) (double) row[i];
    }
    return result;
  }
}

package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark 4.2 only (src/test/spark-4.2): our {@code l2_normalize(x, eps)} next to Spark's built-in
 * {@code vector_normalize(x, 2)} in one query, as docs/SPARK-VERSIONS.md states the relation: the
 * same unit vector where {@code eps <= ‖x‖} and {@code ‖x‖²} is a normal float32, and the listed
 * differences (zero rows, rows below eps, rows whose squares overflow, array&lt;double&gt;)
 * elsewhere. Spark 4.2 has {@code vector_norm} built in: it stays Spark's, with no warning at
 * session start.
 */
class VectorNormalizeRelationTest {
  private static final int WIDEST_RANDOM_ROW = 768;
  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(true);
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @Test
  void bothGiveTheUnitVectorOnOrdinaryRows() {
    long seed = TestData.SEED + 42;
    List<Double[]> rows = new ArrayList<>();
    for (Double[] row : TestData.randomRows("float", seed)) {
      double largest = 0;
      for (Double value : row) {
        largest = Math.max(largest, Math.abs(value));
      }
      if (row.length <= WIDEST_RANDOM_ROW && largest > 1e-15 && largest < 1e15) {
        rows.add(row);
      }
    }
    assertThat(rows).hasSizeGreaterThan(20);
    TestData.frame(spark, "float", rows).createOrReplaceTempView("ordinary");
    List<Row> result =
        spark
            .sql(
                "SELECT id, l2_normalize(x, 1e-12D), vector_normalize(x, 2.0F) FROM ordinary"
                    + " ORDER BY id")
            .collectAsList();
    assertThat(result).hasSize(rows.size());
    for (Row row : result) {
      int id = row.getInt(0);
      double[] unit = unitVector(rows.get(id));
      String context = "seed " + seed + ", row " + id + " of width " + unit.length;
      Accuracy.FLOAT.assertRow(context + ", l2_normalize", row.getList(1), unit);
      Accuracy.FLOAT.assertRow(context + ", vector_normalize", row.getList(2), unit);
    }
  }

  @Test
  void theyDifferWhereTheDocumentsSay() {
    List<Double[]> rows =
        List.of(
            new Double[] {0.0, 0.0},
            new Double[] {3e-14, 4e-14},
            new Double[] {3e20, 4e20},
            new Double[] {Double.NaN, 1.0},
            new Double[] {null, 1.0},
            new Double[] {},
            new Double[] {Double.POSITIVE_INFINITY, 1.0},
            new Double[] {3e-20, 4e-20});
    List<Double[]> withNull = new ArrayList<>(rows);
    withNull.add(null);
    TestData.frame(spark, "float", withNull).createOrReplaceTempView("edges");
    List<Row> result =
        spark
            .sql("SELECT id, l2_normalize(x), vector_normalize(x) FROM edges ORDER BY id")
            .collectAsList();
    // id -> {l2_normalize, vector_normalize}; null is a null array.
    Map<Integer, double[][]> expected =
        Map.of(
            0, new double[][] {{0, 0}, null}, // zero row: zeros, against NULL
            1, new double[][] {{0.03, 0.04}, {0.6, 0.8}}, // ‖x‖ < eps: x / eps, against x / ‖x‖
            2, new double[][] {{0.6, 0.8}, {0, 0}}, // ‖x‖² overflows float32 in theirs
            3, new double[][] {{Double.NaN, Double.NaN}, {Double.NaN, Double.NaN}},
            4, new double[][] {null, null},
            5, new double[][] {{}, {}},
            6, new double[][] {{Double.NaN, 0}, {Double.NaN, 0}},
            // ‖x‖² underflows float32 in theirs: subnormal squares, a norm good to 2e-7 here
            7, new double[][] {{3e-8, 4e-8}, {0.6, 0.8}},
            8, new double[][] {null, null});
    assertThat(result).hasSize(expected.size());
    for (Row row : result) {
      int id = row.getInt(0);
      Accuracy.FLOAT.assertRow("row " + id + ", l2_normalize", row.getList(1), expected.get(id)[0]);
      Accuracy.FLOAT.assertRow(
          "row " + id + ", vector_normalize", row.getList(2), expected.get(id)[1]);
    }
  }

  @Test
  void onlyOursTakesDoublesAndKeepsTheirType() {
    Row row = spark.sql("SELECT l2_normalize(array(3.0D, 4.0D))").first();
    Accuracy.DOUBLE.assertRow(
        "l2_normalize of array<double>", row.getList(0), new double[] {0.6, 0.8});
    assertThat(
            spark
                .sql("SELECT l2_normalize(array(3.0D, 4.0D))")
                .schema()
                .fields()[0]
                .dataType()
                .sql())
        .isEqualTo("ARRAY<DOUBLE>");
    assertThatThrownBy(() -> spark.sql("SELECT vector_normalize(array(3.0D, 4.0D))").collect())
        .isInstanceOf(AnalysisException.class)
        .hasMessageContaining("ARRAY<FLOAT>");
  }

  @Test
  void noneOfOurNamesIsBuiltIn() {
    SparkSession plain = spark.newSession();
    List<String> builtIn =
        plain.sql("SHOW SYSTEM FUNCTIONS").collectAsList().stream()
            .map(result -> result.getString(0))
            .toList();
    assertThat(builtIn).contains("vector_normalize", "vector_norm");
    assertThat(builtIn)
        .doesNotContain("rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize");
  }

  private static double[] unitVector(Double[] x) {
    double sumOfSquares = 0;
    for (Double value : x) {
      sumOfSquares += value * value;
    }
    double norm = Math.sqrt(sumOfSquares);
    double[] unit = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      unit[i] = x[i] / norm;
    }
    return unit;
  }

  @Test
  void sparksVectorNormStaysInPlace() {
    assertThat(EmbedNormExtensions.sparkHasBuiltin("vector_norm")).isTrue();
    String described = spark.sql("DESCRIBE FUNCTION vector_norm").collectAsList().toString();
    assertThat(described).contains("org.apache.spark.sql.catalyst.expressions.VectorNorm");
    assertThat(spark.sql("SELECT vector_norm(array(3.0F, -4.0F))").first().getFloat(0))
        .isEqualTo(5f);
  }
}

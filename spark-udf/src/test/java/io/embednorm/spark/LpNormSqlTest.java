package io.embednorm.spark;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.spark.ml.feature.Normalizer;
import org.apache.spark.ml.functions;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code lp_normalize} and {@code vector_norm} in SQL (docs/SEMANTICS.md, Ops): against the float64
 * reference, against {@code l2_normalize} and Spark ML's {@code Normalizer} and {@code
 * Vectors.norm} on the same rows, on fresh random ragged rows (the seed is printed; {@code
 * -Dembednorm.test.seed=N} repeats a run) and on the edge cases, on the row path and in the
 * columnar operator.
 */
class LpNormSqlTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  private static final double INFINITY = Double.POSITIVE_INFINITY;

  private static SparkSession spark;
  private static List<Double[]> rows;

  @BeforeAll
  static void startSpark() {
    System.out.println("LpNormSqlTest seed " + SEED);
    spark = TestSessions.create(true);
    Random random = new Random(SEED);
    rows = new ArrayList<>();
    for (int width : new int[] {1, 2, 3, 7, 31, 32, 33, 100, 767, 768, 4099}) {
      for (int copy = 0; copy < 3; copy++) {
        Double[] row = new Double[width];
        double magnitude = Math.pow(10, random.nextInt(7) - 3);
        for (int i = 0; i < width; i++) {
          row[i] = random.nextGaussian() * magnitude;
        }
        rows.add(row);
      }
    }
    for (String type : new String[] {"float", "double"}) {
      List<Double[]> typed = new ArrayList<>();
      for (Double[] row : rows) {
        typed.add(type.equals("float") ? TestData.roundToFloat(row) : row);
      }
      TestData.frame(spark, type, typed).createOrReplaceTempView("random_" + type);
      TestData.frame(spark, type, TestData.edgeRows(type)).createOrReplaceTempView("edge_" + type);
    }
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @Test
  void lpNormalizeOfTwoIsL2NormalizeBitForBitAndSparkMlsNormalizer() {
    for (ExecutionMode mode : ExecutionMode.values()) {
      mode.apply(spark);
      for (String type : new String[] {"float", "double"}) {
        Dataset<Row> both =
            spark.sql(
                "SELECT id, lp_normalize(x, 2) AS p, l2_normalize(x) AS l2 FROM random_" + type);
        for (Row row : both.collectAsList()) {
          assertThat(row.getList(1))
              .as("seed %d, %s, array<%s> row %d", SEED, mode, type, row.getInt(0))
              .isEqualTo(row.getList(2));
        }
      }
    }
    for (double p : new double[] {1, 2, INFINITY}) {
      Map<Integer, double[]> ml = sparkMlNormalizer("random_double", p);
      String order = p == INFINITY ? "'inf'" : Double.toString(p);
      for (String type : new String[] {"float", "double"}) {
        Map<Integer, List<?>> ours =
            Results.byId(
                spark.sql("SELECT id, lp_normalize(x, " + order + ") AS y FROM random_" + type));
        for (int id = 0; id < rows.size(); id++) {
          String context =
              String.format(Locale.ROOT, "seed %d, p %s, array<%s> row %d", SEED, p, type, id);
          Accuracy.of(type).assertRow(context, ours.get(id), reference(type, id, p));
          if (type.equals("double")) {
            // The same formula in float64 on the same rows: Spark ML's x / ‖x‖.
            Accuracy.DOUBLE.assertRow(context + " against Spark ML", ours.get(id), ml.get(id));
          }
        }
      }
    }
  }

  @Test
  void lpNormalizeRunsInTheColumnarOperatorAndKeepsItsNameInColumns() {
    ExecutionMode.COLUMNAR.apply(spark);
    Dataset<Row> result = spark.sql("SELECT id, lp_normalize(x, 1) FROM random_float");
    assertThat(result.columns()[1]).isEqualTo("lp_normalize(x, 1)");
    assertThat(result.queryExecution().executedPlan().toString())
        .contains("EmbedNormProject")
        .contains("l1_normalize(x");
    Map<Integer, List<?>> values = Results.byId(result);
    for (int id = 0; id < rows.size(); id++) {
      Accuracy.FLOAT.assertRow(
          "seed " + SEED + " row " + id, values.get(id), reference("float", id, 1));
    }
  }

  @Test
  void edgeCasesFollowTheReference() {
    for (ExecutionMode mode : ExecutionMode.values()) {
      mode.apply(spark);
      for (String type : new String[] {"float", "double"}) {
        List<Double[]> edges = TestData.edgeRows(type);
        for (double p : new double[] {1, 2, INFINITY}) {
          for (String eps : new String[] {"", ", 0"}) {
            String order = p == INFINITY ? "float('inf')" : Double.toString(p);
            Map<Integer, List<?>> result =
                Results.byId(
                    spark.sql("SELECT id, lp_normalize(x, " + order + eps + ") FROM edge_" + type));
            for (int id = 0; id < edges.size(); id++) {
              Double[] row = edges.get(id);
              double epsilon = eps.isEmpty() ? 1e-12 : 0;
              Accuracy.of(type)
                  .assertRow(
                      String.format(Locale.ROOT, "%s p %s eps %s row %d", mode, p, epsilon, id),
                      result.get(id),
                      Reference.compute(function(p), row, epsilon, null, null));
            }
          }
        }
      }
    }
  }

  @Test
  void zeroRowsStayZeroAsInSparkMlAndAreNaNWithoutEps() {
    ExecutionMode.CODEGEN.apply(spark);
    Row row =
        spark
            .sql(
                "SELECT lp_normalize(array(0.0f, 0.0f), 1), lp_normalize(array(0.0D), 'inf'),"
                    + " lp_normalize(array(0.0f, -0.0f), 1, 0)")
            .first();
    assertThat(row.getList(0)).containsExactly(0f, 0f);
    assertThat(row.getList(1)).containsExactly(0.0);
    assertThat(row.getList(2)).containsExactly(Float.NaN, Float.NaN);
    Vector zeros = Vectors.dense(0, 0);
    assertThat(
            new org.apache.spark.mllib.feature.Normalizer(1)
                .transform(org.apache.spark.mllib.linalg.Vectors.fromML(zeros))
                .toArray())
        .containsExactly(0, 0);
  }

  @Test
  void pIsAConstantOneTwoOrInfinityInAnySpelling() {
    ExecutionMode.CODEGEN.apply(spark);
    Row row =
        spark
            .sql(
                "SELECT lp_normalize(array(3.0f, -4.0f), 1), lp_normalize(array(3.0f, -4.0f), 1.0),"
                    + " lp_normalize(array(3.0f, -4.0f), 2D),"
                    + " lp_normalize(array(3.0f, -4.0f), 'Infinity'),"
                    + " lp_normalize(array(3.0f, -4.0f), double('inf'), 1e-3),"
                    + " lp_normalize(array(3, -4), 1)")
            .first();
    // x · (1 / ‖x‖), as l2_normalize: within an ulp of Spark's x / ‖x‖.
    double[][] expected = {
      {3 / 7.0, -4 / 7.0}, {3 / 7.0, -4 / 7.0}, {0.6, -0.8}, {0.75, -1}, {0.75, -1}
    };
    for (int i = 0; i < expected.length; i++) {
      Accuracy.FLOAT.assertRow("column " + i, row.getList(i), expected[i]);
    }
    Accuracy.DOUBLE.assertRow("array(3, -4)", row.getList(5), expected[0]);
    for (String[] refused :
        new String[][] {
          {
            "lp_normalize(x, 3)",
            "Cannot configure lp_normalize: p must be 1, 2 or infinity, got 3.0"
          },
          {"lp_normalize(x, float('-inf'))", "p must be 1, 2 or infinity, got -Infinity"},
          {"lp_normalize(x, 'two')", "p must be 1, 2 or infinity, got 'two'"},
          {
            "lp_normalize(x, CAST(NULL AS DOUBLE))",
            "Cannot configure lp_normalize: p must not be null"
          },
          {"lp_normalize(x, size(x))", "`p`"},
          {
            "lp_normalize(x)",
            "lp_normalize takes 2 or 3 arguments, as in lp_normalize(x, p [, eps]), but got 1"
          },
          {
            "lp_normalize(x, 1, -1)",
            "Cannot configure l1_normalize: eps must be a finite number >= 0, got -1.0"
          },
        }) {
      assertThatThrownBy(() -> spark.sql("SELECT " + refused[0] + " FROM random_float").collect())
          .as(refused[0])
          .satisfies(failure -> assertThat(Results.messages(failure)).contains(refused[1]));
    }
  }

  @Test
  void vectorNormRefusesAnotherP() {
    assumeEmbednormsVectorNorm();
    assertThatThrownBy(() -> spark.sql("SELECT vector_norm(x, 0.5) FROM random_float").collect())
        .satisfies(
            failure ->
                assertThat(Results.messages(failure))
                    .contains("Cannot compute vector_norm: p must be 1, 2 or infinity, got 0.5"));
  }

  @Test
  void vectorNormIsOneNumberARowLikeSparkMlsNorm() {
    assumeEmbednormsVectorNorm();
    for (ExecutionMode mode :
        new ExecutionMode[] {ExecutionMode.INTERPRETED, ExecutionMode.CODEGEN}) {
      mode.apply(spark);
      for (String type : new String[] {"float", "double"}) {
        for (double p : new double[] {1, 2, INFINITY}) {
          String order = p == INFINITY ? "'inf'" : Double.toString(p);
          Dataset<Row> result =
              spark.sql("SELECT id, vector_norm(x, " + order + ") FROM random_" + type);
          assertThat(result.schema().apply(1).dataType())
              .isEqualTo(type.equals("float") ? DataTypes.FloatType : DataTypes.DoubleType);
          for (Row row : result.collectAsList()) {
            int id = row.getInt(0);
            Double[] input =
                type.equals("float") ? TestData.roundToFloat(rows.get(id)) : rows.get(id);
            double[] values = Arrays.stream(input).mapToDouble(Double::doubleValue).toArray();
            double expected = Vectors.norm(Vectors.dense(values), p);
            double actual = ((Number) row.get(1)).doubleValue();
            String context =
                String.format(
                    Locale.ROOT, "seed %d, %s p %s, array<%s> row %d", SEED, mode, p, type, id);
            if (type.equals("float")) {
              assertThat(actual).as(context).isEqualTo((double) (float) expected);
            } else {
              assertThat(actual)
                  .as(context)
                  .isCloseTo(expected, org.assertj.core.api.Assertions.within(1e-13 * expected));
            }
          }
        }
      }
    }
  }

  @Test
  void vectorNormEdgeCases() {
    assumeEmbednormsVectorNorm();
    ExecutionMode.CODEGEN.apply(spark);
    Row row =
        spark
            .sql(
                "SELECT vector_norm(array(3.0f, -4.0f)), vector_norm(CAST(array() AS array<float>), 1),"
                    + " vector_norm(array(1.0f, CAST(NULL AS float))), vector_norm(CAST(NULL AS array<double>)),"
                    + " vector_norm(array(3.0D, -4.0D), CAST(NULL AS double)),"
                    + " vector_norm(array(1e200D, 1e200D)), vector_norm(array(3e-200D, 4e-200D)),"
                    + " vector_norm(array(2e30f, 2e30f)),"
                    + " vector_norm(array(1.0f, float('NaN'), 5.0f), 'inf'),"
                    + " vector_norm(array(1.0D, double('-inf')), 1)")
            .first();
    assertThat(row.getFloat(0)).isEqualTo(5f);
    assertThat(row.getFloat(1)).isEqualTo(0f);
    assertThat(row.isNullAt(2)).isTrue();
    assertThat(row.isNullAt(3)).isTrue();
    assertThat(row.isNullAt(4)).isTrue();
    assertThat(row.getDouble(5))
        .isCloseTo(Math.sqrt(2) * 1e200, org.assertj.core.api.Assertions.within(1e186));
    assertThat(row.getDouble(6)).isCloseTo(5e-200, org.assertj.core.api.Assertions.within(1e-214));
    assertThat(row.getFloat(7)).isEqualTo((float) (Math.sqrt(2) * 2e30f));
    assertThat(row.getFloat(8)).isNaN();
    assertThat(row.getDouble(9)).isEqualTo(INFINITY);
    // p from a column, row by row; a refused one fails its row.
    Dataset<Row> perRow =
        spark.sql(
            "SELECT vector_norm(array(3.0f, -4.0f), p) FROM VALUES (1.0), (2.0), (NULL) AS t(p)");
    assertThat(perRow.collectAsList().stream().map(r -> r.isNullAt(0) ? null : r.getFloat(0)))
        .containsExactly(7f, 5f, null);
    assertThatThrownBy(
            () ->
                spark.sql("SELECT vector_norm(array(3.0f), p) FROM VALUES (3.0) AS t(p)").collect())
        .satisfies(
            failure ->
                assertThat(Results.messages(failure))
                    .contains("Cannot compute vector_norm: p must be 1, 2 or infinity, got 3.0"));
    ExecutionMode.COLUMNAR.apply(spark);
    assertThat(
            spark
                .sql("SELECT vector_norm(x) FROM random_float")
                .queryExecution()
                .executedPlan()
                .toString())
        .doesNotContain("EmbedNormProject");
  }

  @Test
  void describeFunctionShowsUsageAndExamples() {
    for (String function :
        new String[] {"lp_normalize", "vector_norm", "l1_normalize", "linf_normalize"}) {
      if (EmbedNormExtensions.sparkHasBuiltin(function)) {
        continue; // Spark's own text
      }
      String text =
          String.join(
              "\n",
              spark
                  .sql("DESCRIBE FUNCTION EXTENDED " + function)
                  .as(org.apache.spark.sql.Encoders.STRING())
                  .collectAsList());
      assertThat(text).as(function).contains("Usage: " + function + "(x").contains("Examples:");
    }
  }

  /** Spark ML's Normalizer with {@code p} on the double rows of {@code view}, by id. */
  private static Map<Integer, double[]> sparkMlNormalizer(String view, double p) {
    Dataset<Row> vectors = spark.table(view).withColumn("v", functions.array_to_vector(col("x")));
    Dataset<Row> normalized =
        new Normalizer().setInputCol("v").setOutputCol("y").setP(p).transform(vectors);
    Map<Integer, double[]> result = new java.util.HashMap<>();
    for (Row row : normalized.select("id", "y").collectAsList()) {
      result.put(row.getInt(0), ((Vector) row.get(1)).toArray());
    }
    return result;
  }

  private static double[] reference(String type, int id, double p) {
    Double[] row = type.equals("float") ? TestData.roundToFloat(rows.get(id)) : rows.get(id);
    return Reference.compute(function(p), row, 1e-12, null, null);
  }

  private static String function(double p) {
    return p == 1 ? "l1_normalize" : p == 2 ? "l2_normalize" : "linf_normalize";
  }

  /** From Spark 4.2 on, {@code vector_norm} is Spark's own and embednorm does not replace it. */
  private static void assumeEmbednormsVectorNorm() {
    assumeFalse(
        EmbedNormExtensions.sparkHasBuiltin("vector_norm"),
        "this Spark has vector_norm built in, and it stays Spark's");
  }
}

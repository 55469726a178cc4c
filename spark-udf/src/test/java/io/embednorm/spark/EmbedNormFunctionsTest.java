package io.embednorm.spark;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The DataFrame functions, in a session without {@link EmbedNormExtensions}. */
class EmbedNormFunctionsTest {
  private static final int WIDTH = 768;
  private static final double[] WEIGHT = constants(TestData.SEED + 3, 0.5, 1.5);
  private static final double[] BIAS = constants(TestData.SEED + 4, -1, 1);

  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(false);
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  /** Each overload with the reference parameters it stands for. */
  static Stream<Arguments> overloads() {
    return Stream.of(
        overload("rmsNorm(x)", EmbedNormFunctions::rmsNorm, "rms_norm", 1e-6, null, null),
        overload(
            "rmsNorm(x, eps)",
            x -> EmbedNormFunctions.rmsNorm(x, 1e-2),
            "rms_norm",
            1e-2,
            null,
            null),
        overload(
            "rmsNorm(x, eps, weight)",
            x -> EmbedNormFunctions.rmsNorm(x, 1e-2, WEIGHT),
            "rms_norm",
            1e-2,
            WEIGHT,
            null),
        overload("layerNorm(x)", EmbedNormFunctions::layerNorm, "layer_norm", 1e-5, null, null),
        overload(
            "layerNorm(x, eps)",
            x -> EmbedNormFunctions.layerNorm(x, 1e-2),
            "layer_norm",
            1e-2,
            null,
            null),
        overload(
            "layerNorm(x, eps, gamma)",
            x -> EmbedNormFunctions.layerNorm(x, 1e-2, WEIGHT),
            "layer_norm",
            1e-2,
            WEIGHT,
            null),
        overload(
            "layerNorm(x, eps, gamma, beta)",
            x -> EmbedNormFunctions.layerNorm(x, 1e-2, WEIGHT, BIAS),
            "layer_norm",
            1e-2,
            WEIGHT,
            BIAS),
        overload("softmax(x)", EmbedNormFunctions::softmax, "softmax", Double.NaN, null, null),
        overload(
            "logSoftmax(x)", EmbedNormFunctions::logSoftmax, "log_softmax", Double.NaN, null, null),
        overload(
            "l2Normalize(x)", EmbedNormFunctions::l2Normalize, "l2_normalize", 1e-12, null, null),
        overload(
            "l2Normalize(x, eps)",
            x -> EmbedNormFunctions.l2Normalize(x, 10.0),
            "l2_normalize",
            10.0,
            null,
            null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("overloads")
  void overloadsMatchReference(
      String name,
      Function<Column, Column> function,
      String sqlName,
      double epsilon,
      double[] weight,
      double[] bias) {
    for (String type : new String[] {"float", "double"}) {
      List<Double[]> rows =
          TestData.randomRows(type, TestData.SEED + 5).stream()
              .filter(row -> row.length == WIDTH)
              .collect(Collectors.toList());
      rows.add(null);
      rows.add(new Double[0]);
      Dataset<Row> result =
          TestData.frame(spark, type, rows).select(col("id"), function.apply(col("x")));
      assertThat(result.columns()[1]).startsWith(sqlName + "(x");
      Map<Integer, List<?>> actual = Results.byId(result);
      boolean asFloat = type.equals("float");
      for (int id = 0; id < rows.size(); id++) {
        String context =
            String.format(
                Locale.ROOT, "seed %d, %s on array<%s>, row %d", TestData.SEED + 5, name, type, id);
        double[] expected =
            Reference.compute(
                sqlName, rows.get(id), epsilon, round(weight, asFloat), round(bias, asFloat));
        Accuracy.of(type).assertRow(context, actual.get(id), expected);
      }
    }
  }

  @Test
  void columnNamesReadLikeSql() {
    Dataset<Row> frame = TestData.frame(spark, "float", List.<Double[]>of(new Double[] {1.0}));
    assertThat(frame.select(EmbedNormFunctions.rmsNorm(col("x"))).columns())
        .containsExactly("rms_norm(x)");
    assertThat(frame.select(EmbedNormFunctions.l2Normalize(col("x"), 0.5)).columns())
        .containsExactly("l2_normalize(x, 0.5)");
  }

  @Test
  void worksWithoutTheExtension() {
    assertThatThrownBy(() -> spark.sql("SELECT rms_norm(array(1.0))"))
        .isInstanceOf(AnalysisException.class)
        .hasMessageContaining("rms_norm");
  }

  private static Arguments overload(
      String name,
      Function<Column, Column> function,
      String sqlName,
      double epsilon,
      double[] weight,
      double[] bias) {
    return Arguments.of(name, function, sqlName, epsilon, weight, bias);
  }

  private static double[] constants(long seed, double low, double high) {
    Random random = new Random(seed);
    double[] values = new double[WIDTH];
    for (int i = 0; i < WIDTH; i++) {
      values[i] = low + (high - low) * random.nextDouble();
    }
    return values;
  }

  private static double[] round(double[] values, boolean toFloat) {
    if (values == null || !toFloat) {
      return values;
    }
    double[] result = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      result[i] = (float) values[i];
    }
    return result;
  }
}

package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every SQL function on seeded random rows (ragged, widths 1 to 32769) and on the edge cases of
 * docs/SEMANTICS.md, on float and double arrays, on the row path (interpreted and code-generated)
 * and in the columnar operator (rows batched by it), against the float64 reference.
 */
class EmbedNormSqlAccuracyTest {
  private static final String[] FUNCTIONS = {
    "rms_norm",
    "layer_norm",
    "softmax",
    "log_softmax",
    "l2_normalize",
    "l1_normalize",
    "linf_normalize"
  };
  private static final String[] ELEMENT_TYPES = {"float", "double"};
  private static final int CONSTANTS_WIDTH = 33;

  private static final Map<String, List<Double[]>> RANDOM_ROWS = new HashMap<>();
  private static final Map<String, List<Double[]>> EDGE_ROWS = new HashMap<>();
  private static final Map<String, List<Double[]>> CONSTANTS_ROWS = new HashMap<>();

  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(true);
    for (String type : ELEMENT_TYPES) {
      RANDOM_ROWS.put(type, TestData.randomRows(type, TestData.SEED));
      EDGE_ROWS.put(type, TestData.edgeRows(type));
      List<Double[]> constantsRows =
          TestData.randomRows(type, TestData.SEED + 1).stream()
              .filter(row -> row.length == CONSTANTS_WIDTH)
              .collect(Collectors.toList());
      constantsRows.add(null);
      constantsRows.add(new Double[0]);
      CONSTANTS_ROWS.put(type, constantsRows);
      TestData.frame(spark, type, RANDOM_ROWS.get(type)).createOrReplaceTempView("random_" + type);
      TestData.frame(spark, type, EDGE_ROWS.get(type)).createOrReplaceTempView("edge_" + type);
      TestData.frame(spark, type, constantsRows).createOrReplaceTempView("constants_" + type);
    }
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  static Stream<Arguments> allFunctions() {
    Stream.Builder<Arguments> cases = Stream.builder();
    for (String function : FUNCTIONS) {
      for (String type : ELEMENT_TYPES) {
        for (ExecutionMode mode : ExecutionMode.values()) {
          cases.add(Arguments.of(function, type, mode));
        }
      }
    }
    return cases.build();
  }

  static Stream<Arguments> functionsWithConstants() {
    return allFunctions().filter(arguments -> !arguments.get()[0].toString().contains("softmax"));
  }

  @ParameterizedTest(name = "{0}(array<{1}>), {2}")
  @MethodSource("allFunctions")
  void randomRowsMatchReference(String function, String type, ExecutionMode mode) {
    Dataset<Row> result =
        check(function, type, mode, "random_" + type, RANDOM_ROWS.get(type), "x", null, null);
    ArrayType outputType = (ArrayType) result.schema().apply("y").dataType();
    assertThat(outputType.elementType())
        .isEqualTo(type.equals("float") ? DataTypes.FloatType : DataTypes.DoubleType);
    assertThat(outputType.containsNull()).isFalse();
  }

  @ParameterizedTest(name = "{0}(array<{1}>), {2}")
  @MethodSource("allFunctions")
  void edgeCasesMatchReference(String function, String type, ExecutionMode mode) {
    check(function, type, mode, "edge_" + type, EDGE_ROWS.get(type), "x", null, null);
  }

  @ParameterizedTest(name = "{0}(array<{1}>) with constants, {2}")
  @MethodSource("functionsWithConstants")
  void constantsMatchReference(String function, String type, ExecutionMode mode) {
    Random random = new Random(TestData.SEED + 2);
    double[] weight = randomConstants(random, 0.5, 1.5);
    double[] bias = randomConstants(random, -1, 1);
    String arguments;
    switch (function) {
      case "rms_norm":
        arguments = "x, 1e-3, " + arrayLiteral(weight);
        bias = null;
        break;
      case "layer_norm":
        arguments = "x, 1e-3, " + arrayLiteral(weight) + ", " + arrayLiteral(bias);
        break;
      default:
        arguments = "x, 1e-3";
        weight = null;
        bias = null;
    }
    if (type.equals("float")) {
      weight = roundToFloat(weight);
      bias = roundToFloat(bias);
    }
    check(
        function,
        type,
        mode,
        "constants_" + type,
        CONSTANTS_ROWS.get(type),
        arguments,
        weight,
        bias);
  }

  private static Dataset<Row> check(
      String function,
      String type,
      ExecutionMode mode,
      String view,
      List<Double[]> rows,
      String arguments,
      double[] weight,
      double[] bias) {
    mode.apply(spark);
    double epsilon = arguments.equals("x") ? Reference.defaultEpsilon(function) : 1e-3;
    Dataset<Row> result =
        spark.sql("SELECT id, " + function + "(" + arguments + ") AS y FROM " + view);
    assertThat(result.queryExecution().executedPlan().toString())
        .as("the physical plan keeps the expression")
        .contains(function + "(");
    String method = "RowNormalizer.normalize" + (type.equals("float") ? "Floats" : "Doubles");
    assertThat(result.queryExecution().executedPlan().toString().contains("EmbedNormProject"))
        .as("the columnar operator is planned")
        .isEqualTo(mode == ExecutionMode.COLUMNAR);
    if (mode == ExecutionMode.CODEGEN) {
      assertThat(Results.generatedCode(result)).contains(method);
    } else {
      assertThat(Results.generatedCode(result)).doesNotContain("RowNormalizer");
    }
    Map<Integer, List<?>> actual = Results.byId(result);
    assertThat(actual).hasSize(rows.size());
    for (int id = 0; id < rows.size(); id++) {
      Double[] row = rows.get(id);
      String context =
          String.format(
              Locale.ROOT,
              "seed %d, %s(array<%s>) %s, %s row %d (width %s)",
              TestData.SEED,
              function,
              type,
              mode,
              view,
              id,
              row == null ? "null" : row.length);
      Accuracy.of(type)
          .assertRow(
              context, actual.get(id), Reference.compute(function, row, epsilon, weight, bias));
    }
    return result;
  }

  private static double[] randomConstants(Random random, double low, double high) {
    double[] values = new double[CONSTANTS_WIDTH];
    for (int i = 0; i < values.length; i++) {
      values[i] = low + (high - low) * random.nextDouble();
    }
    return values;
  }

  private static String arrayLiteral(double[] values) {
    StringBuilder literal = new StringBuilder("array(");
    for (int i = 0; i < values.length; i++) {
      literal.append(i == 0 ? "" : ", ").append(values[i]).append('D');
    }
    return literal.append(')').toString();
  }

  private static double[] roundToFloat(double[] values) {
    if (values == null) {
      return null;
    }
    double[] result = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      result[i] = (float) values[i];
    }
    return result;
  }
}

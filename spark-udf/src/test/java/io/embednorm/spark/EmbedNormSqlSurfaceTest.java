package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.embednorm.engine.Op;
import io.embednorm.spark.internal.FunctionDocumentation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The SQL surface: registration, documentation, temp views, implicit casts, constants and the
 * errors users see.
 */
class EmbedNormSqlSurfaceTest {
  private static final String FIVE_FLOATS = "VALUES (array(1.0f, 2.0f, 3.0f, 4.0f, 5.0f)) AS t(x)";

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
  void literalArraysGiveReferenceValues() {
    Dataset<Row> result =
        spark.sql(
            "SELECT rms_norm(array(3.0f, 4.0f)), layer_norm(array(1.0D, 2.0D)),"
                + " softmax(array(0.0f, 0.0f))");
    assertThat(result.columns()[0]).startsWith("rms_norm(");
    assertThat(result.columns()[1]).startsWith("layer_norm(");
    assertThat(result.columns()[2]).startsWith("softmax(");
    assertThat(elementTypes(result)).containsExactly("float", "double", "float");
    Row row = result.collectAsList().get(0);
    Accuracy.FLOAT.assertRow(
        "rms_norm",
        row.getList(0),
        Reference.compute("rms_norm", new double[] {3, 4}, 1e-6, null, null));
    Accuracy.DOUBLE.assertRow(
        "layer_norm",
        row.getList(1),
        Reference.compute("layer_norm", new double[] {1, 2}, 1e-5, null, null));
    Accuracy.FLOAT.assertRow("softmax", row.getList(2), new double[] {0.5, 0.5});
  }

  @ParameterizedTest(name = "ANSI mode {0}")
  @ValueSource(booleans = {true, false})
  void otherNumericArraysAreCastImplicitly(boolean ansi) {
    spark.conf().set("spark.sql.ansi.enabled", ansi);
    try {
      Dataset<Row> result =
          spark.sql(
              "SELECT rms_norm(array(1, 2, 3)), l2_normalize(array(3.0, 4.0)),"
                  + " rms_norm(array(1.0f, 2.0f), 0.001, array(1.5, 2.5)),"
                  + " layer_norm(array(1L, 2L), 0, array(2.0D, 2.0D), array(1, 1))");
      assertThat(elementTypes(result)).containsExactly("double", "double", "float", "double");
      Row row = result.collectAsList().get(0);
      Accuracy.DOUBLE.assertRow(
          "rms_norm(array<int>)",
          row.getList(0),
          Reference.compute("rms_norm", new double[] {1, 2, 3}, 1e-6, null, null));
      Accuracy.DOUBLE.assertRow(
          "l2_normalize(array<decimal>)", row.getList(1), new double[] {0.6, 0.8});
      Accuracy.FLOAT.assertRow(
          "rms_norm(array<float>, decimal eps, array<decimal>)",
          row.getList(2),
          Reference.compute("rms_norm", new double[] {1, 2}, 0.001, new double[] {1.5, 2.5}, null));
      Accuracy.DOUBLE.assertRow(
          "layer_norm(array<bigint>, ...)", row.getList(3), new double[] {-1, 3});
    } finally {
      spark.conf().unset("spark.sql.ansi.enabled");
    }
  }

  @Test
  void nullAndEmptyLiteralsPassThrough() {
    Dataset<Row> result =
        spark.sql("SELECT rms_norm(null), softmax(cast(array() AS array<float>))");
    assertThat(elementTypes(result)).containsExactly("double", "float");
    Row row = result.collectAsList().get(0);
    assertThat(row.isNullAt(0)).isTrue();
    assertThat(row.getList(1)).isEmpty();
  }

  /**
   * The row path says "a row"; the columnar operator names the row counted from its batch's first.
   */
  @Test
  void weightLengthMismatchNamesFunctionAndLengths() {
    Throwable failure =
        catchThrowable(
            () ->
                spark
                    .sql("SELECT rms_norm(x, 1e-6, array(1.0, 1.0, 1.0, 1.0)) FROM " + FIVE_FLOATS)
                    .collectAsList());
    assertThat(Results.messages(failure))
        .containsPattern(
            "Cannot apply rms_norm to (a row( of partition \\d+)?|row 0): weight has 4 elements but the row has 5");
  }

  @Test
  void biasLengthMismatchNamesFunctionAndLengths() {
    Throwable failure =
        catchThrowable(
            () ->
                spark
                    .sql(
                        "SELECT layer_norm(x, 1e-5, array(1, 1, 1, 1, 1), array(0, 0, 0)) FROM "
                            + FIVE_FLOATS)
                    .collectAsList());
    assertThat(Results.messages(failure))
        .containsPattern(
            "Cannot apply layer_norm to (a row( of partition \\d+)?|row 0): beta has 3 elements but the row has 5");
  }

  /** Issue 29, finding 7: layer_norm's gamma used to be called "weight" in this message. */
  @Test
  void gammaLengthMismatchCallsItGamma() {
    Throwable failure =
        catchThrowable(
            () ->
                spark
                    .sql("SELECT layer_norm(x, 1e-5, array(1, 1, 1)) FROM " + FIVE_FLOATS)
                    .collectAsList());
    assertThat(Results.messages(failure))
        .containsPattern(
            "Cannot apply layer_norm to (a row( of partition \\d+)?|row 0): gamma has 3 elements but the row has 5");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "rms_norm(x, 1e-6, array(1.0), array(1.0))"
            + "|rms_norm takes 1 to 3 arguments, as in rms_norm(x [, eps [, weight]]), but got 4",
        "layer_norm(x, 1e-5, array(1.0), array(1.0), 1)|layer_norm takes 1 to 4 arguments, as in"
            + " layer_norm(x [, eps [, gamma [, beta]]]), but got 5",
        "softmax(x, 1e-6)|softmax takes exactly 1 argument, as in softmax(x), but got 2",
        "log_softmax()|log_softmax takes exactly 1 argument, as in log_softmax(x), but got 0",
        "l2_normalize(x, 1e-12, array(1.0))"
            + "|l2_normalize takes 1 to 2 arguments, as in l2_normalize(x [, eps]), but got 3",
        "rms_norm(x, x[0])|the input `eps` should be a foldable \"DOUBLE\" expression",
        "layer_norm(x, 1e-5, x)|the input `gamma` should be a foldable \"ARRAY<FLOAT>\" expression",
        "rms_norm(x, null)|Cannot configure rms_norm: eps must not be null",
        "rms_norm(x, 1e-6, null)|Cannot configure rms_norm: weight must not be null",
        "layer_norm(x, 1e-5, array(1, 1, 1, 1, 1), array(0, null, 0, 0, 0))"
            + "|Cannot configure layer_norm: beta has a null element at index 1",
        "l2_normalize(x, -1.0)|Cannot configure l2_normalize: eps must be a finite number >= 0",
        "rms_norm(x, cast('NaN' AS double))"
            + "|Cannot configure rms_norm: eps must be a finite number >= 0, got NaN",
        "rms_norm(x, 1e-6, array(1, 1, 1, 1, cast('Infinity' AS double)))"
            + "|Cannot configure rms_norm: weight element at index 4 is Infinity; it must be a"
            + " finite number",
        "layer_norm(x, 1e-5, array(1, 1, cast('NaN' AS float), 1, 1))"
            + "|Cannot configure layer_norm: gamma element at index 2 is NaN",
        "layer_norm(x, 1e-5, array(1, 1, 1, 1, 1), array(0, cast('-Infinity' AS double), 0, 0, 0))"
            + "|Cannot configure layer_norm: beta element at index 1 is -Infinity",
        "rms_norm('text')|rms_norm",
      })
  void invalidCallsFailAnalysis(String call, String message) {
    assertThatThrownBy(() -> spark.sql("SELECT " + call + " FROM " + FIVE_FLOATS))
        .isInstanceOf(AnalysisException.class)
        .hasMessageContaining(message);
  }

  @ParameterizedTest
  @EnumSource(Op.class)
  void describeFunctionExtendedShowsUsageAndExamples(Op op) {
    String name = op.sqlName();
    String description =
        spark.sql("DESCRIBE FUNCTION EXTENDED " + name).collectAsList().stream()
            .map(row -> row.getString(0))
            .collect(Collectors.joining("\n"));
    assertThat(description)
        .contains("Function: " + name)
        .contains("Class: io.embednorm.spark.catalyst.EmbedNormExpression")
        .contains("Usage: " + name + "(x")
        .contains("Arguments:")
        .contains("Examples:")
        .contains("> SELECT " + name + "(array(")
        .contains("Since: 0.1.0");
  }

  @ParameterizedTest
  @EnumSource(Op.class)
  void documentedExamplesGiveDocumentedResults(Op op) {
    Matcher example =
        Pattern.compile("> SELECT (.*);\\n\\s*\\[(.*)]")
            .matcher(FunctionDocumentation.describe(op).getExamples());
    int examples = 0;
    while (example.find()) {
      examples++;
      double[] documented =
          Arrays.stream(example.group(2).split(",")).mapToDouble(Double::parseDouble).toArray();
      List<?> actual = spark.sql("SELECT " + example.group(1)).collectAsList().get(0).getList(0);
      Accuracy.FLOAT.assertRow(example.group(1), actual, documented);
    }
    assertThat(examples).isPositive();
  }

  @Test
  void showFunctionsListsThemAll() {
    assertThat(functionNames("SHOW FUNCTIONS LIKE 'rms*'")).contains("rms_norm");
    List<String> all = new ArrayList<>();
    for (Op op : Op.values()) {
      all.addAll(functionNames("SHOW FUNCTIONS LIKE '" + op.sqlName() + "'"));
    }
    assertThat(all)
        .containsExactlyInAnyOrder(
            "rms_norm",
            "layer_norm",
            "softmax",
            "log_softmax",
            "l2_normalize",
            "l1_normalize",
            "linf_normalize");
    assertThat(functionNames("SHOW FUNCTIONS LIKE 'lp_normalize|vector_norm'"))
        .containsExactlyInAnyOrder("lp_normalize", "vector_norm");
  }

  @Test
  void temporaryViewsUseTheFunctions() {
    spark.sql(
        "CREATE OR REPLACE TEMPORARY VIEW normalized AS"
            + " SELECT l2_normalize(x) AS y, log_softmax(x) AS z"
            + " FROM VALUES (array(3.0f, 4.0f)) AS t(x)");
    Row row = spark.sql("SELECT y, z FROM normalized").collectAsList().get(0);
    Accuracy.FLOAT.assertRow("l2_normalize in a view", row.getList(0), new double[] {0.6, 0.8});
    Accuracy.FLOAT.assertRow(
        "log_softmax in a view",
        row.getList(1),
        Reference.compute("log_softmax", new double[] {3, 4}, Double.NaN, null, null));
  }

  private static List<String> functionNames(String query) {
    return spark.sql(query).collectAsList().stream()
        .map(row -> row.getString(0))
        .collect(Collectors.toList());
  }

  private static List<String> elementTypes(Dataset<Row> result) {
    return Arrays.stream(result.schema().fields())
        .map(field -> ((ArrayType) field.dataType()).elementType())
        .map(type -> type.equals(DataTypes.FloatType) ? "float" : type.simpleString())
        .collect(Collectors.toList());
  }
}

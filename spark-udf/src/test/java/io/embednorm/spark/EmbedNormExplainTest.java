package io.embednorm.spark;

import static io.embednorm.spark.EmbedNormFunctions.rmsNorm;
import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Op;
import io.embednorm.spark.catalyst.EmbedNormExpression;
import io.embednorm.spark.execution.ColumnarProjection;
import io.embednorm.spark.execution.EmbedNormColumnarRule;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.execution.ExplainMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.util.Either;
import scala.util.Left;

/**
 * What {@code spark.embednorm.explain} adds to {@code EXPLAIN}: where the columnar operator runs
 * (GPU or CPU engine, and why), and, next to each call left on the CPU row path, the reason, for
 * every reason {@link ColumnarProjection#plan} gives; nothing without the setting.
 */
class EmbedNormExplainTest {
  private static final String FORMATTED = "formatted";
  private static final String SIMPLE = "simple";

  @TempDir static Path directory;

  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(true);
    List<Double[]> rows = new ArrayList<>(TestData.randomRows("float", TestData.SEED));
    rows.addAll(TestData.edgeRows("float"));
    TestData.frame(spark, "float", rows).createOrReplaceTempView("frame");
    TestData.parquetView(
        spark,
        spark.sql(
            "SELECT id, x, transform(x, v -> CAST(v AS DOUBLE)) AS d,"
                + " array(CAST(id AS INT), 2) AS ints FROM frame"),
        directory.resolve("embeddings"),
        "embeddings");
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @AfterEach
  void resetSettings() {
    for (EmbedNormConfig.Entry<?> entry :
        List.of(EmbedNormConfig.EXPLAIN, EmbedNormConfig.COLUMNAR, EmbedNormConfig.DEVICE)) {
      spark.conf().unset(entry.name());
    }
  }

  @ParameterizedTest(name = "device {0}")
  @ValueSource(strings = {"auto", "cpu"})
  void explainSaysWhereTheColumnarOperatorRunsAndWhy(String device) {
    spark.conf().set(EmbedNormConfig.DEVICE.name(), device);
    spark.conf().set(EmbedNormConfig.EXPLAIN.name(), "true");
    Dataset<Row> result =
        spark.sql("SELECT id, l2_normalize(rms_norm(x)) AS y, softmax(x) AS s FROM embeddings");
    String reason = Engines.gpuUnavailableReason();
    String placement =
        device.equals("cpu")
            ? "on the CPU engine (cpu was requested)"
            : reason == null
                ? "on the GPU (auto: the driver has a usable GPU; an executor without one uses its"
                    + " CPU engine, and batches under 1024 KiB of elements run on the CPU engine,"
                    + " which finishes them sooner)"
                : "on the CPU engine (auto: no usable GPU: " + reason + ")";
    String functions = "embednorm runs rms_norm, l2_normalize over x; softmax over x " + placement;
    assertThat(explain(result, SIMPLE))
        .contains("EmbedNormProject [id#")
        .contains("(" + functions + ")")
        .doesNotContain("CPU row path");
    assertThat(explain(result, FORMATTED)).contains("Placement: " + functions);
  }

  /**
   * {@code gpu} with no usable GPU fails at analysis (DeviceSettingTest); a DataFrame analyzed
   * before the setting changed is planned for the GPU, and explain says that it will fail.
   */
  @Test
  void explainOfGpuWithoutAUsableGpuSaysThatExecutorsWithoutOneFail() {
    Dataset<Row> analyzedUnderAuto = spark.table("embeddings").select(rmsNorm(col("x")));
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "gpu");
    spark.conf().set(EmbedNormConfig.EXPLAIN.name(), "true");
    String reason = Engines.gpuUnavailableReason();
    String placement =
        reason == null
            ? "on the GPU (gpu was requested)"
            : "on the GPU (gpu was requested, but the driver has no usable GPU: "
                + reason
                + "; an executor without one fails the query)";
    assertThat(explain(analyzedUnderAuto, SIMPLE))
        .contains("(embednorm runs rms_norm over x " + placement + ")");
    if (reason != null) {
      Throwable failure = catchThrowable(() -> spark.sql("SELECT rms_norm(x) FROM embeddings"));
      assertThat(failure)
          .isInstanceOf(EmbedNormException.class)
          .hasMessageStartingWith("Cannot run rms_norm with spark.embednorm.device=gpu");
    }
  }

  /** Queries the columnar operator does not take, and the reason explain gives for each. */
  static Stream<Arguments> rowPathQueries() {
    return Stream.of(
        Arguments.of(
            "SELECT id, size(rms_norm(x)) AS n FROM embeddings",
            "size(rms_norm(x)) applies another function to an embednorm result, which the"
                + " columnar operator does not evaluate"),
        Arguments.of(
            "SELECT id + 1 AS next, rms_norm(x) AS y FROM embeddings",
            "(id + 1) is neither a column nor an embednorm function"),
        Arguments.of(
            "SELECT rms_norm(transform(x, v -> v * 2)) AS y FROM embeddings",
            "the input of rms_norm is transform(x, lambdafunction((namedlambdavariable() * 2.0),"
                + " namedlambdavariable())), not a column (the columnar operator takes"
                + " array<float> or array<double> columns)"),
        Arguments.of(
            "SELECT id, rms_norm(ints) AS y FROM embeddings",
            "the input of rms_norm is ints cast to ARRAY<DOUBLE>, not a column (the columnar"
                + " operator takes array<float> or array<double> columns)"),
        Arguments.of(
            "SELECT id FROM embeddings WHERE size(l2_normalize(d)) > 3",
            "Filter evaluates it, and the columnar operator takes projections only"),
        Arguments.of(
            "SELECT sum(size(softmax(x))) AS total FROM embeddings",
            "HashAggregate evaluates it, and the columnar operator takes projections only"));
  }

  /**
   * Each query runs before its plan is explained: with an exchange (the aggregate), adaptive
   * execution applies columnar rules only as it runs, so its plan shows them once executed.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("rowPathQueries")
  void explainShowsWhyACallStaysOnTheRowPath(String query, String reason) {
    Dataset<Row> plain = spark.sql(query);
    List<String> plainRows = strings(plain);
    String plainPlan = explain(plain, SIMPLE);
    spark.conf().set(EmbedNormConfig.EXPLAIN.name(), "true");
    String note = "[CPU row path: " + reason + "]";
    try (LogCapture log = LogCapture.of(EmbedNormColumnarRule.class)) {
      Dataset<Row> result = spark.sql(query);
      assertThat(strings(result)).as("results with the note").isEqualTo(plainRows);
      String plan = explain(result, SIMPLE);
      assertThat(plan).contains(note).doesNotContain("EmbedNormProject");
      assertThat(codegenStages(plan)).as(plan).isEqualTo(codegenStages(plainPlan));
      assertThat(explain(result, FORMATTED)).contains(note);
      if (!reason.contains(" evaluates it")) {
        assertThat(String.join("\n", log.messages()))
            .contains("stays on the CPU row path: " + reason);
      }
    }
  }

  @Test
  void explainSaysWhenTheColumnarOperatorIsOff() {
    spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "false");
    spark.conf().set(EmbedNormConfig.EXPLAIN.name(), "true");
    Dataset<Row> result = spark.sql("SELECT id, l2_normalize(rms_norm(x)) AS y FROM embeddings");
    // The note goes on the outermost call of a chain only.
    assertThat(explain(result, SIMPLE))
        .contains("l2_normalize(rms_norm(x#")
        .containsOnlyOnce("[CPU row path: spark.embednorm.columnar is false]")
        .doesNotContain("EmbedNormProject");
  }

  @Test
  void withoutTheExplainSettingNothingIsAdded() {
    List<String> queries = new ArrayList<>();
    rowPathQueries().forEach(arguments -> queries.add((String) arguments.get()[0]));
    queries.add("SELECT id, rms_norm(x) AS y FROM embeddings");
    for (String mode : List.of(SIMPLE, FORMATTED)) {
      for (String query : queries) {
        assertThat(explain(spark.sql(query), mode))
            .as(query)
            .doesNotContain("CPU row path")
            .doesNotContain("embednorm runs")
            .doesNotContain("Placement:");
      }
    }
  }

  /** The note is for people: annotated and plain calls are the same computation to Spark. */
  @Test
  void thePlacementNoteChangesOnlyTheStringForm() {
    Attribute x = attribute("x");
    EmbedNormExpression plain = EmbedNormExpression.create(Op.RMS_NORM, List.of(x));
    EmbedNormExpression annotated = plain.withPlacementNote("CPU row path: why");
    assertThat(annotated.toString()).isEqualTo(plain + " [CPU row path: why]");
    assertThat(annotated.sql()).isEqualTo(plain.sql());
    assertThat(annotated.semanticEquals(plain)).isTrue();
    assertThat(annotated.semanticHash()).isEqualTo(plain.semanticHash());
    assertThat(annotated.canonicalized()).isEqualTo(plain.canonicalized());
    assertThat(annotated.withPlacementNote("CPU row path: other").toString())
        .isEqualTo(plain + " [CPU row path: other]");
    Expression rebuilt = annotated.withNewChildren(toSeq(List.of(attribute("d"))));
    assertThat(rebuilt.toString()).endsWith(" [CPU row path: why]");
  }

  /**
   * Reasons no analyzed plan gives (the rule only looks at projections that use the functions, and
   * analysis casts other arrays), checked on the planner directly.
   */
  @Test
  void theOtherReasonsOfThePlanner() {
    Attribute ints = attribute("ints");
    Seq<Attribute> input = toSeq(List.of(attribute("id"), attribute("x"), ints));
    assertThat(reason(plan(List.of(attribute("id")), input)))
        .isEqualTo("it projects no embednorm function directly");
    Expression uncast = EmbedNormExpression.create(Op.RMS_NORM, List.of(ints));
    assertThat(reason(plan(List.of(alias(uncast)), input)))
        .isEqualTo("the input of rms_norm, ints, is ARRAY<INT>, not array<float> or array<double>");
    Attribute elsewhere = spark.range(1).queryExecution().analyzed().output().head();
    assertThat(reason(plan(List.of(elsewhere), input)))
        .isEqualTo("id is not a column of the projection's input");
    Expression overElsewhere =
        EmbedNormExpression.create(
            Op.RMS_NORM,
            List.of(spark.table("frame").queryExecution().analyzed().output().apply(1)));
    assertThat(reason(plan(List.of(alias(overElsewhere)), input)))
        .isEqualTo("x is not a column of the projection's input");
  }

  private static String explain(Dataset<Row> result, String mode) {
    return result.queryExecution().explainString(ExplainMode.fromString(mode));
  }

  /** The rows as sorted strings: NaN elements make rows unequal to themselves. */
  private static List<String> strings(Dataset<Row> result) {
    return result.collectAsList().stream().map(Row::toString).sorted().toList();
  }

  /** The whole-stage code generation markers ({@code *(1) Project}) of a simple plan. */
  private static List<String> codegenStages(String plan) {
    return plan.lines()
        .map(line -> line.replaceAll("^[ +\\-:]*", ""))
        .filter(line -> line.startsWith("*("))
        .map(line -> line.replaceAll("^(\\*\\(\\d+\\) \\S+).*$", "$1"))
        .toList();
  }

  private static Attribute attribute(String name) {
    Seq<Attribute> output = spark.table("embeddings").queryExecution().analyzed().output();
    return CollectionConverters.asJava(output).stream()
        .filter(column -> column.name().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static Alias alias(Expression child) {
    return new Alias(
        child,
        "y",
        NamedExpression$.MODULE$.newExprId(),
        toSeq(List.of()),
        Option.empty(),
        toSeq(List.of()));
  }

  @SuppressWarnings("unchecked")
  private static Either<String, ?> plan(List<? extends NamedExpression> projectList, Seq<?> input) {
    return ColumnarProjection.plan(
        (Seq<NamedExpression>) (Seq<?>) toSeq(projectList), (Seq<Attribute>) input);
  }

  private static String reason(Either<String, ?> planned) {
    assertThat(planned.isLeft()).as(String.valueOf(planned)).isTrue();
    return ((Left<String, ?>) planned).value();
  }

  private static <T> Seq<T> toSeq(List<T> values) {
    return CollectionConverters.asScala(values).toSeq();
  }
}

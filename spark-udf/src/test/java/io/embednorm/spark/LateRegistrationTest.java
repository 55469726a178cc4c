package io.embednorm.spark;

import static org.apache.spark.sql.functions.call_function;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.Op;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link EmbedNormExtensions#register} on a session built without the extension, as in a notebook:
 * the functions resolve by name in SQL, {@code expr} and {@code call_function}, give the
 * reference's values on the row path, and stay in that session only.
 */
class LateRegistrationTest {
  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(false);
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @Test
  void registeredFunctionsMatchReferenceOnTheRowPath() {
    EmbedNormExtensions.register(spark);
    long seed = TestData.SEED + 11;
    for (String type : new String[] {"float", "double"}) {
      List<Double[]> rows = TestData.randomRows(type, seed);
      List<Column> columns = new ArrayList<>(List.of(col("id")));
      for (Op op : Op.values()) {
        columns.add(expr(op.sqlName() + "(x)"));
        columns.add(call_function(op.sqlName(), col("x")));
      }
      Dataset<Row> result =
          TestData.frame(spark, type, rows).select(columns.toArray(Column[]::new));
      assertThat(Results.find(result.queryExecution().executedPlan(), EmbedNormProjectExec.class))
          .as("columnar operator in a session without the extension")
          .isNull();
      List<Row> collected = result.collectAsList();
      assertThat(collected).hasSize(rows.size());
      for (Row row : collected) {
        int id = row.getInt(0);
        for (int column = 1; column < columns.size(); column++) {
          String name = Op.values()[(column - 1) / 2].sqlName();
          String context =
              String.format(
                  Locale.ROOT,
                  "seed %d, %s on array<%s>, row %d",
                  seed,
                  result.columns()[column],
                  type,
                  id);
          double[] expected =
              Reference.compute(name, rows.get(id), Reference.defaultEpsilon(name), null, null);
          Accuracy.of(type)
              .assertRow(context, row.isNullAt(column) ? null : row.getList(column), expected);
        }
      }
    }
  }

  @Test
  void registrationIsPerSessionAndDocumented() {
    SparkSession other = spark.newSession();
    assertThatThrownBy(() -> other.sql("SELECT rms_norm(array(3.0f, 4.0f))").collect())
        .isInstanceOf(AnalysisException.class)
        .hasMessageContaining("rms_norm");
    EmbedNormExtensions.register(other);
    EmbedNormExtensions.register(other);
    Row row = other.sql("SELECT l2_normalize(array(3.0D, 4.0D))").first();
    Accuracy.DOUBLE.assertRow("l2_normalize(3, 4)", row.getList(0), new double[] {0.6, 0.8});
    assertThat(other.sql("SHOW FUNCTIONS LIKE 'log_softmax'").collectAsList())
        .extracting(result -> result.getString(0))
        .containsExactly("log_softmax");
    assertThat(other.sql("DESCRIBE FUNCTION EXTENDED layer_norm").collectAsList())
        .extracting(result -> result.getString(0))
        .anySatisfy(line -> assertThat(line).contains("Since: " + "0.1.0"));
    assertThatThrownBy(() -> spark.newSession().sql("SELECT softmax(array(0.0f))").collect())
        .isInstanceOf(AnalysisException.class)
        .hasMessageContaining("softmax");
  }
}

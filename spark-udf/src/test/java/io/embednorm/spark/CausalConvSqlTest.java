package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.CausalConvolutionReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code causal_conv} in SQL (docs/SEMANTICS.md, Causal convolution): against the float64 reference
 * with a constant and a column kernel, and its nulls, empty sequences, ragged steps and DESCRIBE
 * FUNCTION text.
 */
class CausalConvSqlTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    System.out.println("CausalConvSqlTest seed " + SEED);
    spark = TestSessions.create(true);
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @Test
  void matchesTheFloat64ReferenceWithAConstantAndAColumnKernel() {
    Random random = new Random(SEED);
    int channels = 5;
    int kernelSteps = 12;
    float[][] w = CausalConvolutionReference.randomKernel(random, channels, kernelSteps);
    String kernel = literal(w);
    for (int steps : new int[] {1, 7, 12}) {
      float[] k = CausalConvolutionReference.randomSequence(random, steps, channels);
      String sequence = literal(reshape(k, steps, channels));
      for (String query :
          new String[] {
            "SELECT causal_conv(" + sequence + ", " + kernel + ", 0.5f)",
            "SELECT causal_conv(s, w, 0.5f) FROM (SELECT " + sequence + " s, " + kernel + " w)"
          }) {
        List<?> rows = (List<?>) firstValue(query);
        float[] out = new float[steps * channels];
        for (int t = 0; t < steps; t++) {
          List<?> step = (List<?>) rows.get(t);
          for (int c = 0; c < channels; c++) {
            out[t * channels + c] = (Float) step.get(c);
          }
        }
        assertThat(CausalConvolutionReference.firstOutsideBound(w, 0.5f, k, steps, out))
            .as("seed %d, %d steps: %s", SEED, steps, query)
            .isEqualTo(-1);
      }
    }
  }

  @Test
  void nullsGiveNullAndAnEmptySequenceGivesAnEmptyOne() {
    String w = "array(array(1f, 2f), array(3f, 4f))";
    assertThat(value("causal_conv(cast(null as array<array<float>>), " + w + ")")).isNull();
    assertThat(value("causal_conv(array(array(1f, 2f), null), " + w + ")")).isNull();
    assertThat(value("causal_conv(array(array(1f, cast(null as float))), " + w + ")")).isNull();
    assertThat(value("causal_conv(array(array(1f, 2f)), array(array(1f, 2f), null))")).isNull();
    assertThat(value("causal_conv(array(array(1f, 2f)), " + w + ", cast(null as float))")).isNull();
    assertThat((List<?>) value("causal_conv(cast(array() as array<array<float>>), " + w + ")"))
        .isEmpty();
  }

  @Test
  void nanPropagatesToLaterSteps() {
    List<?> out =
        (List<?>) value("causal_conv(array(array(1f), array(float('nan'))), array(array(1f, 1f)))");
    assertThat(((List<?>) out.get(0)).get(0)).isEqualTo(1f);
    assertThat((Float) ((List<?>) out.get(1)).get(0)).isNaN();
  }

  @Test
  void raggedStepsAndLongSequencesFailWithOneLine() {
    assertThatThrownBy(
            () ->
                value("causal_conv(array(array(1f, 2f), array(1f)), array(array(1f), array(2f)))"))
        .hasStackTraceContaining(
            "Cannot convolve a sequence with causal_conv: step 1 has 1 channels where the kernel"
                + " has 2");
    assertThatThrownBy(() -> value("causal_conv(array(array(1f), array(2f)), array(array(1f)))"))
        .hasStackTraceContaining(
            "Cannot convolve a sequence of 2 steps with causal_conv: the kernel has 1 steps");
    assertThatThrownBy(
            () -> value("causal_conv(array(array(1f)), array(array(1f), array(1f, 2f)))"))
        .hasStackTraceContaining(
            "Cannot convolve with causal_conv: cannot make a convolution kernel");
  }

  @Test
  void describeFunctionShowsUsageAndAWorkingExample() {
    String text =
        spark.sql("DESCRIBE FUNCTION EXTENDED causal_conv").collectAsList().stream()
            .map(row -> row.getString(0))
            .reduce("", (a, b) -> a + b + "\n");
    assertThat(text).contains("causal_conv(sequence, w [, eps])").contains("w[c][T_w - 1 - L]");
    Object example =
        value("causal_conv(array(array(1.0f), array(2.0f)), array(array(10.0f, 1.0f)))");
    assertThat(example.toString()).isEqualTo("[[1.0], [12.0]]");
    assertThat(text).contains("[[1.0], [12.0]]");
  }

  private static Object value(String expression) {
    return firstValue("SELECT " + expression);
  }

  /** The first column of the first row, an array of arrays as Java lists. */
  private static Object firstValue(String query) {
    Row row = spark.sql(query).collectAsList().get(0);
    return row.isNullAt(0)
        ? null
        : row.getList(0).stream().map(s -> s == null ? null : listOf(s)).toList();
  }

  private static Object listOf(Object step) {
    return step instanceof scala.collection.Seq<?> seq
        ? scala.jdk.javaapi.CollectionConverters.asJava(seq)
        : step;
  }

  private static float[][] reshape(float[] values, int rows, int width) {
    float[][] out = new float[rows][width];
    for (int r = 0; r < rows; r++) {
      System.arraycopy(values, r * width, out[r], 0, width);
    }
    return out;
  }

  private static String literal(float[][] rows) {
    List<String> parts = new ArrayList<>();
    for (float[] row : rows) {
      List<String> values = new ArrayList<>();
      for (float v : row) {
        values.add("cast('" + String.format(Locale.ROOT, "%s", v) + "' as float)");
      }
      parts.add("array(" + String.join(", ", values) + ")");
    }
    return "array(" + String.join(", ", parts) + ")";
  }
}

package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.jobs.internal.SampleRows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Spark commands end to end in this JVM, each starting and stopping its own local session as
 * bin/embednorm does: generate, job, sql (demo: DemoTemporaryDataTest).
 */
class SparkCommandsTest {
  @TempDir Path folder;

  @Test
  void generateThenJobWritesNormalizedRows() {
    long seed = System.nanoTime();
    String input = folder.resolve("input").toString();
    String output = folder.resolve("output").toString();
    CommandOutput generated =
        CommandOutput.run(
            "generate",
            "--rows",
            "300",
            "--dim",
            "17",
            "--output",
            input,
            "--seed",
            Long.toString(seed));
    assertThat(generated.exitCode()).as(generated.err()).isZero();

    CommandOutput job =
        CommandOutput.run(
            "job",
            "--input",
            input,
            "--output",
            output,
            "--op",
            "l2_normalize",
            "--format",
            "json",
            "--input-format",
            "parquet",
            "--output-column",
            "unit");
    assertThat(job.exitCode()).as(job.err()).isZero();
    assertThat(job.out()).contains("rows      300").contains("l2_normalize");

    SparkSession spark = SparkSession.builder().master("local[1]").getOrCreate();
    try {
      List<Row> rows = spark.read().json(output).select("id", "embedding", "unit").collectAsList();
      assertThat(rows).hasSize(300);
      for (Row row : rows) {
        long id = row.getLong(0);
        float[] x = SampleRows.row(seed, id, 17);
        List<Double> original = row.getList(1);
        List<Double> unit = row.getList(2);
        double norm = 0;
        for (float value : x) {
          norm += (double) value * value;
        }
        norm = Math.sqrt(norm);
        for (int i = 0; i < x.length; i++) {
          // JSON holds the float's shortest decimal; read back as a double it is that float again.
          assertThat(original.get(i).floatValue()).isEqualTo(x[i]);
          double reference = x[i] / Math.max(norm, 1e-12);
          assertThat(unit.get(i))
              .as("seed %d id %d element %d", seed, id, i)
              .isCloseTo(
                  reference,
                  org.assertj.core.data.Offset.offset(1e-5 * Math.abs(reference) + 1e-6));
        }
      }
    } finally {
      spark.stop();
    }
  }

  @Test
  void jobWithMissingColumnFailsWithOneLine() {
    String input = folder.resolve("input").toString();
    assertThat(
            CommandOutput.run("generate", "--rows", "10", "--dim", "4", "--output", input)
                .exitCode())
        .isZero();
    Path output = folder.resolve("output");
    CommandOutput job =
        CommandOutput.run(
            "job",
            "--input",
            input,
            "--output",
            output.toString(),
            "--op",
            "rms_norm",
            "--column",
            "vector");
    assertThat(job.exitCode()).isEqualTo(1);
    assertThat(job.err())
        .contains(
            "embednorm job: Cannot normalize column 'vector': no such column; the input has"
                + " columns id, embedding");
    assertThat(output).doesNotExist();
  }

  /**
   * Issue 29, finding 6: --input-format used to default to --format, so this job read Parquet as
   * JSON and failed with "no such column; the input has columns _corrupt_record".
   */
  @Test
  void jobWritingJsonReadsParquetInput() {
    String input = folder.resolve("input").toString();
    assertThat(
            CommandOutput.run("generate", "--rows", "20", "--dim", "3", "--output", input)
                .exitCode())
        .isZero();
    String output = folder.resolve("output").toString();
    CommandOutput job =
        CommandOutput.run(
            "job", "--input", input, "--output", output, "--op", "softmax", "--format", "json");
    assertThat(job.exitCode()).as(job.err()).isZero();
    SparkSession spark = SparkSession.builder().master("local[1]").getOrCreate();
    try {
      List<Row> rows = spark.read().json(output).select("embedding").collectAsList();
      assertThat(rows).hasSize(20);
      for (Row row : rows) {
        List<Double> y = row.getList(0);
        assertThat(y.stream().mapToDouble(Double::doubleValue).sum())
            .isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-6));
      }
    } finally {
      spark.stop();
    }
  }

  @Test
  void jobReadsJsonInputByItsFileNames() {
    String input = folder.resolve("input").toString();
    SparkSession spark = SparkSession.builder().master("local[1]").getOrCreate();
    try {
      spark.sql("SELECT array(3.0D, 4.0D) AS embedding").write().json(input);
    } finally {
      spark.stop();
    }
    String output = folder.resolve("output").toString();
    CommandOutput job =
        CommandOutput.run("job", "--input", input, "--output", output, "--op", "l2_normalize");
    assertThat(job.exitCode()).as(job.err()).isZero();
    spark = SparkSession.builder().master("local[1]").getOrCreate();
    try {
      List<Double> y = spark.read().parquet(output).collectAsList().get(0).getList(0);
      assertThat(y.get(0)).isCloseTo(0.6, org.assertj.core.data.Offset.offset(1e-15));
      assertThat(y.get(1)).isCloseTo(0.8, org.assertj.core.data.Offset.offset(1e-15));
    } finally {
      spark.stop();
    }
  }

  @Test
  void sqlRefusesNonFiniteGammaInOneLine() {
    CommandOutput result =
        CommandOutput.run(
            "sql",
            "SELECT layer_norm(x, 1e-5, array(1f, 1f, float('NaN'))) FROM VALUES (array(1f, 2f,"
                + " 3f)) AS t(x)");
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.err())
        .isEqualTo(
            "embednorm sql: Cannot configure layer_norm: gamma element at index 2 is NaN; it must"
                + " be a finite number"
                + System.lineSeparator());
  }

  @Test
  void sqlPrintsTheValues() {
    CommandOutput result =
        CommandOutput.run(
            "sql",
            "SELECT rms_norm(array(3.0f, 4.0f)) AS r, layer_norm(array(1.0D, 2.0D)) AS l,"
                + " softmax(array(0.0f, 0.0f)) AS s");
    assertThat(result.exitCode()).as(result.err()).isZero();
    List<Double> printed = numbers(result.out());
    double rms = Math.sqrt((9.0 + 16.0) / 2 + 1e-6);
    double deviation = Math.sqrt(0.25 + 1e-5);
    double[] expected = {3 / rms, 4 / rms, -0.5 / deviation, 0.5 / deviation, 0.5, 0.5};
    assertThat(printed).as(result.out()).hasSize(expected.length);
    for (int i = 0; i < expected.length; i++) {
      assertThat(printed.get(i))
          .as(result.out())
          .isCloseTo(expected[i], org.assertj.core.data.Offset.offset(1e-6));
    }
  }

  /** One text column prints as lines, its line breaks as line breaks, not a table of {@code \n}. */
  @Test
  void sqlPrintsOneTextColumnAsLines() {
    CommandOutput result = CommandOutput.run("sql", "DESCRIBE FUNCTION EXTENDED rms_norm");
    assertThat(result.exitCode()).as(result.err()).isZero();
    assertThat(result.out()).doesNotContain("\\n").doesNotContain("+---");
    assertThat(result.out().lines().toList())
        .as(result.out())
        .contains("Function: rms_norm")
        .anySatisfy(line -> assertThat(line).startsWith("Usage:"))
        .hasSizeGreaterThan(6);
  }

  /** The numbers in the rows of a {@code Dataset.show} table, left to right. */
  private static List<Double> numbers(String table) {
    List<Double> numbers = new ArrayList<>();
    for (String line : table.lines().toList()) {
      if (!line.startsWith("|[")) {
        continue;
      }
      Matcher matcher = Pattern.compile("-?\\d+\\.\\d+(E-?\\d+)?").matcher(line);
      while (matcher.find()) {
        numbers.add(Double.parseDouble(matcher.group()));
      }
    }
    return numbers;
  }
}

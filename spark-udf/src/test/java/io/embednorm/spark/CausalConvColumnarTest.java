package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.CausalConvolutionReference;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.TestSeeds;
import io.embednorm.spark.catalyst.CausalConvExpression;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.ExplainMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code causal_conv} in the columnar operator on the CPU engine (docs/SEMANTICS.md, Causal
 * convolution): over rows and over Parquet's nested vectors, several batches of ragged sequences
 * with nulls at every level, next to a second convolution and a normalization in one projection, it
 * gives the row path's bits and stays within the float64 reference's bound; a step of another width
 * and a sequence longer than the kernel fail with the row path's line; explain says where each call
 * runs; no Arrow memory is left; {@code gpu} without a usable GPU fails at analysis.
 */
class CausalConvColumnarTest {
  private static final int CHANNELS = 5;
  private static final int KERNEL_STEPS = 24;
  private static final float EPS = 0.25f;
  private static final String PARQUET_BATCH_ROWS = "spark.sql.parquet.columnarReaderBatchSize";
  private static final String PARQUET_NESTED_BATCHES =
      "spark.sql.parquet.enableNestedColumnVectorizedReader";

  @TempDir static Path directory;

  private static SparkSession spark;
  private static List<Float[][]> sequences;
  private static float[][] kernel;
  private static float[][] longKernel;
  private static String seeds;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(true);
    sequences = new ArrayList<>();
    List<String> used = new ArrayList<>();
    for (long seed : TestSeeds.seeds()) {
      used.add(Long.toString(seed));
      Random random = new Random(seed);
      if (kernel == null) {
        kernel = CausalConvolutionReference.randomKernel(random, CHANNELS, KERNEL_STEPS);
        longKernel = CausalConvolutionReference.randomKernel(random, CHANNELS, KERNEL_STEPS + 3);
      }
      sequences.addAll(Sequences.randomRows(random, 150, CHANNELS, KERNEL_STEPS));
    }
    seeds = "seeds " + String.join(", ", used);
    System.out.println("CausalConvColumnarTest " + seeds + " (the kernels from the first)");
    Dataset<Row> frame = Sequences.frame(spark, sequences);
    frame.createOrReplaceTempView("sequence_rows");
    TestData.parquetView(
        spark,
        frame.selectExpr("*", Sequences.literal(kernel) + " AS w", "0.5f AS e"),
        directory.resolve("sequences"),
        "sequence_files");
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @AfterEach
  void resetSettings() {
    for (EmbedNormConfig.Entry<?> entry :
        List.of(
            EmbedNormConfig.COLUMNAR,
            EmbedNormConfig.DEVICE,
            EmbedNormConfig.EXPLAIN,
            EmbedNormConfig.BATCH_ROWS)) {
      spark.conf().unset(entry.name());
    }
    spark.conf().unset(PARQUET_BATCH_ROWS);
    spark.conf().unset(PARQUET_NESTED_BATCHES);
  }

  /**
   * Both convolutions (one kernel longer than any sequence, one with eps), a normalization and a
   * passed-through column in one projection; batches of 32 rows, so each task runs several, of
   * several lengths each.
   */
  @Test
  void columnarGivesTheRowPathsBitsWithinTheReferenceOverRowsAndParquet() {
    for (String table : List.of("sequence_rows", "sequence_files")) {
      String query =
          "SELECT id, causal_conv(s, "
              + Sequences.literal(kernel)
              + ", "
              + EPS
              + "f) AS y, rms_norm(x) AS r, s, causal_conv(s, "
              + Sequences.literal(longKernel)
              + ") AS z FROM "
              + table;
      spark.conf().unset(EmbedNormConfig.COLUMNAR.name());
      spark.conf().set(EmbedNormConfig.DEVICE.name(), "cpu");
      spark.conf().set(EmbedNormConfig.BATCH_ROWS.name(), "32");
      spark.conf().set(PARQUET_BATCH_ROWS, "32");
      spark.conf().set(PARQUET_NESTED_BATCHES, "true");
      long allocatedBefore = TaskAllocators.allocatedBytes();
      Dataset<Row> columnar = spark.sql(query);
      List<Row> columnarRows = columnar.collectAsList();
      EmbedNormProjectExec operator =
          Results.find(columnar.queryExecution().executedPlan(), EmbedNormProjectExec.class);
      assertThat(operator).as("the columnar operator over %s", table).isNotNull();
      assertThat(operator.metrics().get("numBatches").get().value()).isGreaterThan(4);
      if (table.equals("sequence_files")) {
        assertThat(operator.child().supportsColumnar()).as("the scan's own vectors").isTrue();
      }
      ColumnarLeakTest.assertNoArrowMemoryLeft(allocatedBefore);

      spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "false");
      Dataset<Row> rowPath = spark.sql(query);
      assertThat(Results.find(rowPath.queryExecution().executedPlan(), EmbedNormProjectExec.class))
          .isNull();
      List<Row> rowPathRows = rowPath.collectAsList();

      String context = seeds + ", " + table;
      for (int column : new int[] {1, 4}) {
        Map<Integer, float[]> fromColumnar = Sequences.byId(columnarRows, column);
        Map<Integer, float[]> fromRowPath = Sequences.byId(rowPathRows, column);
        for (int id = 0; id < sequences.size(); id++) {
          assertThat(fromColumnar.get(id))
              .as("%s, column %d, row %d: the row path's bits", context, column, id)
              .isEqualTo(fromRowPath.get(id));
        }
        Sequences.assertWithinReference(
            context + ", column " + column,
            sequences,
            fromColumnar,
            column == 1 ? kernel : longKernel,
            column == 1 ? EPS : 0f);
      }
      assertThat(sorted(columnarRows, 2)).isEqualTo(sorted(rowPathRows, 2));
      assertThat(sorted(columnarRows, 3)).isEqualTo(sorted(rowPathRows, 3));
    }
  }

  /** Row 7 of 12 is bad; the others are one good step each. */
  @Test
  void aBadStepWidthOrALongSequenceFailsWithTheRowPathsLine() {
    Float[][] narrowStep = {{1f, 2f}, {3f, 4f}, {5f}};
    Float[][] longSequence = {{1f, 2f}, {3f, 4f}, {5f, 6f}};
    String w = "array(array(1f, 2f), array(3f, 4f))";
    for (Object[] bad :
        new Object[][] {
          {
            narrowStep,
            "Cannot convolve a sequence with causal_conv: step 2 has 1 channels where"
                + " the kernel has 2"
          },
          {
            longSequence,
            "Cannot convolve a sequence of 3 steps with causal_conv: the kernel has 2" + " steps"
          }
        }) {
      List<Float[][]> rows = new ArrayList<>();
      for (int id = 0; id < 12; id++) {
        rows.add(id == 7 ? (Float[][]) bad[0] : new Float[][] {{1f, 2f}});
      }
      Sequences.frame(spark, rows).createOrReplaceTempView("bad_sequences");
      String query = "SELECT id, causal_conv(s, " + w + ") AS y FROM bad_sequences";
      Dataset<Row> columnar = spark.sql(query);
      assertThat(explain(columnar)).contains("EmbedNormProject");
      String columnarFailure = Results.messages(catchThrowable(columnar::collectAsList));
      spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "false");
      String rowPathFailure = Results.messages(catchThrowable(() -> spark.sql(query).collect()));
      spark.conf().unset(EmbedNormConfig.COLUMNAR.name());
      String line = (String) bad[1];
      assertThat(rowPathFailure).contains(line);
      assertThat(columnarFailure).contains("EmbedNormException: " + line);
    }
  }

  @Test
  void explainShowsTheOperatorForAConstantKernelAndWhyOtherCallsStayOnTheRowPath() {
    spark.conf().set(EmbedNormConfig.EXPLAIN.name(), "true");
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "cpu");
    String w = Sequences.literal(kernel);
    assertThat(explain(spark.sql("SELECT id, causal_conv(s, " + w + ") AS y FROM sequence_rows")))
        .contains("EmbedNormProject [id#")
        .contains("(embednorm runs causal_conv over s on the CPU engine (cpu was requested))")
        .doesNotContain("CPU row path");
    String[][] rowPath = {
      {
        "SELECT causal_conv(s, w) AS y FROM sequence_files",
        "the kernel of causal_conv, w, is not a constant (the columnar operator takes a constant"
            + " kernel)"
      },
      {
        "SELECT causal_conv(s, " + w + ", e) AS y FROM sequence_files",
        "eps of causal_conv, e, is not a constant (the columnar operator takes a constant eps)"
      },
      {
        "SELECT size(causal_conv(s, " + w + ")) AS n FROM sequence_files",
        "applies another function to an embednorm result, which the columnar operator does not"
            + " evaluate"
      },
      {
        "SELECT causal_conv(slice(s, 1, 2), " + w + ") AS y FROM sequence_files",
        "the input of causal_conv is slice(s, 1, 2), not a column (the columnar operator takes"
            + " array<array<float>> columns)"
      }
    };
    for (String[] query : rowPath) {
      assertThat(explain(spark.sql(query[0])))
          .as(query[0])
          .contains("[CPU row path: ")
          .contains(query[1])
          .doesNotContain("EmbedNormProject");
    }
  }

  /** As for the other functions, the note is for people: the call is the same to Spark. */
  @Test
  void thePlacementNoteChangesOnlyTheStringForm() {
    Seq<Attribute> columns = spark.table("sequence_files").queryExecution().analyzed().output();
    List<Expression> arguments = new ArrayList<>();
    for (Attribute column : CollectionConverters.asJava(columns)) {
      if (column.name().equals("s") || column.name().equals("w")) {
        arguments.add(column);
      }
    }
    CausalConvExpression plain =
        new CausalConvExpression(CollectionConverters.asScala(arguments).toSeq());
    CausalConvExpression annotated = plain.withPlacementNote("CPU row path: why");
    assertThat(annotated.toString()).isEqualTo(plain + " [CPU row path: why]");
    assertThat(annotated.sql()).isEqualTo(plain.sql());
    assertThat(annotated.semanticEquals(plain)).isTrue();
    assertThat(annotated.canonicalized()).isEqualTo(plain.canonicalized());
  }

  /** The call now runs on the device, so gpu without one fails at analysis as the others do. */
  @Test
  void gpuWithoutAUsableGpuFailsAtAnalysisNamingCausalConv() {
    String reason = Engines.gpuUnavailableReason();
    assumeTrue(reason != null, "a GPU is usable here");
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "gpu");
    Throwable failure =
        catchThrowable(
            () -> spark.sql("SELECT causal_conv(s, array(array(1f, 2f))) AS y FROM sequence_rows"));
    assertThat(failure)
        .as(Results.messages(failure))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith(
            "Cannot run causal_conv with spark.embednorm.device=gpu: no GPU is usable (" + reason);
  }

  private static String explain(Dataset<Row> result) {
    return result.queryExecution().explainString(ExplainMode.fromString("simple"));
  }

  /** Column {@code column} of every row as strings, sorted with the ids. */
  private static List<String> sorted(List<Row> rows, int column) {
    return rows.stream().map(row -> row.getInt(0) + ": " + row.get(column)).sorted().toList();
  }
}

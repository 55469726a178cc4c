package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.embednorm.engine.Engines;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.execution.RowBatchExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.ForeachPartitionFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The columnar operator on the CPU: planned for eligible projections over Parquet (columnar scan,
 * or rows when the nested vectorized reader is off) and over rows; results equal the row path on
 * ragged rows, nulls, empty arrays, null elements and mixed widths; on-heap output vectors; metrics
 * and Arrow memory. EmbedNormExplainTest covers what explain says, and why projections stay on the
 * row path.
 */
class EmbedNormColumnarTest {
  private static final String QUERY =
      "SELECT id, name, rms_norm(x) AS r, l2_normalize(rms_norm(x)) AS l, layer_norm(d, 1e-3) AS n,"
          + " softmax(x) AS s, x FROM embeddings";
  private static final String NESTED_READER =
      "spark.sql.parquet.enableNestedColumnVectorizedReader";

  @TempDir static Path directory;

  private static SparkSession spark;
  private static List<Double[]> rows;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(true);
    rows = new ArrayList<>(TestData.randomRows("float", TestData.SEED));
    rows.addAll(TestData.edgeRows("float"));
    System.out.println("EmbedNormColumnarTest seed " + TestData.SEED + ", rows " + rows.size());
    TestData.frame(spark, "float", rows).createOrReplaceTempView("frame");
    TestData.parquetView(
        spark,
        spark.sql(
            "SELECT id, x, transform(x, v -> CAST(v AS DOUBLE)) AS d,"
                + " CONCAT('row ', id) AS name FROM frame"),
        directory.resolve("embeddings"),
        "embeddings");
    TestData.parquetView(
        spark,
        spark.sql("SELECT id, array(CAST(id AS INT), 2) AS ints FROM frame"),
        directory.resolve("integers"),
        "integers");
    // Small scan batches: rows of many widths, nulls and empty arrays share and straddle batches.
    spark.conf().set("spark.sql.parquet.columnarReaderBatchSize", "7");
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  /** What the executor's Arrow root held before the test (a leak test leaves its leak behind). */
  private long allocatedBefore;

  @BeforeEach
  void recordArrowMemory() {
    allocatedBefore = TaskAllocators.allocatedBytes();
  }

  @AfterEach
  void resetSettings() {
    for (String key :
        List.of(
            NESTED_READER,
            EmbedNormConfig.COLUMNAR.name(),
            EmbedNormConfig.EXPLAIN.name(),
            EmbedNormConfig.BATCH_ROWS.name())) {
      spark.conf().unset(key);
    }
    assertThat(TaskAllocators.allocatedBytes())
        .as("Arrow memory left after the test")
        .isEqualTo(allocatedBefore);
  }

  @ParameterizedTest(name = "nested vectorized reader {0}")
  @ValueSource(strings = {"true", "false"})
  void parquetQueriesRunInTheOperatorAndEqualTheRowPath(String nestedReader) {
    spark.conf().set(NESTED_READER, nestedReader);
    Dataset<Row> columnar = spark.sql(QUERY);
    SparkPlan plan = executed(columnar);
    assertThat(Results.find(plan, EmbedNormProjectExec.class)).as(plan.toString()).isNotNull();
    // With the nested reader, Parquet hands over its batches; without it, the operator batches.
    assertThat(Results.find(plan, RowBatchExec.class) != null)
        .as(plan.toString())
        .isEqualTo(nestedReader.equals("false"));
    Map<Integer, Row> actual = byId(columnar);

    spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "false");
    Dataset<Row> rowPath = spark.sql(QUERY);
    assertThat(Results.find(executed(rowPath), EmbedNormProjectExec.class)).isNull();
    Map<Integer, Row> expected = byId(rowPath);

    assertThat(actual).hasSameSizeAs(rows);
    for (int id = 0; id < rows.size(); id++) {
      for (int column = 1; column < 7; column++) {
        Row actualRow = actual.get(id);
        Row expectedRow = expected.get(id);
        assertThat(actualRow.isNullAt(column) ? null : actualRow.get(column).toString())
            .as("seed %d, row %d, column %s", TestData.SEED, id, columnar.columns()[column])
            .isEqualTo(expectedRow.isNullAt(column) ? null : expectedRow.get(column).toString());
      }
      Accuracy.FLOAT.assertRow(
          String.format(Locale.ROOT, "seed %d, rms_norm, row %d", TestData.SEED, id),
          actual.get(id).isNullAt(2) ? null : actual.get(id).getList(2),
          Reference.compute("rms_norm", rows.get(id), 1e-6, null, null));
    }
  }

  @Test
  void rowsAreBatchedByBatchRows() {
    spark.conf().set(EmbedNormConfig.BATCH_ROWS.name(), "5");
    Dataset<Row> result = spark.sql("SELECT id, rms_norm(x) AS y FROM frame");
    Map<Integer, List<?>> values = Results.byId(result);
    SparkPlan plan = executed(result);
    assertThat(plan.toString()).contains("EmbedNormRowBatch batchRows=5");
    EmbedNormProjectExec operator = Results.find(plan, EmbedNormProjectExec.class);
    assertThat(operator.metrics().get("numOutputRows").get().value()).isEqualTo(rows.size());
    assertThat(operator.metrics().get("numBatches").get().value())
        .isGreaterThanOrEqualTo((rows.size() + 4) / 5);
    for (int id = 0; id < rows.size(); id++) {
      Accuracy.FLOAT.assertRow(
          "seed " + TestData.SEED + ", row " + id,
          values.get(id),
          Reference.compute("rms_norm", rows.get(id), 1e-6, null, null));
    }
  }

  @Test
  void metricsCountRowsBatchesBytesAndSplitTheOperatorsTime() {
    Dataset<Row> result = spark.sql("SELECT id, l2_normalize(x) AS y FROM embeddings");
    result.collectAsList();
    EmbedNormProjectExec operator = Results.find(executed(result), EmbedNormProjectExec.class);
    Map<String, Long> metrics = new HashMap<>();
    for (String name :
        List.of(
            "numOutputRows",
            "numBatches",
            "operatorTime",
            "allocationTime",
            "copyToArrowTime",
            "normalizeTime",
            "outputTime",
            "pinningTime",
            "bytesCopiedToArrow",
            "cpuTime",
            "gpuTime",
            "uploadTime",
            "kernelTime",
            "downloadTime",
            "numGpuChunks",
            "bytesUploaded",
            "bytesDownloaded",
            "stagedBytes",
            "cpuFallbackBatches")) {
      metrics.put(name, operator.metrics().get(name).get().value());
    }
    assertThat(metrics.get("numOutputRows")).isEqualTo(rows.size());
    assertThat(metrics.get("numBatches")).isGreaterThanOrEqualTo((rows.size() + 6) / 7);
    long elements = rows.stream().filter(row -> row != null).mapToLong(row -> row.length).sum();
    assertThat(metrics.get("bytesCopiedToArrow"))
        .isGreaterThanOrEqualTo(elements * Float.BYTES / 2);
    List<String> parts =
        List.of("allocationTime", "copyToArrowTime", "normalizeTime", "outputTime");
    for (String part : parts) {
      assertThat(metrics.get(part)).as(part).isPositive();
    }
    // The parts are disjoint intervals inside the operator's time.
    assertThat(metrics.get("operatorTime"))
        .as(metrics.toString())
        .isGreaterThanOrEqualTo(parts.stream().mapToLong(metrics::get).sum());
    assertThat(metrics.get("gpuTime"))
        .isEqualTo(
            metrics.get("uploadTime") + metrics.get("kernelTime") + metrics.get("downloadTime"));
    if (Engines.gpuUnavailableReason() != null) {
      assertThat(metrics.get("cpuTime")).isPositive();
      assertThat(metrics.get("normalizeTime")).isGreaterThanOrEqualTo(metrics.get("cpuTime"));
      for (String gpuOnly :
          List.of(
              "bytesUploaded", "numGpuChunks", "gpuTime", "pinningTime", "cpuFallbackBatches")) {
        assertThat(metrics.get(gpuOnly)).as(gpuOnly).isZero();
      }
    }
  }

  /**
   * The operator hands Spark its normalized columns as on-heap vectors, which Spark's row
   * conversion reads as fast as the scan's; results equal the row path (tests above) either way.
   */
  @Test
  void normalizedColumnsAreOnHeapVectors() {
    Dataset<Row> result =
        spark.sql("SELECT id, rms_norm(x) AS r, layer_norm(d, 1e-3) AS n FROM embeddings");
    EmbedNormProjectExec operator = Results.find(executed(result), EmbedNormProjectExec.class);
    List<String> types =
        operator
            .executeColumnar()
            .toJavaRDD()
            .map(
                batch ->
                    batch.column(1).getClass().getSimpleName()
                        + ", "
                        + batch.column(2).getClass().getSimpleName())
            .distinct()
            .collect();
    assertThat(types).containsExactly("OnHeapColumnVector, OnHeapColumnVector");
  }

  @Test
  void weightThatDoesNotFitARowFailsNamingTheRow() {
    Throwable failure =
        catchThrowable(
            () ->
                spark
                    .sql("SELECT rms_norm(x, 1e-6, array(1.0f, 2.0f)) FROM embeddings WHERE id = 0")
                    .collectAsList());
    assertThat(Results.messages(failure))
        .contains("Cannot apply rms_norm to row 0: weight has 2 elements but the row has 1");
  }

  /** Arrow memory a task leaves allocated fails the task, naming the bytes. */
  @Test
  void aLeakFailsTheTask() {
    Throwable failure =
        catchThrowable(
            () ->
                spark
                    .range(1)
                    .foreachPartition(
                        (ForeachPartitionFunction<Long>)
                            ignored -> TaskAllocators.forTask(TaskContext.get()).buffer(64)));
    // The leaked buffer cannot be freed any more (its allocator is closed); it stays counted.
    allocatedBefore = TaskAllocators.allocatedBytes();
    assertThat(Results.messages(failure))
        .containsPattern(
            "Cannot close the Arrow memory of task \\d+: 64 bytes are still allocated");
  }

  private static SparkPlan executed(Dataset<Row> result) {
    return result.queryExecution().executedPlan();
  }

  private static Map<Integer, Row> byId(Dataset<Row> result) {
    Map<Integer, Row> values = new HashMap<>();
    for (Row row : result.collectAsList()) {
      values.put(row.getInt(0), row);
    }
    return values;
  }
}

package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.Engines;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * On a GPU host: a {@code local[*]} query over Parquet runs the columnar operator on the device
 * (bytes went to and from the GPU, no batch fell back to the CPU) and its output matches the
 * float64 reference within docs/SEMANTICS.md, Accuracy, and the CPU row path's output. Skipped (not
 * passed) where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class EmbedNormColumnarGpuTest {
  /**
   * Checked before the class's set-up, so that without a GPU each test is reported as skipped
   * rather than the class as zero tests.
   */
  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  private static final int WIDTH = 768;

  @TempDir static Path directory;

  private static SparkSession spark;
  private static List<Double[]> rows;

  @BeforeAll
  static void startSpark() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    spark =
        SparkSession.builder()
            .master("local[*]")
            .appName("embednorm-spark-udf-gpu-test")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.extensions", EmbedNormExtensions.class.getName())
            .getOrCreate();
    Random random = new Random(TestData.SEED);
    rows = new ArrayList<>();
    for (int row = 0; row < 5000; row++) {
      Double[] values = new Double[WIDTH];
      for (int i = 0; i < WIDTH; i++) {
        values[i] = (double) (float) (random.nextGaussian() * 3 + 0.5);
      }
      rows.add(values);
    }
    rows.addAll(TestData.randomRows("float", TestData.SEED));
    rows.addAll(TestData.edgeRows("float"));
    System.out.println("EmbedNormColumnarGpuTest seed " + TestData.SEED + ", rows " + rows.size());
    TestData.parquetView(
        spark, TestData.frame(spark, "float", rows), directory.resolve("embeddings"), "embeddings");
  }

  @AfterAll
  static void stopSpark() {
    if (spark != null) {
      spark.stop();
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"})
  void parquetQueryRunsOnTheGpuAndMatchesTheCpu(String function) {
    long allocatedBefore = TaskAllocators.allocatedBytes();
    String query = "SELECT id, " + function + "(x) AS y FROM embeddings";
    Dataset<Row> gpu = onTheGpu(query);
    Map<Integer, List<?>> gpuValues = Results.byId(gpu);
    EmbedNormProjectExec operator = operator(gpu);
    assertThat(operator.metrics().get("bytesUploaded").get().value()).isPositive();
    assertThat(operator.metrics().get("bytesDownloaded").get().value()).isPositive();
    assertThat(operator.metrics().get("gpuTime").get().value()).isPositive();
    assertThat(operator.metrics().get("cpuFallbackBatches").get().value()).isZero();
    assertThat(TaskAllocators.allocatedBytes()).isEqualTo(allocatedBefore);

    Map<Integer, List<?>> cpuValues = Results.byId(onTheCpuRowPath(query));

    double epsilon = Reference.defaultEpsilon(function);
    for (int id = 0; id < rows.size(); id++) {
      String context =
          String.format(Locale.ROOT, "seed %d, %s, row %d", TestData.SEED, function, id);
      double[] reference = Reference.compute(function, rows.get(id), epsilon, null, null);
      Accuracy.FLOAT.assertRow(context + " (GPU)", gpuValues.get(id), reference);
      Accuracy.FLOAT.assertRow(context + " (CPU)", cpuValues.get(id), reference);
      if (cpuValues.get(id) != null) {
        double[] cpu = new double[cpuValues.get(id).size()];
        for (int i = 0; i < cpu.length; i++) {
          cpu[i] = ((Number) cpuValues.get(id).get(i)).doubleValue();
        }
        Accuracy.FLOAT.assertRow(context + " (GPU against CPU)", gpuValues.get(id), cpu);
      } else {
        assertThat(gpuValues.get(id)).as(context).isNull();
      }
    }
  }

  /** A nested call runs as one chain on the device; it matches the row path's two steps. */
  @Test
  void nestedCallsRunAsOneChainOnTheGpu() {
    String query = "SELECT id, l2_normalize(rms_norm(x)) AS y FROM embeddings";
    Dataset<Row> gpu = onTheGpu(query);
    Map<Integer, List<?>> gpuValues = Results.byId(gpu);
    EmbedNormProjectExec operator = operator(gpu);
    assertThat(operator.metrics().get("cpuFallbackBatches").get().value()).isZero();
    // One upload and one download per batch: the intermediate stayed on the device.
    long elements = rows.stream().mapToLong(row -> row == null ? 0 : row.length).sum();
    assertThat(operator.metrics().get("bytesDownloaded").get().value())
        .isLessThan(2 * elements * Float.BYTES);

    Map<Integer, List<?>> cpuValues = Results.byId(onTheCpuRowPath(query));
    for (int id = 0; id < rows.size(); id++) {
      List<?> cpu = cpuValues.get(id);
      if (cpu == null) {
        assertThat(gpuValues.get(id)).as("row %d", id).isNull();
        continue;
      }
      double[] expected =
          cpu.stream().mapToDouble(value -> ((Number) value).doubleValue()).toArray();
      Accuracy.FLOAT.assertRow(
          "seed " + TestData.SEED + ", l2_normalize(rms_norm(x)), row " + id,
          gpuValues.get(id),
          expected);
    }
  }

  private static Dataset<Row> onTheGpu(String query) {
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "gpu");
    spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "true");
    return spark.sql(query);
  }

  private static Dataset<Row> onTheCpuRowPath(String query) {
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "cpu");
    spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "false");
    return spark.sql(query);
  }

  private static EmbedNormProjectExec operator(Dataset<Row> executed) {
    EmbedNormProjectExec operator =
        Results.find(executed.queryExecution().executedPlan(), EmbedNormProjectExec.class);
    assertThat(operator).as("the columnar operator is planned").isNotNull();
    return operator;
  }
}

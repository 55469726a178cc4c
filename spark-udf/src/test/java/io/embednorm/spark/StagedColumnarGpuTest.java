package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.Engines;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * On a GPU host: the columnar operator's batches go straight from Spark's vectors (on-heap rows
 * batched by the operator, off-heap Parquet scans) through the GPU's staging slots into the result
 * vectors, for every op and a chain, float and double, fixed rows and ragged ones with nulls; the
 * SQL result equals the CPU row path's within docs/SEMANTICS.md, Accuracy, and the metrics say
 * every batch was staged, none copied to Arrow, none fell back. Skipped where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class StagedColumnarGpuTest {
  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  @TempDir static Path directory;

  private static SparkSession spark;
  private static final Map<String, List<Double[]>> ROWS = new java.util.HashMap<>();

  @BeforeAll
  static void startSpark() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    spark =
        SparkSession.builder()
            .master("local[2]")
            .appName("embednorm-staged-gpu-test")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.extensions", EmbedNormExtensions.class.getName())
            .config("spark.sql.columnVector.offheap.enabled", "true")
            .config(EmbedNormConfig.BATCH_ROWS.name(), "512")
            .getOrCreate();
    System.out.println("StagedColumnarGpuTest seed " + TestData.SEED);
    for (String type : List.of("float", "double")) {
      Random random = new Random(TestData.SEED + type.length());
      List<Double[]> fixed = new ArrayList<>();
      for (int row = 0; row < 3000; row++) {
        Double[] values = new Double[768];
        for (int i = 0; i < values.length; i++) {
          double value = random.nextGaussian() * 3 + 0.5;
          values[i] = type.equals("float") ? (double) (float) value : value;
        }
        fixed.add(values);
      }
      List<Double[]> ragged = new ArrayList<>(TestData.randomRows(type, TestData.SEED));
      ragged.addAll(TestData.edgeRows(type));
      for (int copy = 0; copy < 3; copy++) {
        ragged.addAll(new ArrayList<>(ragged));
      }
      register(type + "_fixed", type, fixed);
      register(type + "_ragged", type, ragged);
    }
  }

  private static void register(String name, String type, List<Double[]> rows) {
    ROWS.put(name, rows);
    Dataset<Row> frame = TestData.frame(spark, type, rows);
    frame.createOrReplaceTempView(name + "_memory");
    TestData.parquetView(spark, frame, directory.resolve(name), name + "_scanned");
  }

  @AfterAll
  static void stopSpark() {
    if (spark != null) {
      spark.stop();
    }
  }

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (String function :
        List.of(
            "rms_norm(x)",
            "layer_norm(x)",
            "softmax(x)",
            "log_softmax(x)",
            "l2_normalize(x)",
            "l1_normalize(x)",
            "linf_normalize(x)",
            "l2_normalize(rms_norm(x))")) {
      for (String table : List.of("float_fixed", "float_ragged", "double_fixed", "double_ragged")) {
        for (String source : List.of("memory", "scanned")) {
          cases.add(Arguments.of(function, table, source));
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} over {1}_{2}")
  @MethodSource("cases")
  void stagedBatchesMatchTheCpuRowPath(String function, String table, String source) {
    long allocatedBefore = TaskAllocators.allocatedBytes();
    String query = "SELECT id, " + function + " AS y FROM " + table + "_" + source;
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "gpu");
    spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "true");
    Dataset<Row> gpu = spark.sql(query);
    Map<Integer, List<?>> gpuValues = Results.byId(gpu);
    EmbedNormProjectExec operator =
        Results.find(gpu.queryExecution().executedPlan(), EmbedNormProjectExec.class);
    assertThat(operator).as("the columnar operator is planned").isNotNull();
    long batches = metric(operator, "numBatches");
    assertThat(batches).isPositive();
    assertThat(metric(operator, "stagedBatches")).as("staged batches").isEqualTo(batches);
    assertThat(metric(operator, "bytesCopiedToArrow")).isZero();
    assertThat(metric(operator, "cpuFallbackBatches")).isZero();
    assertThat(metric(operator, "stagedBytes")).isPositive();
    assertThat(TaskAllocators.allocatedBytes()).isEqualTo(allocatedBefore);

    spark.conf().set(EmbedNormConfig.DEVICE.name(), "cpu");
    spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "false");
    Map<Integer, List<?>> cpuValues = Results.byId(spark.sql(query));
    Accuracy accuracy = Accuracy.of(table.startsWith("float") ? "float" : "double");
    List<Double[]> rows = ROWS.get(table);
    assertThat(gpuValues).hasSize(rows.size());
    for (int id = 0; id < rows.size(); id++) {
      String context = "seed " + TestData.SEED + ", " + query + ", row " + id;
      List<?> cpu = cpuValues.get(id);
      if (cpu == null) {
        assertThat(gpuValues.get(id)).as(context).isNull();
        continue;
      }
      double[] expected =
          cpu.stream().mapToDouble(value -> ((Number) value).doubleValue()).toArray();
      accuracy.assertRow(context, gpuValues.get(id), expected);
    }
  }

  private static long metric(EmbedNormProjectExec operator, String name) {
    return operator.metrics().get(name).get().value();
  }
}

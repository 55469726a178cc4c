package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.DeviceMemory;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuFaults;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * On a GPU host, the CUDA engine faulted through {@code embednorm.faults.*} in a Spark query: the
 * faulted batches hold the CPU engine's bits, {@code cpuFallbackBatches} counts them, one warning
 * is logged; and 10,000 batches on the GPU leave device memory, the pinned pool and the task
 * allocators where they were. Skipped (not passed) where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class ColumnarGpuFaultGpuTest {
  /**
   * Checked before the class's set-up, so that without a GPU each test is reported as skipped
   * rather than the class as zero tests.
   */
  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  private static final int BATCH_ROWS = FaultedGpuQuery.BATCH_ROWS;

  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("embednorm-gpu-fault-test")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config(
                "spark.sql.optimizer.excludedRules",
                "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation")
            .config("spark.sql.extensions", EmbedNormExtensions.class.getName())
            .config(EmbedNormConfig.DEVICE.name(), "gpu")
            .getOrCreate();
  }

  @AfterEach
  void clearFaults() {
    System.clearProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name());
    System.clearProperty(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK.name());
    System.clearProperty(InternalSwitches.FAULTS_OUT_OF_MEMORY_CHUNKS.name());
  }

  @AfterAll
  static void stopSpark() {
    if (spark != null) {
      spark.stop();
    }
  }

  /**
   * Of 8 one-chunk batches in one task, call 3 fails with a GPU fault and calls 5 and 6 run out of
   * memory below the split floor.
   */
  @Test
  void faultedBatchesRunOnTheCpuEngineCountedInTheMetricWithOneWarning() {
    List<Double[]> rows = FaultedGpuQuery.rows(TestData.SEED);
    TestData.frame(spark, "float", rows).createOrReplaceTempView("faulted");
    spark.conf().set(EmbedNormConfig.BATCH_ROWS.name(), Integer.toString(BATCH_ROWS));
    long allocatedBefore = TaskAllocators.allocatedBytes();
    System.setProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name(), "3");
    System.setProperty(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK.name(), "5");
    System.setProperty(InternalSwitches.FAULTS_OUT_OF_MEMORY_CHUNKS.name(), "2");
    GpuFaults.reset();

    FaultedGpuQuery.Outcome outcome = FaultedGpuQuery.query(spark, "faulted");
    EmbedNormProjectExec operator = outcome.operator();
    Map<Integer, List<?>> values = outcome.values();
    List<String> warnings = outcome.warnings();
    assertThat(operator.metrics().get("cpuFallbackBatches").get().value()).isEqualTo(3);
    assertThat(operator.metrics().get("numGpuChunks").get().value()).isEqualTo(5);
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0))
        .contains("on the CPU engine", "Cannot run GPU call 3 (a chunk of 8 rows)");
    ColumnarLeakTest.assertNoArrowMemoryLeft(allocatedBefore);
    double epsilon = Reference.defaultEpsilon("rms_norm");
    try (NormalizationEngine cpu = Engines.cpu(1)) {
      for (int id = 0; id < rows.size(); id++) {
        String context = "seed " + TestData.SEED + ", row " + id;
        Accuracy.FLOAT.assertRow(
            context,
            values.get(id),
            Reference.compute("rms_norm", rows.get(id), epsilon, null, null));
        int batch = id / BATCH_ROWS;
        if (batch == 2 || batch == 4 || batch == 5) {
          assertThat(bits(values.get(id)))
              .as(context + ": the CPU engine's bits")
              .isEqualTo(FaultedGpuQuery.onCpu(cpu, rows.get(id)));
        }
      }
    }
  }

  /** 10,000 two-row batches on the GPU, after the same query once to fill the pools. */
  @Test
  void tenThousandBatchesOnTheGpuLeaveDeviceAndPinnedMemoryWhereTheyWere() {
    TestData.frame(spark, "float", ColumnarLeakTest.rows(TestData.SEED))
        .createOrReplaceTempView("small_batches");
    spark
        .conf()
        .set(EmbedNormConfig.BATCH_ROWS.name(), Integer.toString(ColumnarLeakTest.BATCH_ROWS));
    String query = "SELECT id, l2_normalize(x) AS y FROM small_batches";
    Results.byId(spark.sql(query));
    long allocatedBefore = TaskAllocators.allocatedBytes();
    long deviceBefore = DeviceMemory.inUse();
    long pinnedBefore = Engines.hostMemory().allocatedBytes();

    Dataset<Row> result = spark.sql(query);
    Results.byId(result);

    EmbedNormProjectExec operator =
        Results.find(result.queryExecution().executedPlan(), EmbedNormProjectExec.class);
    assertThat(operator.metrics().get("numBatches").get().value())
        .isEqualTo(ColumnarLeakTest.BATCHES);
    assertThat(operator.metrics().get("cpuFallbackBatches").get().value()).isZero();
    ColumnarLeakTest.assertNoArrowMemoryLeft(allocatedBefore);
    assertThat(DeviceMemory.inUse()).as("device memory in use").isEqualTo(deviceBefore);
    long pinned = Engines.hostMemory().allocatedBytes();
    assertThat(pinned).as("pinned bytes").isLessThanOrEqualTo(pinnedBefore);
    assertThat(pinned)
        .as("pinned bytes within embednorm.pinnedPoolBytes")
        .isLessThanOrEqualTo(InternalSwitches.PINNED_POOL_BYTES.value());
    assertThat(Engines.hostMemory().registeredBytes()).isZero();
  }

  private static int[] bits(List<?> row) {
    int[] bits = new int[row.size()];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = Float.floatToRawIntBits(((Number) row.get(i)).floatValue());
    }
    return bits;
  }
}

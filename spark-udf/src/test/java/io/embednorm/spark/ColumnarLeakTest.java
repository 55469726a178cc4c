package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * 10,000 batches through the columnar operator on the CPU engine (two tasks of 5,000 two-row
 * batches): every row matches the float64 reference, and afterwards the executor's Arrow memory is
 * where it started, with no task allocator left open (a batch that leaked would also fail its task
 * when its allocator closes).
 */
class ColumnarLeakTest {
  static final int BATCHES = 10_000;
  static final int BATCH_ROWS = 2;
  static final int WIDTH = 4;

  private static SparkSession spark;
  private static List<Double[]> rows;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(true);
    rows = rows(TestData.SEED);
    TestData.frame(spark, "float", rows).createOrReplaceTempView("small_batches");
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @Test
  void tenThousandBatchesOnTheCpuEngineLeaveNoArrowMemory() {
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "cpu");
    spark.conf().set(EmbedNormConfig.BATCH_ROWS.name(), Integer.toString(BATCH_ROWS));
    long allocatedBefore = TaskAllocators.allocatedBytes();

    Dataset<Row> result = spark.sql("SELECT id, l2_normalize(x) AS y FROM small_batches");
    Map<Integer, List<?>> values = Results.byId(result);

    EmbedNormProjectExec operator =
        Results.find(result.queryExecution().executedPlan(), EmbedNormProjectExec.class);
    assertThat(operator).as("the columnar operator is planned").isNotNull();
    assertThat(operator.metrics().get("numBatches").get().value()).isEqualTo(BATCHES);
    assertNoArrowMemoryLeft(allocatedBefore);
    double epsilon = Reference.defaultEpsilon("l2_normalize");
    for (int id = 0; id < rows.size(); id++) {
      Accuracy.FLOAT.assertRow(
          "seed " + TestData.SEED + ", row " + id,
          values.get(id),
          Reference.compute("l2_normalize", rows.get(id), epsilon, null, null));
    }
  }

  /**
   * Batches whose sizes vary through a task (ragged rows whose widths rise and fall, null rows and
   * rows with a null element, a short last batch), so that the memory the operator keeps between
   * batches grows, is reused by smaller batches, and must not show a larger batch's rows in a
   * smaller one's: every row matches the float64 reference, and at the end of the tasks the memory
   * is released.
   */
  @Test
  void batchesOfVaryingSizesInATaskMatchTheReferenceAndReleaseTheirMemory() {
    List<Double[]> varying = varyingRows(TestData.SEED);
    TestData.frame(spark, "float", varying).repartition(1).createOrReplaceTempView("varying");
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "cpu");
    spark.conf().set(EmbedNormConfig.BATCH_ROWS.name(), "64");
    long allocatedBefore = TaskAllocators.allocatedBytes();

    Dataset<Row> result = spark.sql("SELECT id, rms_norm(x) AS y FROM varying");
    Map<Integer, List<?>> values = Results.byId(result);

    assertNoArrowMemoryLeft(allocatedBefore);
    EmbedNormProjectExec operator =
        Results.find(result.queryExecution().executedPlan(), EmbedNormProjectExec.class);
    assertThat(operator).as("the columnar operator is planned").isNotNull();
    assertThat(operator.metrics().get("numBatches").get().value()).isGreaterThan(20);
    double epsilon = Reference.defaultEpsilon("rms_norm");
    for (int id = 0; id < varying.size(); id++) {
      Accuracy.FLOAT.assertRow(
          "seed " + TestData.SEED + ", row " + id,
          values.get(id),
          Reference.compute("rms_norm", varying.get(id), epsilon, null, null));
    }
  }

  /**
   * 1,500 rows whose widths rise to 200 and fall back, in steps of 300 rows; one in ten null, one
   * in twelve with a null element.
   */
  static List<Double[]> varyingRows(long seed) {
    Random random = new Random(seed);
    int[] widths = {8, 200, 3, 120, 1};
    List<Double[]> result = new ArrayList<>();
    for (int row = 0; row < 1_500; row++) {
      if (random.nextInt(10) == 0) {
        result.add(null);
        continue;
      }
      Double[] values = new Double[random.nextInt(widths[row / 300] + 1)];
      for (int i = 0; i < values.length; i++) {
        values[i] = (double) (float) random.nextGaussian();
      }
      if (values.length > 0 && random.nextInt(12) == 0) {
        values[random.nextInt(values.length)] = null;
      }
      result.add(values);
    }
    return result;
  }

  /** The root allocator holds what it held before, and only the shared results' child is open. */
  static void assertNoArrowMemoryLeft(long allocatedBefore) {
    assertThat(TaskAllocators.allocatedBytes()).isEqualTo(allocatedBefore);
    assertThat(TaskAllocators.openTaskAllocators()).isZero();
    List<String> children = new ArrayList<>();
    for (BufferAllocator child : TaskAllocators.root().getChildAllocators()) {
      children.add(child.getName());
    }
    assertThat(children).containsOnly("embednorm-results");
  }

  static List<Double[]> rows(long seed) {
    Random random = new Random(seed);
    List<Double[]> result = new ArrayList<>();
    for (int row = 0; row < BATCHES * BATCH_ROWS; row++) {
      Double[] values = new Double[WIDTH];
      for (int i = 0; i < WIDTH; i++) {
        values[i] = (double) (float) random.nextGaussian();
      }
      result.add(values);
    }
    return result;
  }
}

package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.CausalConvolutionReference;
import io.embednorm.engine.Engines;
import io.embednorm.engine.TestSeeds;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.nio.file.Path;
import java.util.List;
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

/**
 * On a GPU host: {@code causal_conv} with {@code spark.embednorm.device=gpu} runs in the columnar
 * operator over Parquet, and every row is within the float64 reference's bound (docs/SEMANTICS.md,
 * Causal convolution), nulls where the row path has them. Skipped where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class CausalConvColumnarGpuTest {
  private static final int CHANNELS = 16;
  private static final int KERNEL_STEPS = 64;
  private static final float EPS = 0.25f;

  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  @TempDir static Path directory;

  private static SparkSession spark;
  private static List<Float[][]> sequences;
  private static float[][] kernel;
  private static long seed;

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
    long[] seeds = TestSeeds.seeds();
    seed = seeds[seeds.length - 1];
    System.out.println("CausalConvColumnarGpuTest seed " + seed);
    Random random = new Random(seed);
    kernel = CausalConvolutionReference.randomKernel(random, CHANNELS, KERNEL_STEPS);
    sequences = Sequences.randomRows(random, 3000, CHANNELS, KERNEL_STEPS);
    TestData.parquetView(
        spark, Sequences.frame(spark, sequences), directory.resolve("sequences"), "sequences");
  }

  @AfterAll
  static void stopSpark() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void causalConvRunsInTheColumnarOperatorOnTheGpuWithinTheReference() {
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "gpu");
    long allocatedBefore = TaskAllocators.allocatedBytes();
    Dataset<Row> result =
        spark.sql(
            "SELECT id, causal_conv(s, "
                + Sequences.literal(kernel)
                + ", "
                + EPS
                + "f) AS y FROM sequences");
    Map<Integer, float[]> values = Sequences.byId(result.collectAsList(), 1);
    assertThat(Results.find(result.queryExecution().executedPlan(), EmbedNormProjectExec.class))
        .as("the columnar operator")
        .isNotNull();
    assertThat(TaskAllocators.allocatedBytes()).isEqualTo(allocatedBefore);
    Sequences.assertWithinReference("seed " + seed + ", gpu", sequences, values, kernel, EPS);
  }
}

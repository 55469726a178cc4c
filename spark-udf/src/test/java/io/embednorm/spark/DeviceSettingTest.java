package io.embednorm.spark;

import static org.apache.spark.sql.functions.array;
import static org.apache.spark.sql.functions.lit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code spark.embednorm.device} on the SQL and DataFrame paths: {@code gpu} with no usable GPU
 * fails clearly (the tests that need that skip on a machine with a usable GPU).
 */
class DeviceSettingTest {
  private static final String QUERY = "SELECT rms_norm(array(3.0f, 4.0f)) AS y";

  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(true);
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @AfterEach
  void resetSettings() {
    spark.conf().unset(EmbedNormConfig.DEVICE.name());
    spark.conf().unset(EmbedNormConfig.EXPLAIN.name());
  }

  @Test
  void readsTheSessionsRuntimeConf() {
    assertThat(EmbedNormConfig.DEVICE.read(spark)).isEqualTo(DeviceChoice.AUTO);
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "cpu");
    assertThat(EmbedNormConfig.DEVICE.read(spark)).isEqualTo(DeviceChoice.CPU);
    spark.sql("SET spark.embednorm.device=gpu");
    assertThat(EmbedNormConfig.DEVICE.read(spark)).isEqualTo(DeviceChoice.GPU);
  }

  @ParameterizedTest
  @ValueSource(strings = {"auto", "cpu"})
  void autoAndCpuRunWithoutAGpu(String device) {
    spark.conf().set(EmbedNormConfig.DEVICE.name(), device);
    spark.conf().set(EmbedNormConfig.EXPLAIN.name(), "true");
    List<Row> rows = spark.sql(QUERY).collectAsList();
    assertThat(rows.get(0).getList(0)).hasSize(2);
  }

  @Test
  void gpuWithoutUsableGpuFailsAtAnalysisSayingWhy() {
    String reason = Engines.gpuUnavailableReason();
    assumeTrue(reason != null, "a GPU is usable here");
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "gpu");
    Throwable failure = catchThrowable(() -> spark.sql(QUERY));
    assertThat(failure)
        .as(Results.messages(failure))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot run rms_norm with spark.embednorm.device=gpu: no GPU is usable ("
                + reason
                + "); set it to auto or cpu to run on the CPU");
    Throwable dataFrameFailure =
        catchThrowable(
            () -> spark.range(1).select(EmbedNormFunctions.l2Normalize(array(lit(1.0f)))));
    assertThat(dataFrameFailure)
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith("Cannot run l2_normalize with spark.embednorm.device=gpu");
  }

  /** A query analyzed under auto and run under gpu is stopped by the expression itself. */
  @Test
  void gpuWithoutUsableGpuFailsAtExecutionWhenAnalysisDidNotCheck() {
    assumeTrue(Engines.gpuUnavailableReason() != null, "a GPU is usable here");
    Dataset<Row> query = spark.range(2).select(EmbedNormFunctions.rmsNorm(array(lit(1.0f))));
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "gpu");
    Throwable failure = catchThrowable(query::collectAsList);
    assertThat(Results.messages(failure))
        .contains(EmbedNormException.class.getName())
        .contains("Cannot run rms_norm with spark.embednorm.device=gpu: no GPU is usable");
  }

  @Test
  void anInvalidDeviceFailsTheQueryNamingTheKey() {
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "tpu");
    Throwable failure = catchThrowable(() -> spark.sql(QUERY));
    assertThat(failure)
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot read spark.embednorm.device: expected one of auto, cpu, gpu, got 'tpu'");
  }
}

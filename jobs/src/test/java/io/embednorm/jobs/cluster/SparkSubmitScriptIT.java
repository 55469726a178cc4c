package io.embednorm.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.jobs.NormalizeEmbeddingsJob;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "On a cluster" command, run as a user runs it: Spark's own {@code bin/spark-submit}
 * script ({@code shared/pyspark/spark-home}; the test skips where it is absent) with {@code
 * --properties-file conf/spark-defaults.conf --load-spark-defaults} against a standalone master and
 * two workers, each its own JVM. Both settings files apply (the executors' command lines hold the
 * cluster's Java options and the project's Vector API module), every executor that ran a task says
 * once that it normalizes on the CPU with SIMD kernels, and the output matches a float64 reference.
 * The cluster's logs stay in the temporary folder when the test fails.
 */
class SparkSubmitScriptIT {
  private static final int FILES = 4;
  private static final int ROWS_PER_FILE = 500;
  private static final int ROWS = FILES * ROWS_PER_FILE;
  private static final int WIDTH = 64;
  private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);

  /**
   * Where an executor may normalize: a GPU host's executors choose their GPU (auto), the others the
   * CPU's SIMD kernels (Spark 4.1 starts executors with the Vector API module; a machine without
   * 256-bit vectors would run the scalar ones and fail this test).
   */
  private static final Pattern ON_GPU_OR_SIMD =
      Pattern.compile("normalizes on (gpu \\d+ |cpu .*: SIMD kernels$)");

  private static final Path PROJECT_DEFAULTS = Path.of("..", "conf", "spark-defaults.conf");

  /**
   * The cluster's own spark-defaults.conf, which only {@code --load-spark-defaults} applies next to
   * the project's file: loopback addresses, no web UI, both executors registered before the job
   * starts, and short-lived JVMs on C1 alone with the serial collector (the marker the test looks
   * for in the executors' command lines; SparkDistribution#jvmOptions says why).
   */
  private static final String CLUSTER_DEFAULTS =
      String.join(
          "\n",
          "spark.driver.host                            127.0.0.1",
          "spark.driver.bindAddress                     127.0.0.1",
          "spark.ui.enabled                             false",
          "spark.cores.max                              2",
          "spark.scheduler.minRegisteredResourcesRatio  1.0",
          "spark.driver.defaultJavaOptions              -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
          "spark.executor.defaultJavaOptions            -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
          "");

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path folder;

  private final long started = System.nanoTime();

  @Test
  void theReadmeCommandRunsTheJobOnAStandaloneCluster() throws IOException {
    Optional<Path> scripts = SparkDistribution.launchScripts();
    assumeTrue(
        scripts.isPresent(),
        "no shared/pyspark/spark-home in or above " + Path.of("").toAbsolutePath());
    long seed = Long.getLong("embednorm.test.seed", System.nanoTime());
    progress("seed %d, folder %s", seed, folder);
    Path input = Files.createDirectories(folder.resolve("input"));
    Path output = folder.resolve("output");
    for (int file = 0; file < FILES; file++) {
      EmbeddingParquet.writeSample(
          input.resolve(String.format(Locale.ROOT, "part-%05d.parquet", file)),
          (long) file * ROWS_PER_FILE,
          ROWS_PER_FILE,
          WIDTH,
          seed);
    }
    try (StandaloneCluster cluster = StandaloneCluster.start(folder.resolve("cluster"), 2)) {
      cluster.spark().addLaunchScripts(scripts.get());
      Files.writeString(
          cluster.spark().home().resolve("conf").resolve("spark-defaults.conf"), CLUSTER_DEFAULTS);
      progress("cluster up at %s", cluster.masterUrl());
      LoggedProcess driver =
          cluster.submitThroughScript(
              List.of(
                  "--class",
                  NormalizeEmbeddingsJob.class.getName(),
                  "--properties-file",
                  PROJECT_DEFAULTS.toAbsolutePath().normalize().toString(),
                  "--load-spark-defaults",
                  SparkDistribution.jobJar().toAbsolutePath().toString(),
                  "--input",
                  input.toString(),
                  "--output",
                  output.toString(),
                  "--op",
                  "rms_norm"));
      Optional<Integer> exit = driver.awaitExit(JOB_TIMEOUT);
      progress("job ended: %s", exit.map(code -> "exit code " + code).orElse("still running"));
      assertThat(exit).as("the job's exit code\n%s", cluster.logTails()).contains(0);
      assertThat(driver.text()).as("the job's summary").containsPattern("rows\\s+" + ROWS + "\\b");
      String workers =
          String.join(
              "\n",
              cluster.workers().stream()
                  .map(worker -> LoggedProcess.read(worker.process().log()))
                  .toList());
      assertThat(workers)
          .as("the executors' launch commands: the cluster's options and the project's")
          .contains("-XX:+UseSerialGC", "-XX:PerMethodTrapLimit=1000");
      progress("%s", RmsNormOutput.assertPlacementLoggedOnce(cluster, ON_GPU_OR_SIMD));
    }
    RmsNormOutput.check(output, seed, ROWS, WIDTH);
    progress("output checked");
  }

  private void progress(String format, Object... arguments) {
    System.out.printf(
        Locale.ROOT,
        "SparkSubmitScriptIT %5.1f s: %s%n",
        (System.nanoTime() - started) / 1e9,
        String.format(Locale.ROOT, format, arguments));
  }
}

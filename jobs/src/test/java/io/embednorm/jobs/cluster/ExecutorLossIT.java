package io.embednorm.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.jobs.NormalizeEmbeddingsJob;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged spark-submit job on a real standalone cluster (a master and two one-core workers,
 * each its own JVM) losing an executor mid-job: one executor JVM is killed with SIGKILL once it
 * finished a few tasks, Spark reruns its tasks elsewhere, and the output still holds every row
 * exactly once, each normalized correctly. The cluster's logs stay in the temporary folder when the
 * test fails.
 */
class ExecutorLossIT {
  private static final int FILES = 32;
  private static final int ROWS_PER_FILE = 1_000;
  private static final int ROWS = FILES * ROWS_PER_FILE;
  private static final int WIDTH = 32;

  /** Tasks an executor finishes before it is killed: the schema's and at least one write. */
  private static final int TASKS_BEFORE_KILL = 2;

  private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
  private static final Pattern RUNNING_TASK = Pattern.compile("Running task ");
  private static final Pattern FINISHED_TASK = Pattern.compile("Finished task ");
  private static final Pattern LOST_EXECUTOR = Pattern.compile("Lost executor \\d+");

  /**
   * Each input file its own task: Spark packs small files into one task up to maxPartitionBytes,
   * counting openCostInBytes per file, so an open cost of that size keeps them apart.
   */
  private static final Map<String, String> ONE_TASK_PER_FILE =
      Map.of(
          "spark.sql.files.maxPartitionBytes", "128m",
          "spark.sql.files.openCostInBytes", "128m");

  /** The columnar operator's placement line, which the row path never logs. */
  private static final Pattern COLUMNAR_ON_CPU = Pattern.compile("normalizes on cpu ");

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path folder;

  private final long started = System.nanoTime();

  @Test
  void jobCompletesWithEveryRowOnceAfterAnExecutorIsKilled() throws IOException {
    long seed = Long.getLong("embednorm.test.seed", System.nanoTime());
    progress("seed %d, folder %s", seed, folder);
    Path input = Files.createDirectories(folder.resolve("input"));
    Path output = folder.resolve("output");
    CompletableFuture<Void> written = CompletableFuture.runAsync(() -> writeInput(input, seed));
    try (StandaloneCluster cluster = StandaloneCluster.start(folder.resolve("cluster"), 2)) {
      written.join();
      progress("cluster up at %s, input written", cluster.masterUrl());
      Map<String, String> configuration = new java.util.HashMap<>(ONE_TASK_PER_FILE);
      configuration.put("spark.executor.memory", "1g");
      configuration.put("spark.cores.max", "2");
      // As conf/spark-defaults.conf sets it for users: the columnar operator runs on the executors.
      configuration.put("spark.sql.extensions", "io.embednorm.spark.EmbedNormExtensions");
      LoggedProcess driver =
          cluster.submit(
              SparkDistribution.jobJar(),
              NormalizeEmbeddingsJob.class.getName(),
              configuration,
              List.of(
                  "--input", input.toString(), "--output", output.toString(), "--op", "rms_norm"));
      StandaloneCluster.Executor killed = killAfterFinishedTasks(cluster, driver);
      progress("%s", cluster.cpuTimes());
      progress("killed executor %s of worker %d", killed.executorId(), killed.worker());
      Optional<Integer> exit = driver.awaitExit(JOB_TIMEOUT);
      progress("job ended: %s", exit.map(code -> "exit code " + code).orElse("still running"));
      assertThat(exit)
          .as(
              "the job's exit code after executor %s of worker %d was killed\n%s",
              killed.executorId(), killed.worker(), cluster.logTails())
          .contains(0);
      String driverLog = driver.text();
      assertThat(driverLog)
          .as("the driver noticed the lost executor\n%s", cluster.logTails())
          .containsPattern(LOST_EXECUTOR);
      assertThat(driverLog).as("the job's summary").containsPattern("rows\\s+" + ROWS + "\\b");
      progress("%s", RmsNormOutput.assertPlacementLoggedOnce(cluster, COLUMNAR_ON_CPU));
    }
    RmsNormOutput.check(output, seed, ROWS, WIDTH);
    progress("output checked");
  }

  /** {@link #FILES} Parquet files of sample rows: enough tasks to lose an executor among them. */
  private static void writeInput(Path input, long seed) {
    for (int file = 0; file < FILES; file++) {
      EmbeddingParquet.writeSample(
          input.resolve(String.format(Locale.ROOT, "part-%05d.parquet", file)),
          (long) file * ROWS_PER_FILE,
          ROWS_PER_FILE,
          WIDTH,
          seed);
    }
  }

  /**
   * Waits until an executor finished {@link #TASKS_BEFORE_KILL} tasks and runs one more, then kills
   * its JVM with SIGKILL while the job still runs.
   */
  private static StandaloneCluster.Executor killAfterFinishedTasks(
      StandaloneCluster cluster, LoggedProcess driver) {
    long deadline = System.nanoTime() + JOB_TIMEOUT.toNanos();
    while (driver.isAlive() && System.nanoTime() < deadline) {
      for (StandaloneCluster.Executor executor : cluster.executors()) {
        String log = LoggedProcess.read(executor.log());
        long finished = FINISHED_TASK.matcher(log).results().count();
        if (finished >= TASKS_BEFORE_KILL
            && RUNNING_TASK.matcher(log).results().count() > finished) {
          executor.process().destroyForcibly();
          executor.process().onExit().join();
          assertThat(driver.isAlive())
              .as("the job still ran when the executor was killed\n%s", cluster.logTails())
              .isTrue();
          return executor;
        }
      }
      LoggedProcess.sleep(Duration.ofMillis(50));
    }
    throw new AssertionError(
        "Cannot kill an executor mid-job: no executor finished "
            + TASKS_BEFORE_KILL
            + " tasks while the job ran (driver "
            + (driver.isAlive() ? "still running" : "ended")
            + ")\n"
            + cluster.logTails());
  }

  private void progress(String format, Object... arguments) {
    System.out.printf(
        Locale.ROOT,
        "ExecutorLossIT %5.1f s: %s%n",
        (System.nanoTime() - started) / 1e9,
        String.format(Locale.ROOT, format, arguments));
  }
}

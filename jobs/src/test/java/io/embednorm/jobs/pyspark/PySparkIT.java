package io.embednorm.jobs.pyspark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.jobs.cluster.LoggedProcess;
import io.embednorm.jobs.cluster.SparkDistribution;
import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python helper ({@code python/embednorm}) with real PySpark: runs {@code python3
 * python/tests/test_embednorm.py}, which checks {@code configure} on a new session and {@code
 * register} on an existing one against a float64 reference. PySpark comes from {@code
 * $EMBEDNORM_PYSPARK_HOME}, else {@code ../shared/pyspark} beside the repository (pyspark.zip,
 * py4j's zip and Spark's launch scripts); the test is skipped where that or {@code python3} is
 * missing.
 */
class PySparkIT {
  private static final Path REPOSITORY = Path.of("").toAbsolutePath().getParent();
  private static final Duration TIMEOUT = Duration.ofMinutes(6);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path folder;

  @Test
  void helperMatchesReferenceThroughPySpark() throws IOException {
    Path pyspark = pysparkHome();
    assumeTrue(
        Files.isRegularFile(pyspark.resolve("pyspark.zip")),
        "no PySpark at " + pyspark + " (set EMBEDNORM_PYSPARK_HOME)");
    assumeTrue(pythonRuns(), "no python3 on PATH");
    long seed = Long.getLong("embednorm.test.seed", System.nanoTime() & Integer.MAX_VALUE);
    System.out.println("PySparkIT seed " + seed + ", folder " + folder);

    SparkDistribution spark = SparkDistribution.create(folder.resolve("spark-home"));
    spark.addLaunchScripts(pyspark.resolve("spark-home"));
    Path configuration = spark.home().resolve("conf");
    Files.copy(
        REPOSITORY.resolve("conf/log4j2.properties"), configuration.resolve("log4j2.properties"));
    Files.writeString(
        configuration.resolve("spark-defaults.conf"),
        "spark.driver.extraJavaOptions "
            + String.join(" ", spark.jvmOptions())
            + "\nspark.ui.showConsoleProgress false\n");

    Map<String, String> environment =
        new HashMap<>(spark.environment(Files.createDirectories(folder.resolve("local"))));
    environment.put("PYTHONPATH", pythonPath(pyspark));
    environment.put("EMBEDNORM_JAR", SparkDistribution.jobJar().toAbsolutePath().toString());
    environment.put("EMBEDNORM_TEST_SEED", Long.toString(seed));
    List<String> command =
        List.of("python3", REPOSITORY.resolve("python/tests/test_embednorm.py").toString());
    try (LoggedProcess python =
        LoggedProcess.start("python3", command, environment, folder.resolve("python.log"))) {
      Optional<Integer> exit = python.awaitExit(TIMEOUT);
      String output = python.text();
      System.out.println(python.tail(40));
      assertThat(exit).as("exit code of %s, seed %d\n%s", command, seed, output).contains(0);
      assertThat(output)
          .containsPattern("configure: \\d+ results match the reference")
          .containsPattern("register: \\d+ results match the reference")
          .contains("Ran 2 tests")
          .containsPattern("(?m)^OK$");
    }
  }

  private static Path pysparkHome() {
    String configured = System.getenv("EMBEDNORM_PYSPARK_HOME");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    return REPOSITORY.resolveSibling("shared").resolve("pyspark");
  }

  private static boolean pythonRuns() {
    try {
      Process process =
          new ProcessBuilder("python3", "--version")
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      return process.waitFor() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static String pythonPath(Path pyspark) throws IOException {
    List<String> entries = new ArrayList<>();
    entries.add(pyspark.resolve("pyspark.zip").toAbsolutePath().toString());
    try (DirectoryStream<Path> zips = Files.newDirectoryStream(pyspark, "py4j-*-src.zip")) {
      zips.forEach(zip -> entries.add(zip.toAbsolutePath().toString()));
    }
    return String.join(File.pathSeparator, entries);
  }
}

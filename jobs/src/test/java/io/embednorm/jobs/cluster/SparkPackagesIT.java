package io.embednorm.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.jobs.NormalizeEmbeddingsJob;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's {@code spark-submit --packages} command, run through Spark's own {@code
 * bin/spark-submit} ({@code shared/pyspark/spark-home}; the test skips where it is absent): the
 * artifact {@code io.embednorm:embednorm-spark-<line>_<scala>} that package lays out as a Maven
 * repository ({@code target/spark-package}) is copied into a temporary file repository, Ivy
 * resolves it from there alone (its own temporary Ivy folder, and a temporary {@code user.home} so
 * that no {@code ~/.m2} takes part), and the normalize job runs {@code rms_norm} from that jar on
 * {@code local[2]}, checked against a float64 reference.
 */
class SparkPackagesIT {
  private static final int ROWS = 400;
  private static final int WIDTH = 32;
  private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
  private static final Path PACKAGE = Path.of("target", "spark-package");
  private static final Path PROJECT_DEFAULTS = Path.of("..", "conf", "spark-defaults.conf");
  private static final Pattern ARTIFACT_ID =
      Pattern.compile("<artifactId>(embednorm-spark-[^<]+)</artifactId>");
  private static final Pattern IVY_REPORT = Pattern.compile("found |downloading |resolve \\d+ms");
  private static final Pattern VERSION = Pattern.compile("<version>([^<]+)</version>");

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path folder;

  @Test
  void theLinesArtifactResolvesFromAFileRepositoryAndRunsRmsNorm() throws IOException {
    Optional<Path> scripts = SparkDistribution.launchScripts();
    assumeTrue(
        scripts.isPresent(),
        "no shared/pyspark/spark-home in or above " + Path.of("").toAbsolutePath());
    String pom = Files.readString(PACKAGE.resolve("pom.xml"));
    assertThat(pom).as("the artifact's pom: Spark provides the rest").doesNotContain("<dependenc");
    String coordinates = "io.embednorm:" + group(ARTIFACT_ID, pom) + ":" + group(VERSION, pom);
    Path repository = copyRepository(folder.resolve("repository"));
    long seed = Long.getLong("embednorm.test.seed", System.nanoTime());
    Path input = Files.createDirectories(folder.resolve("input"));
    Path output = folder.resolve("output");
    EmbeddingParquet.writeSample(input.resolve("part-00000.parquet"), 0, ROWS, WIDTH, seed);

    SparkDistribution spark = SparkDistribution.create(folder.resolve("spark-home"));
    Path submit = spark.addLaunchScripts(scripts.get());
    Map<String, String> environment =
        new HashMap<>(spark.environment(Files.createDirectories(folder.resolve("local"))));
    Path home = Files.createDirectories(folder.resolve("home"));
    // No ~/.m2 (Spark's first resolver) and no network: any HTTP request would meet a closed port.
    environment.put(
        "SPARK_SUBMIT_OPTS",
        "-Duser.home="
            + home
            + " -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=9"
            + " -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=9");
    List<String> command =
        List.of(
            submit.toString(),
            "--master",
            "local[2]",
            "--packages",
            coordinates,
            "--repositories",
            repository.toUri().toString(),
            "--conf",
            "spark.jars.ivy=" + folder.resolve("ivy"),
            "--conf",
            "spark.ui.enabled=false",
            "--properties-file",
            PROJECT_DEFAULTS.toAbsolutePath().normalize().toString(),
            "--class",
            NormalizeEmbeddingsJob.class.getName(),
            "spark-internal",
            "--input",
            input.toString(),
            "--output",
            output.toString(),
            "--op",
            "rms_norm");
    try (LoggedProcess driver =
        LoggedProcess.start("spark-submit", command, environment, folder.resolve("driver.log"))) {
      Optional<Integer> exit = driver.awaitExit(JOB_TIMEOUT);
      driver.text().lines().filter(IVY_REPORT.asPredicate()).forEach(System.out::println);
      assertThat(exit).as("seed %d, the job's exit code\n%s", seed, driver.tail(40)).contains(0);
      assertThat(driver.text())
          .as("Ivy's resolution: from the file repository")
          .contains(
              "found " + coordinates.replaceFirst(":", "#").replaceFirst(":", ";") + " in repo-1")
          .containsPattern("rows\\s+" + ROWS + "\\b");
    }
    RmsNormOutput.check(output, seed, ROWS, WIDTH);
  }

  private static String group(Pattern pattern, String text) {
    Matcher matcher = pattern.matcher(text);
    assertThat(matcher.find()).as("%s in the artifact's pom", pattern).isTrue();
    return matcher.group(1);
  }

  /** Copies the build's repository (target/spark-package/repository) into {@code target}. */
  private static Path copyRepository(Path target) throws IOException {
    Path source = PACKAGE.resolve("repository");
    try (Stream<Path> files = Files.walk(source)) {
      for (Path file : files.toList()) {
        Path copy = target.resolve(source.relativize(file).toString());
        if (Files.isDirectory(file)) {
          Files.createDirectories(copy);
        } else {
          Files.copy(file, copy);
        }
      }
    }
    return target;
  }
}

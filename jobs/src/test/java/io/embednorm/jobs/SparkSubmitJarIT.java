package io.embednorm.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The packaged spark-submit jar (run by failsafe after {@code package}): embednorm, its kernels and
 * picocli inside; Spark, Scala and Arrow not, since Spark 4.1 brings them (Arrow 18.3.0).
 */
class SparkSubmitJarIT {

  @Test
  void holdsEmbednormAndNotSpark() throws IOException {
    Path jar = findJar();
    List<String> entries = new ArrayList<>();
    try (JarFile file = new JarFile(jar.toFile())) {
      Collections.list(file.entries()).forEach(entry -> entries.add(entry.getName()));
      assertThat(file.getManifest().getMainAttributes().getValue("Main-Class"))
          .isEqualTo(NormalizeEmbeddingsJob.class.getName());
    }
    assertThat(entries)
        .contains(
            "io/embednorm/jobs/NormalizeEmbeddingsJob.class",
            "io/embednorm/spark/EmbedNormExtensions.class",
            "io/embednorm/arrow/ArrowNormalizer.class",
            "io/embednorm/engine/cpu/CpuKernels.class",
            "picocli/CommandLine.class");
    assertThat(entries)
        .noneMatch(name -> name.startsWith("org/apache/spark/"))
        .noneMatch(name -> name.startsWith("scala/"))
        .noneMatch(name -> name.startsWith("org/apache/arrow/"))
        .noneMatch(name -> name.startsWith("org/apache/hadoop/"));
  }

  private static Path findJar() throws IOException {
    try (DirectoryStream<Path> jars =
        Files.newDirectoryStream(Path.of("target"), "embednorm-jobs-*-spark-submit.jar")) {
      for (Path jar : jars) {
        return jar;
      }
    }
    throw new AssertionError("no spark-submit jar in target/: run after package");
  }
}

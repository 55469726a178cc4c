package io.embednorm.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.jobs.cluster.SparkDistribution;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The packaged spark-submit jar (run by failsafe after {@code package}): embednorm, both engines
 * and picocli inside; Spark, Scala and Arrow not, since Spark 4.1 brings them (Arrow 18.3.0).
 */
class SparkSubmitJarIT {

  @Test
  void holdsEmbednormAndNotSpark() throws IOException {
    Path jar = SparkDistribution.jobJar();
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
            "io/embednorm/engine/Engines.class",
            "picocli/CommandLine.class");
    assertThat(entries)
        .noneMatch(name -> name.startsWith("org/apache/spark/"))
        .noneMatch(name -> name.startsWith("scala/"))
        .noneMatch(name -> name.startsWith("org/apache/arrow/"))
        .noneMatch(name -> name.startsWith("org/apache/hadoop/"));
  }

  /**
   * Engines finds the engines with ServiceLoader, so the jar must merge both engine modules'
   * service files (a jar holding only one would run on the CPU, or not at all), and every class a
   * service file names must be inside.
   */
  @Test
  void listsBothEnginesInItsServiceFiles() throws IOException {
    Path jar = SparkDistribution.jobJar();
    try (JarFile file = new JarFile(jar.toFile())) {
      List<String> providers = services(file, "io.embednorm.engine.spi.EngineProvider");
      assertThat(providers)
          .containsExactlyInAnyOrder(
              "io.embednorm.engine.cpu.CpuEngineProvider",
              "io.embednorm.engine.cuda.CudaEngineProvider");
      assertThat(services(file, "io.embednorm.engine.ArrayKernels")).hasSize(1);
      List<String> named = new ArrayList<>();
      Collections.list(file.entries()).stream()
          .map(JarEntry::getName)
          .filter(name -> name.startsWith(SERVICES) && !name.endsWith("/"))
          .forEach(name -> named.addAll(services(file, name.substring(SERVICES.length()))));
      assertThat(named)
          .isNotEmpty()
          .allSatisfy(
              name ->
                  assertThat(file.getEntry(name.replace('.', '/') + ".class"))
                      .as("class %s named in META-INF/services", name)
                      .isNotNull());
    }
  }

  private static final String SERVICES = "META-INF/services/";

  /** The implementations a service file of the jar names, comments and blank lines left out. */
  private static List<String> services(JarFile file, String service) {
    JarEntry entry = file.getJarEntry(SERVICES + service);
    assertThat(entry).as("%s%s in the jar", SERVICES, service).isNotNull();
    try (InputStream in = file.getInputStream(entry)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8)
          .lines()
          .map(line -> line.replaceFirst("#.*", "").strip())
          .filter(line -> !line.isEmpty())
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

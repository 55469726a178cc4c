package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.spark.internal.ConfigurationDocumentation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The typed registry of {@code spark.embednorm.*} settings and docs/CONFIGURATION.md; no Spark. */
class EmbedNormConfigTest {

  @Test
  void namesTypesAndDefaults() {
    assertThat(EmbedNormConfig.entries().stream().map(EmbedNormConfig.Entry::name))
        .containsExactly(
            "spark.embednorm.device",
            "spark.embednorm.batchRows",
            "spark.embednorm.concurrentGpuTasks",
            "spark.embednorm.explain",
            "spark.embednorm.columnar");
    assertThat(EmbedNormConfig.DEVICE.defaultValue()).isEqualTo(DeviceChoice.AUTO);
    assertThat(EmbedNormConfig.BATCH_ROWS.defaultValue()).isEqualTo(4096);
    assertThat(EmbedNormConfig.CONCURRENT_GPU_TASKS.defaultValue()).isEqualTo(1);
    assertThat(EmbedNormConfig.EXPLAIN.defaultValue()).isFalse();
    assertThat(EmbedNormConfig.COLUMNAR.defaultValue()).isTrue();
    for (EmbedNormConfig.Entry<?> entry : EmbedNormConfig.entries()) {
      assertThat(entry.documentation()).as(entry.name()).isNotBlank();
      assertThat(entry.parse(entry.defaultText())).as(entry.name()).isEqualTo(entry.defaultValue());
    }
  }

  @Test
  void readsFromSparkConfWithDefaultsForUnsetKeys() {
    SparkConf conf =
        new SparkConf(false)
            .set("spark.embednorm.device", " GPU ")
            .set("spark.embednorm.batchRows", "1024")
            .set("spark.embednorm.explain", "true");
    assertThat(EmbedNormConfig.DEVICE.read(conf)).isEqualTo(DeviceChoice.GPU);
    assertThat(EmbedNormConfig.BATCH_ROWS.read(conf)).isEqualTo(1024);
    assertThat(EmbedNormConfig.CONCURRENT_GPU_TASKS.read(conf)).isEqualTo(1);
    assertThat(EmbedNormConfig.EXPLAIN.read(conf)).isTrue();
    assertThat(EmbedNormConfig.DEVICE.read(Map.<String, String>of()::get))
        .isEqualTo(DeviceChoice.AUTO);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "spark.embednorm.batchRows|abc|expected a positive integer, got 'abc'",
        "spark.embednorm.batchRows|0|expected a positive integer, got '0'",
        "spark.embednorm.batchRows|-5|expected a positive integer, got '-5'",
        "spark.embednorm.batchRows|9999999999|expected a positive integer, got '9999999999'",
        "spark.embednorm.concurrentGpuTasks|1.5|expected a positive integer, got '1.5'",
        "spark.embednorm.device|tpu|expected one of auto, cpu, gpu, got 'tpu'",
        "spark.embednorm.explain|yes|expected true or false, got 'yes'",
      })
  void invalidValuesNameTheKeyTheExpectationAndTheValue(String key, String value, String why) {
    SparkConf conf = new SparkConf(false).set(key, value);
    EmbedNormConfig.Entry<?> entry = EmbedNormConfig.entry(key).orElseThrow();
    assertThatThrownBy(() -> entry.read(conf))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot read " + key + ": " + why);
    assertThatThrownBy(() -> EmbedNormConfig.validate(conf))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot read " + key + ": " + why);
  }

  @Test
  void validateRejectsUnknownKeysAndIgnoresOtherPrefixes() {
    EmbedNormConfig.validate(
        Map.of("spark.embednorm.device", "cpu", "spark.sql.shuffle.partitions", "2"));
    assertThatThrownBy(() -> EmbedNormConfig.validate(Map.of("spark.embednorm.devise", "gpu")))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith(
            "Cannot read spark.embednorm.devise: no such setting; known settings")
        .hasMessageContaining("spark.embednorm.device");
  }

  /** Regenerate with ConfigurationDocumentation.main("docs/CONFIGURATION.md") from the root. */
  @Test
  void configurationPageListsExactlyTheRegistry() throws IOException {
    String page = Files.readString(configurationPage(), StandardCharsets.UTF_8);
    assertThat(ConfigurationDocumentation.generatedSection(page))
        .as(
            "the settings table of docs/CONFIGURATION.md; refresh it with"
                + " io.embednorm.spark.internal.ConfigurationDocumentation")
        .isEqualTo(ConfigurationDocumentation.table());
    List<String> documentedKeys =
        page.lines()
            .filter(line -> line.startsWith("| `spark.embednorm."))
            .map(line -> line.substring(3, line.indexOf('`', 3)))
            .collect(Collectors.toList());
    assertThat(documentedKeys)
        .containsExactlyElementsOf(
            EmbedNormConfig.entries().stream().map(EmbedNormConfig.Entry::name).toList());
  }

  @Test
  void regenerateReplacesOnlyTheTable() {
    String page =
        "intro\n"
            + ConfigurationDocumentation.BEGIN
            + "\nstale\n"
            + ConfigurationDocumentation.END
            + "\noutro\n";
    String regenerated = ConfigurationDocumentation.regenerate(page);
    assertThat(regenerated).startsWith("intro\n").endsWith("\noutro\n").doesNotContain("stale");
    assertThat(ConfigurationDocumentation.generatedSection(regenerated))
        .isEqualTo(ConfigurationDocumentation.table());
  }

  /** Surefire runs in the module directory; the page is at the repository root. */
  private static Path configurationPage() {
    String root = System.getProperty("maven.multiModuleProjectDirectory");
    for (Path candidate :
        new Path[] {
          root == null ? null : Paths.get(root, "docs", "CONFIGURATION.md"),
          Paths.get("..", "docs", "CONFIGURATION.md"),
          Paths.get("docs", "CONFIGURATION.md")
        }) {
      if (candidate != null && Files.isRegularFile(candidate)) {
        return candidate;
      }
    }
    throw new AssertionError(
        "Cannot find docs/CONFIGURATION.md from " + Paths.get("").toAbsolutePath());
  }
}

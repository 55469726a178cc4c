package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code --version} names embednorm's build, Spark and Java, for every command. */
class VersionTest {
  /** The Maven project version as the build filters it in, e.g. 0.1.0-SNAPSHOT. */
  private static final String MAVEN_VERSION = "\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?";

  /** In a new JVM as bin/embednorm runs it, which exits through System.exit. */
  @Test
  void topLevelVersionNamesEmbednormSparkAndJava() {
    CommandProcess result = CommandProcess.run(Map.of(), EmbedNormCli.class, "--version");
    assertThat(result.exitCode()).as(result.err()).isZero();
    assertVersionLines(result.out());
  }

  @Test
  void normalizeEntryPointPrintsTheVersion() {
    CommandProcess result = CommandProcess.run(Map.of(), NormalizeCommand.class, "--version");
    assertThat(result.exitCode()).as(result.err()).isZero();
    assertVersionLines(result.out());
  }

  @Test
  void everySubcommandPrintsTheSameVersion() {
    String expected = CommandOutput.run("--version").out();
    for (String command : new String[] {"demo", "generate", "sql", "job"}) {
      CommandOutput result = CommandOutput.run(command, "--version");
      assertThat(result.exitCode()).as(command).isZero();
      assertThat(result.out()).as(command).isEqualTo(expected);
    }
    CommandOutput normalize =
        CommandOutput.capture(() -> NormalizeCommand.run(new String[] {"--version"}));
    assertThat(normalize.exitCode()).isZero();
    assertThat(normalize.out()).isEqualTo(expected);
  }

  private static void assertVersionLines(String out) {
    assertThat(out.lines().toList())
        .as(out)
        .hasSize(3)
        .satisfies(lines -> assertThat(lines.get(0)).matches("embednorm " + MAVEN_VERSION))
        .satisfies(lines -> assertThat(lines.get(1)).matches("Spark 4\\.\\d+\\.\\d+.*"))
        .satisfies(
            lines -> assertThat(lines.get(2)).startsWith("Java " + Runtime.version() + " ("));
  }
}

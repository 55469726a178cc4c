package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Common mistakes on the command line print one line on stderr, no stack trace and no Spark log
 * lines, in a new JVM as bin/embednorm runs it (issue 29, finding 7).
 */
class CommandErrorsTest {
  @TempDir Path folder;

  @Test
  void jobWithMissingInputPrintsOneLine() {
    Path input = folder.resolve("missing");
    CommandProcess result =
        CommandProcess.run(
            Map.of(),
            EmbedNormCli.class,
            "job",
            "--input",
            input.toString(),
            "--output",
            folder.resolve("out").toString(),
            "--op",
            "rms_norm");
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.errLines())
        .as(result.err())
        .containsExactly(
            "embednorm job: Cannot read input '" + input + "': no such file or directory");
  }

  /** Spark logged this with an 83-line stack trace before its own error. */
  @Test
  void sqlOnMissingPathPrintsOneLine() {
    Path missing = folder.resolve("missing");
    CommandProcess result =
        CommandProcess.run(
            Map.of(), EmbedNormCli.class, "sql", "SELECT * FROM parquet.`" + missing + "`");
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.errLines())
        .as(result.err())
        .containsExactly(
            "embednorm sql: Cannot read input 'file:" + missing + "': no such file or directory");
  }

  /**
   * Spark's executor and scheduler logged the failed tasks, with stack traces, before the command's
   * line; the message called gamma "weight".
   */
  @Test
  void sqlWithGammaOfWrongLengthPrintsOneLine() {
    CommandProcess result =
        CommandProcess.run(
            Map.of(),
            EmbedNormCli.class,
            "sql",
            "SELECT layer_norm(array(float(id), 1f, 2f, 3f, 4f), 1e-5, array(1, 1, 1)) FROM"
                + " range(3)");
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.errLines()).as(result.err()).hasSize(1);
    assertThat(result.err())
        .containsPattern(
            "^embednorm sql: Cannot apply layer_norm to (a row of partition \\d+|row \\d+):"
                + " gamma has 3 elements but the row has 5\n$");
  }
}

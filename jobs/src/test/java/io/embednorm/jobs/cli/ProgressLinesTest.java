package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.InternalSwitches;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark command that runs longer than the progress interval prints progress lines on stderr while
 * its stages run; here the interval is 100 ms, so that a small job takes long enough.
 */
class ProgressLinesTest {
  private static final String LINE =
      "embednorm job: stage \\d+: \\d+/\\d+ tasks, [\\d.]+[kMGT]? rows";

  @TempDir Path folder;

  @AfterEach
  void restoreInterval() {
    System.clearProperty(InternalSwitches.PROGRESS_MILLIS.name());
  }

  @Test
  void jobPrintsProgressLines() {
    String input = folder.resolve("input").toString();
    CommandOutput generated =
        CommandOutput.run(
            "generate", "--rows", "200000", "--dim", "64", "--seed", "7", "--output", input);
    assertThat(generated.exitCode()).as(generated.err()).isZero();
    System.setProperty(InternalSwitches.PROGRESS_MILLIS.name(), "100");
    CommandOutput result =
        CommandOutput.run(
            "job",
            "--input",
            input,
            "--output",
            folder.resolve("output").toString(),
            "--op",
            "rms_norm");
    assertThat(result.exitCode()).as(result.err()).isZero();
    assertThat(result.err().lines().toList())
        .as(result.err())
        .anySatisfy(line -> assertThat(line).matches(LINE));
    assertThat(result.err().lines().filter(line -> !line.matches(LINE)).toList())
        .as("stderr apart from the progress lines")
        .isEmpty();
  }
}

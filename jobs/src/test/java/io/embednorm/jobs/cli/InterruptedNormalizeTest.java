package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.Subprocesses;
import io.embednorm.jobs.internal.SampleData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code embednorm normalize} in a subprocess JVM, stopped while it writes a 50 MB file: SIGTERM
 * leaves no partial file and the previous output; SIGKILL leaves a partial file that the next run
 * removes, saying so.
 */
class InterruptedNormalizeTest {
  private static final int ROWS = 25_000;
  private static final int WIDTH = 512;

  @TempDir Path folder;

  @Test
  void sigtermLeavesNothingAndSigkillLeavesWhatTheNextRunRemoves() throws Exception {
    Path input = folder.resolve("in.arrow");
    try (BufferAllocator allocator = new RootAllocator()) {
      SampleData.writeArrow(allocator, input, ROWS, WIDTH, 3);
    }
    Path output = folder.resolve("out.arrow");
    Files.writeString(output, "previous output");

    Process stopped = startWhenWriting(input, output);
    try {
      stopped.destroy(); // SIGTERM
      assertThat(stopped.waitFor(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      stopped.destroyForcibly();
    }
    assertThat(partialFiles()).isEmpty();
    assertThat(Files.readString(output)).isEqualTo("previous output");

    Process killed = startWhenWriting(input, output);
    killed.destroyForcibly(); // SIGKILL
    assertThat(killed.waitFor(60, TimeUnit.SECONDS)).isTrue();
    Path leftover = folder.resolve("out.arrow.embednorm-partial-" + killed.pid());
    assertThat(partialFiles()).containsExactly(leftover.getFileName().toString());
    assertThat(Files.readString(output)).isEqualTo("previous output");

    CommandOutput next =
        CommandOutput.run(
            "normalize",
            "--input",
            input.toString(),
            "--output",
            output.toString(),
            "--op",
            "l2_normalize",
            "--device",
            "cpu");
    assertThat(next.exitCode()).as(next.err()).isZero();
    assertThat(next.err())
        .contains(
            "embednorm: removed '"
                + leftover
                + "', a partial output left by an interrupted run (process "
                + killed.pid()
                + ")");
    assertThat(partialFiles()).isEmpty();
    assertThat(Files.size(output)).isEqualTo(Files.size(input));
  }

  /** Starts the command in a JVM of its own and returns once its partial output exists. */
  private Process startWhenWriting(Path input, Path output) throws Exception {
    List<String> command =
        Subprocesses.javaCommand(
            "io.embednorm.jobs.cli.NormalizeCommand",
            List.of(
                "--input",
                input.toString(),
                "--output",
                output.toString(),
                "--op",
                "rms_norm",
                "--device",
                "cpu"));
    Process process =
        new ProcessBuilder(command)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!partialFiles().isEmpty()) {
        return process;
      }
      if (!process.isAlive()) {
        throw new AssertionError(
            "normalize ended (exit " + process.exitValue() + ") before it could be interrupted");
      }
      Thread.sleep(1);
    }
    process.destroyForcibly();
    throw new AssertionError("normalize did not start writing within 60 s");
  }

  private List<String> partialFiles() throws IOException {
    return Subprocesses.partialFiles(folder);
  }
}

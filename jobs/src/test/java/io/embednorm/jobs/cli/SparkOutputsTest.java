package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the Spark commands write over: never their input, and with overwrite only a previous Spark
 * output, also one left by an interrupted run (io.embednorm.jobs.internal.OutputFolders).
 */
class SparkOutputsTest {
  @TempDir Path folder;

  @Test
  void jobOverwritingItsInputIsRefusedAndTheInputKept() throws IOException {
    Path input = folder.resolve("data");
    generate(input);
    List<String> before = tree(input);
    for (Path output : List.of(input, folder, input.resolve("out"))) {
      CommandOutput job =
          CommandOutput.run(
              "job",
              "--input",
              input.toString(),
              "--output",
              output.toString(),
              "--op",
              "rms_norm",
              "--mode",
              "overwrite");
      String why =
          output.equals(input) ? "it is the input" : output.equals(folder) ? "it holds" : "inside";
      assertThat(job.exitCode()).as(job.err()).isEqualTo(1);
      assertThat(job.err().strip().lines()).hasSize(1);
      assertThat(job.err())
          .startsWith("embednorm job: Cannot write output '" + output + "': ")
          .contains(why)
          .contains("'" + input + "'");
      assertThat(tree(input)).isEqualTo(before);
    }
  }

  @Test
  void sqlAndGenerateReplaceOnlyAPreviousOutput() throws IOException {
    Path mine = Files.createDirectory(folder.resolve("mine"));
    Files.writeString(mine.resolve("notes.txt"), "keep me");
    Files.createDirectories(mine.resolve("photos")).resolve("a.jpg");
    Files.writeString(mine.resolve("photos").resolve("a.jpg"), "keep me too");
    List<String> before = tree(mine);
    CommandOutput sql = CommandOutput.run("sql", "SELECT 1 AS x", "--output", mine.toString());
    CommandOutput generate =
        CommandOutput.run("generate", "--rows", "5", "--dim", "3", "--output", mine.toString());
    for (CommandOutput result : List.of(sql, generate)) {
      assertThat(result.exitCode()).as(result.err()).isEqualTo(1);
      assertThat(result.err())
          .containsPattern(
              "embednorm (sql|generate): Cannot write output '"
                  + mine
                  + "': it holds '(notes.txt|photos)', which is not Spark output");
    }
    assertThat(tree(mine)).isEqualTo(before);

    // A previous output, left half-written by an interrupted run, is replaced.
    Path previous = folder.resolve("previous");
    generate(previous);
    Path attempt = previous.resolve("_temporary/0/_temporary/attempt_1/part-00000.parquet");
    Files.createDirectories(attempt.getParent());
    Files.writeString(attempt, "half");
    Files.delete(previous.resolve("_SUCCESS"));
    CommandOutput again =
        CommandOutput.run("sql", "SELECT 1 AS x", "--output", previous.toString());
    assertThat(again.exitCode()).as(again.err()).isZero();
    assertThat(previous.resolve("_temporary")).doesNotExist();
    assertThat(previous.resolve("_SUCCESS")).exists();
  }

  @Test
  void jobWithoutOverwriteRefusesAnExistingOutput() throws IOException {
    Path input = folder.resolve("data");
    generate(input);
    Path output = Files.createDirectory(folder.resolve("out"));
    CommandOutput job =
        CommandOutput.run(
            "job", "--input", input.toString(), "--output", output.toString(), "--op", "softmax");
    assertThat(job.exitCode()).isEqualTo(1);
    assertThat(job.err())
        .isEqualTo(
            "embednorm job: Cannot write output '"
                + output
                + "': it exists without _SUCCESS (an interrupted run?); pass --mode overwrite to"
                + " replace a previous output"
                + System.lineSeparator());
  }

  private static void generate(Path output) {
    CommandOutput result =
        CommandOutput.run("generate", "--rows", "20", "--dim", "4", "--output", output.toString());
    assertThat(result.exitCode()).as(result.err()).isZero();
  }

  /** Every path under {@code root}, relative, with file sizes. */
  private static List<String> tree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      return paths
          .sorted()
          .map(
              path -> {
                try {
                  return root.relativize(path)
                      + (Files.isRegularFile(path) ? " " + Files.size(path) : "/");
                } catch (IOException failure) {
                  throw new java.io.UncheckedIOException(failure);
                }
              })
          .toList();
    }
  }
}

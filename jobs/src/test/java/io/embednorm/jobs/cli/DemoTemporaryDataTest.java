package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code demo} without {@code --workdir} writes its input and output to a temporary folder and
 * deletes it at the end, on failure and on SIGTERM. The demo runs in a child JVM whose
 * java.io.tmpdir is a folder of this test, so that what it leaves there can be listed. These runs
 * also check the summary and the one-line failure, as a user sees them.
 */
class DemoTemporaryDataTest {
  @TempDir Path root;

  @Test
  void demoLeavesNothingInItsTemporaryRoot() throws IOException {
    CommandProcess result =
        CommandProcess.run(
            List.of("-Djava.io.tmpdir=" + root),
            Map.of(),
            EmbedNormCli.class,
            "demo",
            "--rows",
            "2000",
            "--dim",
            "48",
            "--device",
            "cpu");
    assertThat(result.exitCode()).as(result.out() + result.err()).isZero();
    assertThat(result.out())
        .contains("rows       2000")
        .contains("mean(y^2) = 1 on 2000 rows")
        .contains("cpu, columnar batches (cpu was requested)")
        .contains("OK")
        .contains("(deleted now; --keep keeps it)");
    assertThat(entries()).isEmpty();
  }

  @Test
  void failedDemoLeavesNothingInItsTemporaryRoot() throws IOException {
    CommandProcess result =
        CommandProcess.run(
            List.of("-Djava.io.tmpdir=" + root),
            Map.of(),
            EmbedNormCli.class,
            "demo",
            "--rows",
            "10",
            "--dim",
            "4",
            "--device",
            "gpu");
    assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
    assertThat(result.errLines())
        .anySatisfy(line -> assertThat(line).startsWith("embednorm demo: Cannot use device gpu: "));
    assertThat(entries()).isEmpty();
  }

  @Test
  void terminatedDemoDeletesItsFolder() throws Exception {
    List<String> command =
        CommandProcess.command(
            List.of("-Djava.io.tmpdir=" + root),
            EmbedNormCli.class,
            "demo",
            "--rows",
            "20000000",
            "--dim",
            "16",
            "--device",
            "cpu");
    Process process =
        new ProcessBuilder(command)
            .redirectOutput(new File("/dev/null"))
            .redirectError(new File("/dev/null"))
            .start();
    try {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
      while (!demoFolderHolds("input.parquet") && System.nanoTime() < deadline) {
        assertThat(process.isAlive()).as("the demo ended before it wrote its input").isTrue();
        Thread.sleep(100);
      }
      assertThat(demoFolderHolds("input.parquet")).as("demo folder with its input").isTrue();
      process.destroy();
      assertThat(process.waitFor(1, TimeUnit.MINUTES)).as("demo ended on SIGTERM").isTrue();
    } finally {
      process.destroyForcibly();
    }
    assertThat(entries()).noneMatch(name -> name.startsWith("embednorm-demo-"));
  }

  private boolean demoFolderHolds(String name) throws IOException {
    try (Stream<Path> folders = Files.list(root)) {
      return folders.anyMatch(
          folder ->
              folder.getFileName().toString().startsWith("embednorm-demo-")
                  && Files.exists(folder.resolve(name)));
    }
  }

  /**
   * What is left in the root, apart from JCuda's native library, which JCuda extracts there once
   * and reuses (about 1 MB).
   */
  private List<String> entries() throws IOException {
    try (Stream<Path> entries = Files.list(root)) {
      return entries
          .map(entry -> entry.getFileName().toString())
          .filter(name -> !name.matches("libJCuda\\w*-[\\d.]+-[\\w-]+\\.so"))
          .toList();
    }
  }
}

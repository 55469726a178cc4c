package io.embednorm.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a test's {@code main} in a JVM of its own, on the test's class path: for checks of what a
 * fresh process does (which classes or drivers start), where other tests have started them already.
 */
public final class OwnJvm {
  private OwnJvm() {}

  /** Runs {@code main}, asserts that it exits with 0 within a minute, and returns its output. */
  public static String run(Class<?> main) throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    System.getProperty("java.class.path"),
                    main.getName()))
            .redirectErrorStream(true)
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    return output;
  }
}

package io.embednorm.jobs.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.IntSupplier;

/** Runs the command line in this JVM and captures what it prints. */
record CommandOutput(int exitCode, String out, String err) {

  static CommandOutput run(String... args) {
    return capture(() -> EmbedNormCli.run(args));
  }

  /** Runs {@code command}, which returns an exit code, capturing what it prints. */
  static CommandOutput capture(IntSupplier command) {
    PrintStream originalOut = System.out;
    PrintStream originalErr = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try {
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      int code = command.getAsInt();
      return new CommandOutput(
          code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(originalOut);
      System.setErr(originalErr);
    }
  }
}

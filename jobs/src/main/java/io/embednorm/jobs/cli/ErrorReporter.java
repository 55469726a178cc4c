package io.embednorm.jobs.cli;

import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Turns a failure into one line on stderr and exit code 1 (2 for bad usage, as picocli does). Set
 * {@code EMBEDNORM_DEBUG=1} for the stack trace.
 */
public final class ErrorReporter {
  /** Exit code of a command that failed while running. */
  public static final int FAILED = 1;

  private ErrorReporter() {}

  /** A command line for {@code command} that reports failures this way. */
  public static CommandLine commandLine(Object command) {
    CommandLine commandLine = new CommandLine(command);
    commandLine.setExecutionExceptionHandler(
        (failure, failedCommand, parseResult) ->
            report(
                failedCommand.getCommandSpec().qualifiedName(), failure, failedCommand.getErr()));
    return commandLine;
  }

  /** Prints the failure's one line (and stack trace where asked) to {@code err}; FAILED. */
  private static int report(String qualifiedName, Throwable failure, PrintWriter err) {
    err.println(qualifiedName + ": " + oneLine(failure));
    if (System.getenv("EMBEDNORM_DEBUG") != null) {
      failure.printStackTrace(err);
    }
    err.flush();
    return FAILED;
  }

  /** The first line of the innermost message that says something, e.g. Spark's cause. */
  static String oneLine(Throwable failure) {
    Throwable cause = failure;
    String message = null;
    while (cause != null) {
      if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
        message = cause.getMessage();
        if (cause instanceof io.embednorm.engine.EmbedNormException) {
          break;
        }
      }
      if (cause.getCause() == cause) {
        break;
      }
      cause = cause.getCause();
    }
    if (message == null) {
      return failure.getClass().getSimpleName();
    }
    String line = message.strip().lines().findFirst().orElse(message);
    return line;
  }
}

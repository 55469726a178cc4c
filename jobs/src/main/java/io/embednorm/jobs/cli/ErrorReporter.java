package io.embednorm.jobs.cli;

import java.io.PrintWriter;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Turns a failure into one line on stderr and exit code 1 (2 for bad usage, as picocli does). Set
 * {@code EMBEDNORM_DEBUG=1} for the stack trace.
 */
public final class ErrorReporter {
  /** Exit code of a command that failed while running. */
  public static final int FAILED = 1;

  private static final Pattern PATH_NOT_FOUND =
      Pattern.compile("\\[PATH_NOT_FOUND] Path does not exist: (.*?)\\.( SQLSTATE: \\w+)?");

  private static final Pattern REFUSED_ARGUMENT =
      Pattern.compile(
          "\\[DATATYPE_MISMATCH[.\\w]*] .* due to data type mismatch: (Cannot .*?)\\.?"
              + "( SQLSTATE: \\w+)?(; line \\d+ pos \\d+)?;?");

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
    return inOurWords(line);
  }

  /**
   * Spark's messages for the mistakes users make most, in embednorm's form: a missing path ({@code
   * [PATH_NOT_FOUND] Path does not exist: file:/x. SQLSTATE: 42K03}) and an argument embednorm's
   * functions refuse at analysis ({@code [DATATYPE_MISMATCH...] Cannot resolve "..." due to data
   * type mismatch: Cannot configure ...}). Matched on text: {@code normalize} runs without Spark's
   * classes.
   */
  static String inOurWords(String line) {
    Matcher missing = PATH_NOT_FOUND.matcher(line);
    if (missing.matches()) {
      return "Cannot read input '" + missing.group(1) + "': no such file or directory";
    }
    Matcher refused = REFUSED_ARGUMENT.matcher(line);
    if (refused.matches()) {
      return refused.group(1);
    }
    return line;
  }
}

package io.embednorm.jobs.cli;

import io.embednorm.jobs.NormalizationOptions;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code embednorm normalize}'s arguments in their plain form, read without picocli: every argument
 * a known option as {@code --name value} or {@code --name=value}, each at most once, the required
 * ones present, every value one that picocli would take as it is.
 *
 * <p>Why: picocli's set-up (its classes, too old a class version for class-data sharing, and the
 * annotations) took 0.2 s of the JVM's main thread before the command started, a fifth of the
 * command on a 1 GiB file (docs/PERFORMANCE.md). Anything else (help, version, an unknown or
 * repeated option, a value that starts with {@code -} or {@code @}, a number or path that does not
 * parse) gives empty, and picocli parses and reports it as before. PlainArgumentsTest checks that
 * both parsers give the same command for the same plain arguments.
 */
final class PlainArguments {
  /** The options this class reads; PlainArgumentsTest holds it equal to picocli's list. */
  static final Set<String> OPTIONS =
      Set.of("--input", "--output", "--column", "--op", "--eps", "--weight", "--bias", "--device");

  private static final Set<String> REQUIRED = Set.of("--input", "--output", "--op");

  private PlainArguments() {}

  /** The command these arguments describe, or empty where picocli must parse them. */
  static Optional<NormalizeCommand> parse(String[] arguments) {
    Map<String, String> values = new HashMap<>();
    for (int index = 0; index < arguments.length; index++) {
      String argument = arguments[index];
      int equals = argument.indexOf('=');
      String name = equals < 0 ? argument : argument.substring(0, equals);
      String value;
      if (equals >= 0) {
        value = argument.substring(equals + 1);
      } else if (index + 1 < arguments.length) {
        value = arguments[++index];
      } else {
        return Optional.empty();
      }
      if (!OPTIONS.contains(name) || looksLikeOption(value) || values.put(name, value) != null) {
        return Optional.empty();
      }
    }
    if (!values.keySet().containsAll(REQUIRED)) {
      return Optional.empty();
    }
    try {
      NormalizeCommand command = new NormalizeCommand();
      command.input = Path.of(values.get("--input"));
      command.output = Path.of(values.get("--output"));
      command.column = values.getOrDefault("--column", NormalizeCommand.DEFAULT_COLUMN);
      command.options =
          NormalizationOptions.of(
              values.get("--op"),
              values.containsKey("--eps") ? Double.valueOf(values.get("--eps")) : null,
              path(values.get("--weight")),
              path(values.get("--bias")),
              values.getOrDefault("--device", NormalizationOptions.DEFAULT_DEVICE));
      return Optional.of(command);
    } catch (NumberFormatException | InvalidPathException unparsable) {
      return Optional.empty(); // picocli says what is wrong with it
    }
  }

  /** Values picocli may read as an option, a negative number or an argument file. */
  private static boolean looksLikeOption(String value) {
    return value.startsWith("-") || value.startsWith("@");
  }

  private static Path path(String value) {
    return value == null ? null : Path.of(value);
  }
}

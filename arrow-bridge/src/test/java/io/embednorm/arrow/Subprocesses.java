package io.embednorm.arrow;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * For tests that stop a writer in a JVM of its own and look at what it left. Shared with the jobs
 * module's tests through this module's test-jar.
 */
public final class Subprocesses {
  private Subprocesses() {}

  /**
   * The command that runs {@code mainClass} in a new JVM with this JVM's class path and its {@code
   * --add-} options (the ones Arrow needs).
   */
  public static List<String> javaCommand(String mainClass, List<String> arguments) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(argument -> argument.startsWith("--add-"))
        .forEach(command::add);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    command.addAll(arguments);
    return command;
  }

  /** The names of the partial outputs ({@code *.embednorm-partial-<pid>}) in {@code folder}. */
  public static List<String> partialFiles(Path folder) throws IOException {
    try (Stream<Path> entries = Files.list(folder)) {
      return entries
          .map(entry -> entry.getFileName().toString())
          .filter(name -> name.contains(".embednorm-partial-"))
          .toList();
    }
  }
}

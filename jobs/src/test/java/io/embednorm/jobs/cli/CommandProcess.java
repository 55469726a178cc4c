package io.embednorm.jobs.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class in a new JVM as bin/embednorm does (conf/jvm.options, conf/log4j2.properties,
 * conf/ as embednorm.conf.dir), so that what Spark and log4j print on stderr is seen as a user sees
 * it: in this JVM log4j keeps writing to the stderr it found at start.
 */
record CommandProcess(int exitCode, String out, String err) {

  static CommandProcess run(Map<String, String> environment, Class<?> mainClass, String... args) {
    return run(List.of(), environment, mainClass, args);
  }

  /** As {@link #run(Map, Class, String...)}, with {@code jvmOptions} added to the JVM's. */
  static CommandProcess run(
      List<String> jvmOptions,
      Map<String, String> environment,
      Class<?> mainClass,
      String... args) {
    List<String> command = command(jvmOptions, mainClass, args);
    try {
      Path out = Files.createTempFile("embednorm-out", ".txt");
      Path err = Files.createTempFile("embednorm-err", ".txt");
      try {
        ProcessBuilder builder =
            new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().remove("EMBEDNORM_DEBUG");
        builder.environment().putAll(environment);
        Process process = builder.start();
        if (!process.waitFor(3, TimeUnit.MINUTES)) {
          process.destroyForcibly();
          throw new AssertionError("command did not finish in 3 minutes: " + command);
        }
        return new CommandProcess(
            process.exitValue(),
            Files.readString(out, StandardCharsets.UTF_8),
            withoutJdkNotice(Files.readString(err, StandardCharsets.UTF_8)));
      } finally {
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException failure) {
      throw new UncheckedIOException(failure);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new AssertionError(interrupted);
    }
  }

  /** The java command line that runs {@code mainClass} as bin/embednorm does. */
  static List<String> command(List<String> jvmOptions, Class<?> mainClass, String... args) {
    Path log4j = Path.of(System.getProperty("log4j2.configurationFile"));
    Path conf = log4j.getParent();
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    try {
      for (String line : Files.readAllLines(conf.resolve("jvm.options"))) {
        if (!line.isBlank() && !line.strip().startsWith("#")) {
          command.add(line.strip());
        }
      }
    } catch (IOException failure) {
      throw new UncheckedIOException(failure);
    }
    command.add("-Xmx1g");
    command.addAll(jvmOptions);
    command.add("-Dlog4j2.configurationFile=" + log4j);
    command.add("-Dembednorm.conf.dir=" + conf);
    command.add("-cp");
    command.add(
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
    command.add(mainClass.getName());
    command.addAll(List.of(args));
    return command;
  }

  /** bin/embednorm drops the JDK's line about the incubating Vector API; so does this. */
  private static String withoutJdkNotice(String err) {
    return err.replace("WARNING: Using incubator modules: jdk.incubator.vector\n", "");
  }

  /** The lines of stderr. */
  List<String> errLines() {
    return err.lines().toList();
  }
}

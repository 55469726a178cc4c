package io.embednorm.jobs.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A process started by the tests with its output (stdout and stderr together) in a log file.
 * Closing kills it and every process it started; whoever starts it closes it.
 */
public final class LoggedProcess implements AutoCloseable {
  private static final Duration POLL = Duration.ofMillis(100);

  private final String name;
  private final Process process;
  private final Path log;

  private LoggedProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  /**
   * Starts {@code command} with {@code environment} added to this JVM's, logging to {@code log}.
   */
  public static LoggedProcess start(
      String name, List<String> command, Map<String, String> environment, Path log) {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.redirectOutput(log.toFile());
    builder.environment().putAll(environment);
    try {
      return new LoggedProcess(name, builder.start(), log);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start " + name + ": " + e.getMessage(), e);
    }
  }

  public String name() {
    return name;
  }

  public ProcessHandle handle() {
    return process.toHandle();
  }

  public Path log() {
    return log;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /**
   * The first match of {@code pattern} in the log, waiting up to {@code timeout}; empty when the
   * process ended or the time ran out first.
   */
  public Optional<Matcher> awaitLine(Pattern pattern, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      boolean alive = process.isAlive();
      Matcher matcher = pattern.matcher(text());
      if (matcher.find()) {
        return Optional.of(matcher);
      }
      if (!alive || System.nanoTime() > deadline) {
        return Optional.empty();
      }
      sleep(POLL);
    }
  }

  /** The exit code, waiting up to {@code timeout}; empty when it still runs. */
  public Optional<Integer> awaitExit(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)
          ? Optional.of(process.exitValue())
          : Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  /** The whole log so far. */
  public String text() {
    return read(log);
  }

  /** The last {@code lines} lines of the log, under a heading with the process's name. */
  public String tail(int lines) {
    return tail(name, log, lines);
  }

  /** Kills the process's children, then the process, and waits for them to end. */
  @Override
  public void close() {
    List<ProcessHandle> children = process.toHandle().descendants().toList();
    children.forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    for (ProcessHandle child : children) {
      child.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(error -> child).join();
    }
    awaitExit(Duration.ofSeconds(10));
  }

  static String tail(String name, Path file, int lines) {
    List<String> all = read(file).lines().toList();
    return "---- "
        + name
        + " ("
        + file
        + "), last "
        + Math.min(lines, all.size())
        + " of "
        + all.size()
        + " lines\n"
        + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()))
        + "\n";
  }

  static String read(Path file) {
    try {
      return Files.exists(file) ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "(cannot read " + file + ": " + e.getMessage() + ")";
    }
  }

  static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}

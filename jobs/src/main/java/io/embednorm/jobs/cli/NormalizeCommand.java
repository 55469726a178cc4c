package io.embednorm.jobs.cli;

import io.embednorm.arrow.ArrowFiles;
import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.arrow.NormalizeResult;
import io.embednorm.arrow.PinnedAllocators;
import io.embednorm.jobs.NormalizationOptions;
import io.embednorm.kernels.DeviceChoice;
import io.embednorm.kernels.Normalization;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/** {@code embednorm normalize}: Arrow IPC file in, Arrow IPC file out, no Spark. */
@Command(
    name = "normalize",
    mixinStandardHelpOptions = true,
    description =
        "Normalizes one column of an Arrow IPC file into a new Arrow IPC file; other columns pass"
            + " through.")
final class NormalizeCommand implements Callable<Integer> {
  @Option(names = "--input", required = true, description = "Arrow IPC file to read.")
  Path input;

  @Option(names = "--output", required = true, description = "Arrow IPC file to write.")
  Path output;

  @Mixin NormalizationOptions options;

  @Option(
      names = "--column",
      defaultValue = "embedding",
      description = "Column to normalize (default: ${DEFAULT-VALUE}).")
  String column;

  /**
   * {@code bin/embednorm normalize} starts here rather than in {@link EmbedNormCli}, on a class
   * path without Spark: the same command, usage and error reporting under the name {@code embednorm
   * normalize}, without building the Spark commands (whose classes picocli would load). Exits with
   * the command's exit code.
   */
  public static void main(String[] args) {
    preload();
    CommandSpec top =
        CommandSpec.create()
            .name("embednorm")
            .addSubcommand("normalize", new CommandLine(new NormalizeCommand()));
    String[] command = new String[args.length + 1];
    command[0] = "normalize";
    System.arraycopy(args, 0, command, 1, args.length);
    System.exit(ErrorReporter.commandLine(top).execute(command));
  }

  /**
   * Classes whose static initialization takes a good part of a second each on a small machine:
   * Arrow's schema (its JSON mappers), Arrow's allocator (its logging and memory manager set-up)
   * and the CPU kernels (the Vector API's species and operators).
   */
  private static final List<String> SLOW_CLASSES =
      List.of(
          "org.apache.arrow.vector.types.pojo.Schema",
          "org.apache.arrow.memory.RootAllocator",
          "io.embednorm.kernels.cpu.RowPassSelection");

  /**
   * Initializes {@link #SLOW_CLASSES} on threads of their own while this one parses the arguments:
   * the command then finds them ready. Failures are left for the command to meet and report.
   */
  private static void preload() {
    for (String name : SLOW_CLASSES) {
      Thread loader =
          new Thread(
              () -> {
                try {
                  Class.forName(name, true, NormalizeCommand.class.getClassLoader());
                } catch (ClassNotFoundException | LinkageError ignored) {
                  // the command reports it when it gets there
                }
              },
              "embednorm-preload");
      loader.setDaemon(true);
      loader.start();
    }
  }

  @Override
  public Integer call() {
    Normalization normalization = options.normalization();
    DeviceChoice choice = options.device();
    long start = System.nanoTime();
    // On a GPU the batches are read into pinned memory, which copies at full PCIe speed.
    try (BufferAllocator allocator = PinnedAllocators.newRootAllocatorFor(choice, Long.MAX_VALUE);
        ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, choice)) {
      NormalizeResult result =
          ArrowFiles.normalizeFile(
              input, output, column, normalization, normalizer, allocator, this::progress);
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf(
          Locale.ROOT,
          "embednorm normalize: %s of column '%s', %d rows in %d batches, %.2f s, on %s (%s) -> %s%n",
          normalization,
          column,
          result.rows(),
          result.batches(),
          seconds,
          normalizer.device().name().toLowerCase(Locale.ROOT),
          normalizer.deviceReason(),
          output);
    }
    return 0;
  }

  /** Progress on stderr, at most once a second, for long files. */
  private void progress(long rowsDone) {
    long now = System.nanoTime();
    if (now - lastProgress > 1_000_000_000L) {
      lastProgress = now;
      System.err.printf(Locale.ROOT, "embednorm normalize: %d rows done%n", rowsDone);
    }
  }

  private long lastProgress = System.nanoTime();
}

package io.embednorm.jobs.cli;

import io.embednorm.arrow.ArrowFiles;
import io.embednorm.arrow.NormalizeResult;
import io.embednorm.arrow.internal.SchemaClassesWarmUp;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import io.embednorm.jobs.NormalizationOptions;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/** {@code embednorm normalize}: Arrow IPC file in, Arrow IPC file out, no Spark. */
@Command(
    name = "normalize",
    mixinStandardHelpOptions = true,
    versionProvider = VersionLines.class,
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

  @Option(
      names = "--encode",
      paramLabel = "ENCODING",
      description =
          "Write the column as float16, bfloat16, int8 (a struct of values and a float32 scale a"
              + " row) or binary (sign bits) instead of float32; float32 columns only.")
  String encode;

  /**
   * {@code bin/embednorm normalize} starts here rather than in {@link EmbedNormCli}, on a class
   * path without Spark: the same command, usage and error reporting under the name {@code embednorm
   * normalize}, without building the Spark commands (whose classes picocli would load). Exits with
   * the command's exit code.
   */
  public static void main(String[] args) {
    System.exit(run(args));
  }

  /**
   * Runs the command on {@code args} (the arguments after {@code normalize}) under the name {@code
   * embednorm normalize} and returns its exit code.
   */
  static int run(String[] args) {
    SchemaClassesWarmUp.start();
    CommandSpec top =
        CommandSpec.create()
            .name("embednorm")
            .addSubcommand("normalize", new CommandLine(new NormalizeCommand()));
    String[] command = new String[args.length + 1];
    command[0] = "normalize";
    System.arraycopy(args, 0, command, 1, args.length);
    return ErrorReporter.commandLine(top).execute(command);
  }

  @Override
  public Integer call() {
    Normalization normalization = options.normalization();
    DeviceChoice choice = options.device();
    Encoding encoding = encode == null ? null : Encoding.named(encode);
    long start = System.nanoTime();
    NormalizeResult result =
        encoding == null
            ? ArrowFiles.normalizeFile(input, output, column, normalization, choice, this::progress)
            : ArrowFiles.normalizeFileEncoded(
                input, output, column, normalization, encoding, choice, this::progress);
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        Locale.ROOT,
        "embednorm normalize: %s%s of column '%s', %d rows in %d batches, %.2f s, on %s (%s),"
            + " %s path (%s) -> %s%n",
        normalization,
        encoding == null ? "" : " as " + encoding.optionName(),
        column,
        result.rows(),
        result.batches(),
        seconds,
        result.device().name().toLowerCase(Locale.ROOT),
        result.deviceReason(),
        result.path().name().toLowerCase(Locale.ROOT).replace('_', '-'),
        result.pathReason(),
        output);
    if (result.cpuFallbackBatches() > 0) {
      System.err.printf(
          Locale.ROOT,
          "embednorm normalize: warning: %d batches failed on the GPU and ran on the CPU engine"
              + " instead (first: %s)%n",
          result.cpuFallbackBatches(),
          result.cpuFallbackReason());
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

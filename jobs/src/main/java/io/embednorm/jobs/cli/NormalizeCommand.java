package io.embednorm.jobs.cli;

import io.embednorm.arrow.ArrowFiles;
import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.arrow.NormalizeResult;
import io.embednorm.jobs.JobOptions;
import io.embednorm.kernels.DeviceChoice;
import io.embednorm.kernels.Normalization;
import io.embednorm.kernels.Op;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine.Command;
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

  @Option(
      names = "--op",
      required = true,
      description = "rms_norm, layer_norm, softmax, log_softmax or l2_normalize.")
  String op;

  @Option(
      names = "--column",
      defaultValue = "embedding",
      description = "Column to normalize (default: ${DEFAULT-VALUE}).")
  String column;

  @Option(names = "--eps", description = "Epsilon (default: the op's).")
  Double epsilon;

  @Option(names = "--weight", description = "File of D numbers: RMSNorm's w or LayerNorm's gamma.")
  Path weight;

  @Option(names = "--bias", description = "File of D numbers: LayerNorm's beta.")
  Path bias;

  @Option(
      names = "--device",
      defaultValue = "auto",
      description = "auto, cpu or gpu (default: ${DEFAULT-VALUE}).")
  String device;

  @Override
  public Integer call() {
    Normalization normalization = JobOptions.normalization(Op.fromName(op), epsilon, weight, bias);
    DeviceChoice choice = DeviceChoice.fromName(device);
    long start = System.nanoTime();
    try (BufferAllocator allocator = new RootAllocator();
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

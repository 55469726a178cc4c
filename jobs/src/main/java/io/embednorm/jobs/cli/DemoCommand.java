package io.embednorm.jobs.cli;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.jobs.JobReport;
import io.embednorm.jobs.JobSettings;
import io.embednorm.jobs.NormalizeJob;
import io.embednorm.jobs.internal.LocalSpark;
import io.embednorm.jobs.internal.OutputCheck;
import io.embednorm.jobs.internal.SampleData;
import io.embednorm.jobs.internal.SparkProgress;
import io.embednorm.jobs.internal.TemporaryFolder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code embednorm demo}: the main job on the embedded default. Generates sample embeddings as
 * Parquet, runs the normalize job on Spark local[*], checks the output, prints a summary.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    versionProvider = VersionLines.class,
    description =
        "Generates sample embeddings, normalizes them with Spark on local[*], checks and"
            + " summarizes.")
final class DemoCommand implements Callable<Integer> {
  private static final String TEMPORARY_PREFIX = "embednorm-demo-";

  @Option(
      names = "--rows",
      defaultValue = "100000",
      description = "Rows (default: ${DEFAULT-VALUE}).")
  long rows;

  @Option(names = "--dim", defaultValue = "256", description = "Width (default: ${DEFAULT-VALUE}).")
  int width;

  @Option(
      names = "--op",
      defaultValue = "rms_norm",
      description = "Op to run (default: ${DEFAULT-VALUE}).")
  String op;

  @Option(
      names = "--device",
      defaultValue = "auto",
      description = "auto, cpu or gpu (default: ${DEFAULT-VALUE}).")
  String device;

  @Option(names = "--seed", defaultValue = "42", description = "Random seed (default: 42).")
  long seed;

  @Option(
      names = "--workdir",
      description =
          "Folder for the input and output, kept (default: a new temporary folder, deleted at the"
              + " end).")
  Path workdir;

  @Option(
      names = "--keep",
      description = "Keep the temporary folder with the input and output (its path is printed).")
  boolean keep;

  @Override
  public Integer call() throws IOException {
    if (rows < 1 || width < 2) {
      throw new EmbedNormException(
          "Cannot run the demo: --rows must be >= 1 and --dim >= 2, got rows="
              + rows
              + " dim="
              + width);
    }
    Normalization normalization = Normalization.of(Op.fromName(op));
    // About 4 bytes a value on disk, twice (input and output): 200 MB at the default size, so a
    // temporary folder goes away at the end, on failure and on SIGTERM unless --keep is given.
    TemporaryFolder temporary =
        workdir == null && !keep ? TemporaryFolder.create(TEMPORARY_PREFIX) : null;
    try {
      Path folder =
          workdir != null
              ? workdir
              : temporary != null ? temporary.path() : Files.createTempDirectory(TEMPORARY_PREFIX);
      return runIn(folder, normalization, temporary != null);
    } finally {
      if (temporary != null) {
        temporary.close();
      }
    }
  }

  private int runIn(Path folder, Normalization normalization, boolean deletedAtEnd) {
    String input = folder.resolve("input.parquet").toString();
    String output = folder.resolve("output.parquet").toString();
    JobSettings settings =
        new JobSettings(
            input,
            "parquet",
            output,
            "parquet",
            "embedding",
            "embedding",
            normalization,
            DeviceChoice.fromName(device),
            "overwrite");
    SparkSession spark = LocalSpark.start("embednorm demo");
    SparkProgress progress = SparkProgress.start(spark, "embednorm demo");
    try {
      long start = System.nanoTime();
      SampleData.writeWithSpark(spark, input, "parquet", rows, width, seed);
      double generateSeconds = (System.nanoTime() - start) / 1e9;
      JobReport report = NormalizeJob.run(spark, settings);
      OutputCheck.Result check =
          OutputCheck.run(spark.read().parquet(output), "embedding", normalization);
      System.out.println(summary(settings, report, check, generateSeconds));
      System.out.println(
          "  folder     "
              + folder
              + (deletedAtEnd ? " (deleted now; --keep keeps it)" : " (kept)"));
      return check.passed() && check.rows() == rows ? 0 : ErrorReporter.FAILED;
    } finally {
      progress.close();
      spark.stop();
    }
  }

  private String summary(
      JobSettings settings, JobReport report, OutputCheck.Result check, double generateSeconds) {
    double megabytes = report.rows() * (double) width * Float.BYTES / 1e6;
    return String.format(
        Locale.ROOT,
        "embednorm demo%n"
            + "  rows       %d%n"
            + "  width      %d (array<float>)%n"
            + "  op         %s%n"
            + "  device     %s%n"
            + "  generate   %.2f s (Parquet, seed %d)%n"
            + "  normalize  %.2f s: %.0f rows/s, %.1f MB/s of embeddings (read + normalize + write)%n"
            + "  check      %s on %d rows: largest deviation %.2e (limit %.0e) %s%n"
            + "  input      %s%n"
            + "  output     %s",
        report.rows(),
        width,
        settings.normalization(),
        report.device(),
        generateSeconds,
        seed,
        report.seconds(),
        report.rowsPerSecond(),
        megabytes / report.seconds(),
        check.property(),
        check.rows(),
        check.maxDeviation(),
        OutputCheck.TOLERANCE,
        check.passed() && check.rows() == rows ? "OK" : "FAILED",
        settings.input(),
        settings.output());
  }
}

package io.embednorm.jobs.cli;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.jobs.internal.LocalSpark;
import io.embednorm.jobs.internal.SampleData;
import io.embednorm.jobs.internal.SparkProgress;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code embednorm generate}: sample embeddings as Parquet (with Spark) or Arrow IPC (without). */
@Command(
    name = "generate",
    mixinStandardHelpOptions = true,
    versionProvider = VersionLines.class,
    description = "Writes sample embeddings: columns id bigint and embedding array<float>.")
final class GenerateCommand implements Callable<Integer> {
  @Option(names = "--rows", required = true, description = "Number of rows.")
  long rows;

  @Option(names = "--dim", required = true, description = "Width of each embedding.")
  int width;

  @Option(
      names = "--output",
      required = true,
      description =
          "Output path: parquet writes a folder, replacing one that holds nothing but a previous"
              + " Spark output (part-*, _SUCCESS, .crc files, _temporary, key=value folders); arrow"
              + " writes one file, replacing a regular file.")
  Path output;

  @Option(
      names = "--format",
      defaultValue = "parquet",
      description = "parquet (a Spark output folder) or arrow (one Arrow IPC file).")
  String format;

  @Option(names = "--seed", defaultValue = "42", description = "Random seed (default: 42).")
  long seed;

  @Override
  public Integer call() {
    if (rows < 0 || width < 1) {
      throw new EmbedNormException(
          "Cannot generate sample data: --rows must be >= 0 and --dim >= 1, got rows="
              + rows
              + " dim="
              + width);
    }
    long start = System.nanoTime();
    switch (format.toLowerCase(Locale.ROOT)) {
      case "arrow":
        try (BufferAllocator allocator = new RootAllocator()) {
          SampleData.writeArrow(allocator, output, rows, width, seed);
        }
        break;
      case "parquet":
        SparkSession spark = LocalSpark.start("embednorm generate");
        SparkProgress progress = SparkProgress.start(spark, "embednorm generate");
        try {
          SampleData.writeWithSpark(spark, output.toString(), "parquet", rows, width, seed);
        } finally {
          progress.close();
          spark.stop();
        }
        break;
      default:
        throw new EmbedNormException(
            "Cannot generate sample data: unknown format '" + format + "'; use parquet or arrow");
    }
    System.out.printf(
        Locale.ROOT,
        "embednorm generate: %d rows x %d floats (seed %d) as %s in %.2f s -> %s%n",
        rows,
        width,
        seed,
        format,
        (System.nanoTime() - start) / 1e9,
        output);
    return 0;
  }
}

package io.embednorm.jobs;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The options of the normalize job, shared by spark-submit's entry point and {@code embednorm job}.
 */
public final class JobOptions {
  @Mixin NormalizationOptions normalization;

  @Option(names = "--input", required = true, description = "Input path (file or directory).")
  String input;

  @Option(names = "--output", required = true, description = "Output path (a directory).")
  String output;

  @Option(
      names = "--column",
      defaultValue = "embedding",
      description = "Array column to normalize (default: ${DEFAULT-VALUE}).")
  String column;

  @Option(
      names = "--output-column",
      description = "Column for the result (default: replace the input column).")
  String outputColumn;

  @Option(
      names = "--format",
      defaultValue = "parquet",
      description =
          "Output format: parquet, orc, json, or arrow: Arrow IPC files, the column as"
              + " FixedSizeList<float> (default: ${DEFAULT-VALUE}).")
  String format;

  @Option(
      names = "--input-format",
      description =
          "Input format: parquet, orc, json or csv (default: from the input's file names, e.g."
              + " .json files read as json; parquet where they tell none). Independent of"
              + " --format.")
  String inputFormat;

  @Option(
      names = "--mode",
      defaultValue = "errorifexists",
      description =
          "Save mode when the output exists: errorifexists, or overwrite, which replaces only a"
              + " folder holding nothing but a previous Spark output (part-*, _SUCCESS, .crc"
              + " files, _temporary, key=value folders) (default: ${DEFAULT-VALUE}).")
  String saveMode;

  /** The settings these options describe; reads the weight and bias files. */
  public JobSettings toSettings() {
    return new JobSettings(
        input,
        inputFormat,
        output,
        format,
        column,
        outputColumn,
        normalization.normalization(),
        normalization.device(),
        saveMode);
  }
}

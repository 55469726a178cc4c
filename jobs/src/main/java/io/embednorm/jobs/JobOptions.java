package io.embednorm.jobs;

import io.embednorm.jobs.internal.NumberFile;
import io.embednorm.kernels.DeviceChoice;
import io.embednorm.kernels.Normalization;
import io.embednorm.kernels.Op;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The options of the normalize job, shared by spark-submit's entry point and {@code embednorm job}.
 */
public final class JobOptions {
  @Option(names = "--input", required = true, description = "Input path (file or directory).")
  String input;

  @Option(names = "--output", required = true, description = "Output path (a directory).")
  String output;

  @Option(
      names = "--op",
      required = true,
      description = "rms_norm, layer_norm, softmax, log_softmax or l2_normalize.")
  String op;

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
      description = "Output format: parquet, orc or json (default: ${DEFAULT-VALUE}).")
  String format;

  @Option(
      names = "--input-format",
      description = "Input format: parquet, orc or json (default: the output format).")
  String inputFormat;

  @Option(names = "--eps", description = "Epsilon (default: the op's, see the README).")
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

  @Option(
      names = "--mode",
      defaultValue = "errorifexists",
      description =
          "Save mode when the output exists: errorifexists, overwrite (default: ${DEFAULT-VALUE}).")
  String saveMode;

  /** The settings these options describe; reads the weight and bias files. */
  public JobSettings toSettings() {
    return new JobSettings(
        input,
        inputFormat == null ? format : inputFormat,
        output,
        format,
        column,
        outputColumn,
        normalization(Op.fromName(op), epsilon, weight, bias),
        DeviceChoice.fromName(device),
        saveMode);
  }

  /** The normalization for an op with optional eps, weight file and bias file. */
  public static Normalization normalization(Op op, Double epsilon, Path weight, Path bias) {
    Normalization normalization = Normalization.of(op);
    if (epsilon != null) {
      normalization = normalization.withEpsilon(epsilon);
    }
    if (weight != null) {
      normalization = normalization.withWeight(NumberFile.read(weight, "weight"));
    }
    if (bias != null) {
      normalization = normalization.withBias(NumberFile.read(bias, "bias"));
    }
    return normalization;
  }
}

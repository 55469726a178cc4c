package io.embednorm.jobs;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.jobs.internal.NumberFile;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The options that say what to compute and where, shared by the spark-submit job and {@code
 * embednorm normalize}: {@code --op}, {@code --eps}, {@code --weight}, {@code --bias}, {@code
 * --device}. Needs no Spark.
 */
public final class NormalizationOptions {
  /** {@code --device} when not given. */
  public static final String DEFAULT_DEVICE = "auto";

  @Option(
      names = "--op",
      required = true,
      description = "rms_norm, layer_norm, softmax, log_softmax or l2_normalize.")
  String op;

  @Option(names = "--eps", description = "Epsilon (default: the op's, see the README).")
  Double epsilon;

  @Option(names = "--weight", description = "File of D numbers: RMSNorm's w or LayerNorm's gamma.")
  Path weight;

  @Option(names = "--bias", description = "File of D numbers: LayerNorm's beta.")
  Path bias;

  @Option(
      names = "--device",
      defaultValue = DEFAULT_DEVICE,
      description = "auto, cpu or gpu (default: ${DEFAULT-VALUE}).")
  String device;

  /**
   * Options with these values, as picocli sets them from a command line (null where not given): for
   * a caller that parses the command line itself.
   */
  public static NormalizationOptions of(
      String op, Double epsilon, Path weight, Path bias, String device) {
    NormalizationOptions options = new NormalizationOptions();
    options.op = op;
    options.epsilon = epsilon;
    options.weight = weight;
    options.bias = bias;
    options.device = device;
    return options;
  }

  /** The normalization these options describe; reads the weight and bias files. */
  public Normalization normalization() {
    Normalization normalization = Normalization.of(Op.fromName(op));
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

  /** The device asked for. */
  public DeviceChoice device() {
    return DeviceChoice.fromName(device);
  }

  /** The values as given, e.g. for comparing two ways of parsing one command line. */
  @Override
  public String toString() {
    return "NormalizationOptions[op="
        + op
        + ", epsilon="
        + epsilon
        + ", weight="
        + weight
        + ", bias="
        + bias
        + ", device="
        + device
        + "]";
  }
}

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
  @Option(
      names = "--op",
      required = true,
      description =
          "rms_norm, layer_norm, softmax, log_softmax, l2_normalize, l1_normalize or"
              + " linf_normalize.")
  String op;

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

  /** The normalization these options describe; reads the weight and bias files. */
  public Normalization normalization() {
    // Messages name the files the user gave, e.g. "weight file 'w.txt' has 3 elements but ...".
    Normalization normalization =
        Normalization.of(Op.fromName(op))
            .withParameterNames(fileName("weight", weight), fileName("bias", bias));
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

  private static String fileName(String what, Path file) {
    return file == null ? what : what + " file '" + file + "'";
  }

  /** The device asked for. */
  public DeviceChoice device() {
    return DeviceChoice.fromName(device);
  }
}

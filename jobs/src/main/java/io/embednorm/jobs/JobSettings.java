package io.embednorm.jobs;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import java.util.Objects;

/**
 * What one run of the normalize job does: read {@code inputFormat} data at {@code input}, normalize
 * {@code column} into {@code outputColumn}, write {@code outputFormat} data to {@code output}. A
 * null {@code inputFormat} means: the format the input's file names tell, else parquet.
 */
public record JobSettings(
    String input,
    String inputFormat,
    String output,
    String outputFormat,
    String column,
    String outputColumn,
    Normalization normalization,
    DeviceChoice device,
    String saveMode) {

  public JobSettings {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(output, "output");
    Objects.requireNonNull(normalization, "normalization");
    Objects.requireNonNull(column, "column");
    outputColumn = outputColumn == null ? column : outputColumn;
    outputFormat = outputFormat == null ? "parquet" : outputFormat;
    device = device == null ? DeviceChoice.AUTO : device;
    saveMode = saveMode == null ? "errorifexists" : saveMode;
  }
}

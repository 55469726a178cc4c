package io.embednorm.jobs;

import java.util.Locale;

/** The lines a finished job prints. */
public final class Summary {
  private Summary() {}

  /** A few aligned lines: what ran, where and why, how many rows, how fast. */
  public static String of(JobSettings settings, JobReport report) {
    return String.format(
        Locale.ROOT,
        "embednorm normalize%n"
            + "  op        %s on column '%s' -> '%s'%n"
            + "  device    %s%n"
            + "  rows      %d%n"
            + "  time      %.2f s (%.0f rows/s, read + normalize + write)%n"
            + "  output    %s (%s)",
        settings.normalization(),
        settings.column(),
        settings.outputColumn(),
        report.device(),
        report.rows(),
        report.seconds(),
        report.rowsPerSecond(),
        report.output(),
        settings.outputFormat());
  }
}

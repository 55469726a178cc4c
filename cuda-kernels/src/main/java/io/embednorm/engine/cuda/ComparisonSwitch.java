package io.embednorm.engine.cuda;

import io.embednorm.engine.EmbedNormException;
import java.util.List;

/**
 * Reads the {@code -Dembednorm.gpu.*} switches that plan other kernels or grids for comparisons
 * (KernelBenchmark runs, A/B timings). A value outside the listed ones fails loudly: a misspelt
 * switch that fell back to the planned kernels would time them under the wrong name.
 */
final class ComparisonSwitch {
  private ComparisonSwitch() {}

  /**
   * The system property {@code name}, or {@code planned} when it is not set.
   *
   * @throws EmbedNormException naming the property, its value and the accepted ones otherwise
   */
  static String read(String name, String planned, String... others) {
    String value = System.getProperty(name);
    if (value == null || value.equals(planned) || List.of(others).contains(value)) {
      return value == null ? planned : value;
    }
    throw new EmbedNormException(
        String.format(
            "Cannot read -D%s=%s: expected %s or one of %s",
            name, value, planned, String.join(", ", others)));
  }

  /** A switch of {@code true} or {@code false}. */
  static boolean readBoolean(String name, boolean planned) {
    return Boolean.parseBoolean(read(name, Boolean.toString(planned), Boolean.toString(!planned)));
  }
}

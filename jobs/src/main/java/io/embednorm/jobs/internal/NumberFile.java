package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.regex.Pattern;

/** Reads a weight or bias file: D finite decimal numbers separated by commas and/or whitespace. */
public final class NumberFile {
  /**
   * A decimal number as people write it. Java's own parser also takes NaN, Infinity, hexadecimal
   * and a trailing d or f, which a weight file never means to hold.
   */
  private static final Pattern DECIMAL =
      Pattern.compile("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?");

  /**
   * What people write for NaN and the infinities: refused as not finite rather than not numbers.
   */
  private static final Pattern NOT_FINITE =
      Pattern.compile("[+-]?(nan|inf|infinity)", Pattern.CASE_INSENSITIVE);

  private NumberFile() {}

  /**
   * Returns the numbers in {@code file}.
   *
   * @param what what the file holds, for messages ("weight", "bias")
   */
  public static double[] read(Path file, String what) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException missing) {
      throw new EmbedNormException(
          "Cannot read " + what + " file '" + file + "': no such file", missing);
    } catch (IOException | RuntimeException failure) {
      throw new EmbedNormException(
          "Cannot read " + what + " file '" + file + "': " + failure.getMessage(), failure);
    }
    String[] items = text.trim().split("[,\\s]+");
    if (items.length == 1 && items[0].isEmpty()) {
      throw new EmbedNormException(
          "Cannot read " + what + " file '" + file + "': it holds no numbers");
    }
    double[] values = new double[items.length];
    for (int i = 0; i < items.length; i++) {
      boolean decimal = DECIMAL.matcher(items[i]).matches();
      if (decimal) {
        values[i] = Double.parseDouble(items[i]);
      }
      if (!decimal || !Double.isFinite(values[i])) {
        // 1e400 is a decimal that overflows to infinity: not finite either.
        String why =
            decimal || NOT_FINITE.matcher(items[i]).matches()
                ? "is not a finite number"
                : "is not a number";
        throw new EmbedNormException(
            "Cannot read "
                + what
                + " file '"
                + file
                + "': item "
                + (i + 1)
                + " ('"
                + items[i]
                + "') "
                + why);
      }
    }
    return values;
  }
}

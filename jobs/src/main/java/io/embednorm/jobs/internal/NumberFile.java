package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Reads a weight or bias file: D numbers separated by commas and/or whitespace. */
public final class NumberFile {
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
      try {
        values[i] = Double.parseDouble(items[i]);
      } catch (NumberFormatException notNumber) {
        throw new EmbedNormException(
            "Cannot read "
                + what
                + " file '"
                + file
                + "': item "
                + (i + 1)
                + " ('"
                + items[i]
                + "') is not a number",
            notNumber);
      }
    }
    return values;
  }
}

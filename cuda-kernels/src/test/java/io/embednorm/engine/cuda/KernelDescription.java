package io.embednorm.engine.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;

/**
 * The kernels as the build describes them for tests (src/main/cuda/describe-kernels.sh): the tables
 * they export, as print_tuning.cu prints them, and the name of every kernel the fatbin holds.
 * Absent from a build with -Dembednorm.cpuOnly.
 */
final class KernelDescription {
  private KernelDescription() {}

  /** Whether the build described the kernels. */
  static boolean present() {
    return KernelDescription.class.getResource("embednorm_tuning.txt") != null;
  }

  /** The tuning tables, as the module exports them. */
  static KernelTuning tuning() {
    return KernelTuning.parse(read("embednorm_tuning.txt"));
  }

  /** The name of every kernel embednorm_kernels.cu defines. */
  static Set<String> kernels() {
    return new TreeSet<>(read("embednorm_kernels.txt").lines().toList());
  }

  /** The printed table {@code name}, as its int values. */
  static int[] table(String name) {
    for (String line : read("embednorm_tuning.txt").lines().toList()) {
      String[] fields = line.trim().split(" +");
      if (fields[0].equals(name)) {
        int[] values = new int[fields.length - 1];
        for (int i = 0; i < values.length; i++) {
          values[i] = Integer.parseInt(fields[i + 1]);
        }
        return values;
      }
    }
    throw new IllegalArgumentException("no table " + name);
  }

  private static String read(String resource) {
    try (InputStream stream = KernelDescription.class.getResourceAsStream(resource)) {
      if (stream == null) {
        throw new IllegalStateException(resource + " is not on the test class path");
      }
      return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException failure) {
      throw new UncheckedIOException(failure);
    }
  }
}

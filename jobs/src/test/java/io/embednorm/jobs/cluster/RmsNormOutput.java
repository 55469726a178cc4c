package io.embednorm.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.jobs.internal.SampleRows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.regex.Pattern;

/** What the cluster tests check after the job ran rms_norm over {@link SampleRows}. */
final class RmsNormOutput {
  private static final double EPS = 1e-6;
  private static final Pattern RUNNING_TASK = Pattern.compile("Running task ");
  private static final Pattern PLACEMENT =
      Pattern.compile("embednorm: executor \\S+ normalizes on .*");

  private RmsNormOutput() {}

  /**
   * Checks that {@code output} holds ids 0 to {@code rows - 1} once each, each row of {@code width}
   * RMS-normalized (float64 reference).
   */
  static void check(Path output, long seed, int rows, int width) {
    BitSet seen = new BitSet(rows);
    Failures failures = new Failures();
    long count =
        EmbeddingParquet.read(
            output,
            (id, actual) -> {
              if (id < 0 || id >= rows || seen.get((int) id)) {
                failures.add("id " + id + (id < 0 || id >= rows ? " out of range" : " twice"));
                return;
              }
              seen.set((int) id);
              double[] expected = rmsNorm(SampleRows.row(seed, id, width));
              if (actual.length != width) {
                failures.add("id " + id + " has " + actual.length + " values, not " + width);
                return;
              }
              for (int i = 0; i < width; i++) {
                double difference = Math.abs(actual[i] - expected[i]);
                if (!(difference <= 1e-5 * Math.abs(expected[i]) + 1e-6)) {
                  failures.add(
                      "id " + id + " element " + i + ": " + actual[i] + ", not " + expected[i]);
                }
              }
            });
    assertThat(failures.count)
        .as("seed %d: wrong values or ids, the first %s", seed, failures.first)
        .isZero();
    assertThat(seen.cardinality())
        .as("distinct ids, the first missing %d", seen.nextClearBit(0))
        .isEqualTo(rows);
    assertThat(count).as("rows written").isEqualTo(rows);
  }

  /**
   * Checks that every executor of {@code cluster} that ran a task logged where it normalizes
   * exactly once, in a line that {@code expected} finds, and that some executor ran one.
   *
   * @return the lines
   */
  static List<String> assertPlacementLoggedOnce(StandaloneCluster cluster, Pattern expected) {
    List<String> placements = new ArrayList<>();
    int ran = 0;
    for (Path log : cluster.executorLogs()) {
      String text = LoggedProcess.read(log);
      if (!RUNNING_TASK.matcher(text).find()) {
        continue;
      }
      ran++;
      List<String> lines = PLACEMENT.matcher(text).results().map(line -> line.group()).toList();
      assertThat(lines)
          .as("the placement lines of %s", log)
          .singleElement()
          .asString()
          .containsPattern(expected);
      placements.addAll(lines);
    }
    assertThat(ran).as("executors that ran a task\n%s", cluster.logTails()).isPositive();
    return placements;
  }

  /** How many checks failed, and the first few. */
  private static final class Failures {
    private final List<String> first = new ArrayList<>();
    private long count;

    void add(String failure) {
      if (first.size() < 10) {
        first.add(failure);
      }
      count++;
    }
  }

  /** xᵢ / √(Σx² / D + eps) in float64. */
  private static double[] rmsNorm(float[] x) {
    double squares = 0;
    for (float value : x) {
      squares += (double) value * value;
    }
    double scale = 1 / Math.sqrt(squares / x.length + EPS);
    double[] y = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      y[i] = x[i] * scale;
    }
    return y;
  }
}

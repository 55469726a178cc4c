package io.embednorm.jobs.internal;

import java.util.SplittableRandom;

/**
 * Sample embeddings: row {@code id} of seed {@code seed} is the same whatever the partitioning or
 * output format. Each row is Gaussian with its own offset and scale, so normalizing changes it.
 */
public final class SampleRows {
  private SampleRows() {}

  /** Fills {@code values} with row {@code id}. */
  public static void fill(long seed, long id, float[] values) {
    SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + id);
    double offset = 0.25 * random.nextGaussian();
    double scale = 0.5 + 1.5 * random.nextDouble();
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) (offset + scale * random.nextGaussian());
    }
  }

  /** Row {@code id} as a new array of {@code width} values. */
  public static float[] row(long seed, long id, int width) {
    float[] values = new float[width];
    fill(seed, id, values);
    return values;
  }
}

package io.embednorm.engine;

/**
 * Seeds for the randomized tests: two fixed ones plus one fresh per run, or only the one given as
 * {@code -Dembednorm.test.seed=N} to reproduce a failure (every message prints its seed).
 */
public final class TestSeeds {
  private static final long FRESH = System.nanoTime();

  private TestSeeds() {}

  public static long[] seeds() {
    String given = System.getProperty("embednorm.test.seed");
    if (given != null && !given.isBlank()) {
      return new long[] {Long.parseLong(given.trim())};
    }
    return new long[] {1L, 20240611L, FRESH};
  }

  /** A seed for one case, derived from the run's seed and the case's parameters. */
  public static long mix(long seed, long... parameters) {
    long mixed = seed;
    for (long parameter : parameters) {
      mixed = mixed * 0x9E3779B97F4A7C15L + parameter;
      mixed ^= mixed >>> 29;
    }
    return mixed;
  }
}

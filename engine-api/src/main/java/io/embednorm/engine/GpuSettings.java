package io.embednorm.engine;

/**
 * Which GPU an engine uses and how many users (e.g. Spark tasks) may use it at once; more wait.
 *
 * @param ordinal the CUDA device ordinal, from 0
 * @param concurrentUsers sessions open at once on the engine, at least 1
 */
public record GpuSettings(int ordinal, int concurrentUsers) {
  /** GPU 0, two users at once. */
  public static final GpuSettings DEFAULT = new GpuSettings(0, 2);

  public GpuSettings {
    if (ordinal < 0) {
      throw new EmbedNormException("Cannot use GPU " + ordinal + ": ordinals start at 0");
    }
    if (concurrentUsers < 1) {
      throw new EmbedNormException(
          "Cannot use GPU "
              + ordinal
              + ": concurrent users must be at least 1, got "
              + concurrentUsers);
    }
  }

  /** These settings on GPU {@code newOrdinal}. */
  public GpuSettings withOrdinal(int newOrdinal) {
    return new GpuSettings(newOrdinal, concurrentUsers);
  }

  /** These settings with {@code users} concurrent users. */
  public GpuSettings withConcurrentUsers(int users) {
    return new GpuSettings(ordinal, users);
  }
}

package io.embednorm.engine;

/**
 * A range of host memory made copyable at full speed by {@link HostMemory#pin}, and how. Whoever
 * pinned it closes it, only after the copies from and to it have finished.
 */
public interface HostPin extends AutoCloseable {
  /** How the range's copies will run. */
  enum Kind {
    /** Pinned already (embednorm's pinned memory): full speed, nothing was done. */
    PINNED,
    /** Registered with the driver for this pin (or shared with another open pin): full speed. */
    REGISTERED,
    /** Not all of it could be pinned: copies of those pages go through the driver's staging. */
    PAGEABLE
  }

  Kind kind();

  /** Whether copies from and to the range run at full speed. */
  default boolean isPinned() {
    return kind() != Kind.PAGEABLE;
  }

  /** Time this pin spent registering memory (0 when it reused a registration). */
  long registrationNanos();

  /** Unregisters the memory once no other pin holds it. Idempotent. */
  @Override
  void close();
}

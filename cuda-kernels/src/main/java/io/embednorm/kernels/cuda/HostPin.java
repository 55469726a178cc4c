package io.embednorm.kernels.cuda;

import java.util.List;

/**
 * A range of host memory made copyable by {@link PinnedHostMemory#pin}, and how. Closing it
 * unregisters the memory once no other pin holds it; close only after the copies have finished.
 */
public final class HostPin implements AutoCloseable {
  /** How the range's copies will run. */
  public enum Kind {
    /** Pinned already (embednorm's pinned memory): full speed, nothing was done. */
    PINNED,
    /** Registered with the driver for this pin (or shared with another open pin): full speed. */
    REGISTERED,
    /** Not all of it could be pinned: copies of those pages go through the driver's staging. */
    PAGEABLE
  }

  private final Kind kind;
  private final List<PinnedHostMemory.Range> ranges;
  private final long registrationNanos;
  private boolean closed;

  HostPin(Kind kind, List<PinnedHostMemory.Range> ranges, long registrationNanos) {
    this.kind = kind;
    this.ranges = ranges;
    this.registrationNanos = registrationNanos;
  }

  public Kind kind() {
    return kind;
  }

  /** Whether copies from and to the range run at full speed. */
  public boolean isPinned() {
    return kind != Kind.PAGEABLE;
  }

  /** Time this pin spent registering memory (0 when it reused a registration). */
  public long registrationNanos() {
    return registrationNanos;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      for (PinnedHostMemory.Range range : ranges) {
        PinnedHostMemory.unpin(range);
      }
    }
  }
}

package io.embednorm.engine.cuda;

import io.embednorm.engine.HostPin;
import java.util.List;

/**
 * A range of host memory made copyable by {@link PinnedHostMemory#pin}, and how. Closing it
 * unregisters the memory once no other pin holds it; close only after the copies have finished.
 */
final class CudaHostPin implements HostPin {
  private final Kind kind;
  private final List<PinnedHostMemory.Range> ranges;
  private final long registrationNanos;
  private boolean closed;

  CudaHostPin(Kind kind, List<PinnedHostMemory.Range> ranges, long registrationNanos) {
    this.kind = kind;
    this.ranges = ranges;
    this.registrationNanos = registrationNanos;
  }

  @Override
  public Kind kind() {
    return kind;
  }

  /** Time this pin spent registering memory (0 when it reused a registration). */
  @Override
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

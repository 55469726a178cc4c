package io.embednorm.kernels.cuda;

/**
 * A block of pinned host memory from {@link PinnedHostMemory#allocate}. Whoever allocated it closes
 * it, which returns it to the pool; the memory must not be used afterwards.
 */
public final class PinnedBlock implements AutoCloseable {
  private final long address;
  private final long capacity;
  private boolean closed;

  PinnedBlock(long address, long capacity) {
    this.address = address;
    this.capacity = capacity;
  }

  public long address() {
    return address;
  }

  /** The usable bytes: at least what was asked for. */
  public long capacity() {
    return capacity;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      PinnedHostMemory.giveBack(address, capacity);
    }
  }
}

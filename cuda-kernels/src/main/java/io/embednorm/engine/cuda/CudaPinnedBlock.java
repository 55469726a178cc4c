package io.embednorm.engine.cuda;

import io.embednorm.engine.PinnedBlock;

/**
 * A block of pinned host memory from {@link PinnedHostMemory#allocate}. Whoever allocated it closes
 * it, which returns it to the pool; the memory must not be used afterwards.
 */
final class CudaPinnedBlock implements PinnedBlock {
  private final long address;
  private final long capacity;
  private boolean closed;

  CudaPinnedBlock(long address, long capacity) {
    this.address = address;
    this.capacity = capacity;
  }

  @Override
  public long address() {
    return address;
  }

  /** The usable bytes: at least what was asked for. */
  @Override
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

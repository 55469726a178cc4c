package io.embednorm.engine;

/**
 * A block of pinned host memory from {@link HostMemory#allocate}. Whoever allocated it closes it,
 * which returns it to the pool; the memory must not be used afterwards.
 */
public interface PinnedBlock extends AutoCloseable {
  long address();

  /** The usable bytes: at least what was asked for. */
  long capacity();

  /** Returns the block to the pool. Idempotent. */
  @Override
  void close();
}

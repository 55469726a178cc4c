package io.embednorm.engine;

/**
 * Pinned host memory, which a device copies at full speed: blocks from a process-wide pool, and
 * registration of memory that is not ours. Found through {@link Engines#hostMemory()}; thread-safe.
 */
public interface HostMemory {

  /**
   * A pinned block of at least {@code bytes}, from the pool when one of its size class is idle; the
   * caller closes it.
   */
  PinnedBlock allocate(long bytes);

  /**
   * Makes {@code [address, address + bytes)} copyable at full speed: nothing to do for pinned
   * memory, registration with the driver otherwise, and the pageable path where neither works. The
   * caller closes the pin after the copies.
   */
  HostPin pin(long address, long bytes);

  /**
   * Whether {@code [address, address + bytes)} lies in one block of {@link #allocate} (e.g. an
   * Arrow buffer of embednorm's pinned allocator): it copies at full speed as it is. Registered
   * ranges do not count: they are pinned only while their pins are open.
   */
  boolean isPinned(long address, long bytes);

  /** Frees the idle pooled blocks. */
  void releasePooled();

  /** Pinned bytes allocated and not freed (in use or pooled). */
  long allocatedBytes();

  /** Bytes registered by open pins. */
  long registeredBytes();
}

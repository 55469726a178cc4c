package io.embednorm.arrow.internal;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * Memory of embednorm's lent to an Arrow allocator ({@link BufferAllocator#wrapForeignAllocation}):
 * the allocator counts it, and its owner's last release gives it back, once, whoever calls it.
 * Arrow releases the allocation itself when wrapping fails after it has counted it, so {@link
 * #lend} gives it back through the same guard.
 */
abstract class LentMemory extends ForeignAllocation {
  private final AtomicBoolean released = new AtomicBoolean();

  LentMemory(long bytes, long address) {
    super(bytes, address);
  }

  /** A buffer of {@code allocator}'s over {@code memory}; on a failure the memory is given back. */
  static ArrowBuf lend(BufferAllocator allocator, LentMemory memory) {
    try {
      return allocator.wrapForeignAllocation(memory);
    } catch (RuntimeException | Error failure) {
      memory.release0();
      throw failure;
    }
  }

  /** Returns the memory to where it came from; runs once. */
  protected abstract void giveBack();

  @Override
  protected final void release0() {
    if (released.compareAndSet(false, true)) {
      giveBack();
    }
  }
}

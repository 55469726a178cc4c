package io.embednorm.arrow.internal;

import io.embednorm.engine.HostMemory;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.PinnedBlock;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The element buffers of a GPU call's output, in pinned memory though the caller's allocator is
 * ordinary: a block of the process's pinned pool, wrapped into the caller's allocator (which counts
 * it, and whose owner closes it like any buffer; the last release returns the block to the pool).
 * The device then writes the results in place, with no staging copy, and the buffer comes from
 * memory the pool has touched before: an ordinary allocator hands out a large buffer as fresh pages
 * (with Netty's allocator on Java 17 also zeroed on one thread), which costs more than the call.
 *
 * <p>Only buffers of at least {@link #SMALLEST_BYTES} are pinned, and only while the outputs pinned
 * this way and not yet closed stay under {@code embednorm.pinnedOutputBytes}: outputs that callers
 * keep for long must not pin the host's memory without bound. Other requests come from the caller's
 * allocator as before.
 */
public final class PinnedOutputs {
  /** Smaller buffers come from the caller's allocator, whose pools serve them well. */
  public static final long SMALLEST_BYTES = 1L << 20;

  private static final AtomicLong OUTSTANDING = new AtomicLong();

  private PinnedOutputs() {}

  /**
   * A buffer of {@code bytes} accounted to {@code allocator}: pinned from {@code memory} where the
   * rules above allow, from {@code allocator} otherwise. The caller closes it.
   */
  public static ArrowBuf buffer(HostMemory memory, BufferAllocator allocator, long bytes) {
    if (memory == null || bytes < SMALLEST_BYTES || !reserve(bytes)) {
      return allocator.buffer(bytes);
    }
    PinnedBlock block;
    try {
      block = memory.allocate(bytes);
    } catch (RuntimeException | Error failure) {
      OUTSTANDING.addAndGet(-bytes);
      return allocator.buffer(bytes);
    }
    return LentMemory.lend(allocator, new Pinned(block, bytes));
  }

  /** Bytes of outputs pinned here and not yet released by their owners. */
  public static long outstandingBytes() {
    return OUTSTANDING.get();
  }

  private static boolean reserve(long bytes) {
    long limit = InternalSwitches.PINNED_OUTPUT_BYTES.value();
    while (true) {
      long now = OUTSTANDING.get();
      if (now + bytes > limit) {
        return false;
      }
      if (OUTSTANDING.compareAndSet(now, now + bytes)) {
        return true;
      }
    }
  }

  /** A pinned block lent to an Arrow allocator; given back to the pool. */
  private static final class Pinned extends LentMemory {
    private final PinnedBlock block;
    private final long bytes;

    Pinned(PinnedBlock block, long bytes) {
      super(bytes, block.address());
      this.block = block;
      this.bytes = bytes;
    }

    @Override
    protected void giveBack() {
      block.close();
      OUTSTANDING.addAndGet(-bytes);
    }
  }
}

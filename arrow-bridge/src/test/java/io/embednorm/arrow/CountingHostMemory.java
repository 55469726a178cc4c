package io.embednorm.arrow;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.HostMemory;
import io.embednorm.engine.HostPin;
import io.embednorm.engine.PinnedBlock;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * "Pinned" host memory for CI, which has no CUDA driver: blocks from the C heap, counted, so that a
 * test sees every block freed; the blocks count as pinned ({@link #isPinned}), other memory as
 * pageable.
 */
final class CountingHostMemory implements HostMemory {
  private final AtomicLong allocated = new AtomicLong();
  private final AtomicLong peak = new AtomicLong();
  private final ConcurrentSkipListMap<Long, Long> blocks = new ConcurrentSkipListMap<>();
  private volatile boolean poisoned;
  private volatile boolean refusing;

  /**
   * New blocks come filled with 0xFF bytes (NaN as floats), as a reused block may hold anything.
   */
  void poisonNewBlocks() {
    poisoned = true;
  }

  /** Every allocation fails from now on, as when the process cannot pin more memory. */
  void refuseAllocations() {
    refusing = true;
  }

  @Override
  public PinnedBlock allocate(long bytes) {
    if (refusing) {
      throw new EmbedNormException(
          "Cannot allocate " + bytes + " bytes of pinned host memory: the test refuses it");
    }
    long address = MemoryUtil.allocateMemory(bytes);
    if (poisoned) {
      ByteBuffer block = MemoryUtil.directBuffer(address, Math.toIntExact(bytes));
      for (int i = 0; i < bytes; i++) {
        block.put(i, (byte) 0xFF);
      }
    }
    peak.accumulateAndGet(allocated.addAndGet(bytes), Math::max);
    blocks.put(address, address + bytes);
    return new PinnedBlock() {
      private boolean closed;

      @Override
      public long address() {
        return address;
      }

      @Override
      public long capacity() {
        return bytes;
      }

      @Override
      public synchronized void close() {
        if (!closed) {
          closed = true;
          blocks.remove(address);
          MemoryUtil.freeMemory(address);
          allocated.addAndGet(-bytes);
        }
      }
    };
  }

  @Override
  public HostPin pin(long address, long bytes) {
    return new HostPin() {
      @Override
      public Kind kind() {
        return Kind.PAGEABLE;
      }

      @Override
      public long registrationNanos() {
        return 0;
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public boolean isPinned(long address, long bytes) {
    Map.Entry<Long, Long> below = blocks.floorEntry(address);
    return below != null && below.getValue() >= address + bytes;
  }

  @Override
  public void releasePooled() {}

  @Override
  public long allocatedBytes() {
    return allocated.get();
  }

  /** The most bytes allocated at once so far. */
  long peakBytes() {
    return peak.get();
  }

  @Override
  public long registeredBytes() {
    return 0;
  }
}

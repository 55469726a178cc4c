package io.embednorm.spark;

import io.embednorm.engine.HostMemory;
import io.embednorm.engine.HostPin;
import io.embednorm.engine.PinnedBlock;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The host memory of {@link FaultingGpuProvider}'s JVM, which has no CUDA driver: blocks from the C
 * heap, and pins that pin nothing (copies are "staged").
 */
public final class UnpinnedHostMemory implements HostMemory {
  private final AtomicLong allocated = new AtomicLong();

  @Override
  public PinnedBlock allocate(long bytes) {
    long address = MemoryUtil.allocateMemory(bytes);
    allocated.addAndGet(bytes);
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
    return false;
  }

  @Override
  public void releasePooled() {}

  @Override
  public long allocatedBytes() {
    return allocated.get();
  }

  @Override
  public long registeredBytes() {
    return 0;
  }
}

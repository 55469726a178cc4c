package io.embednorm.arrow;

import io.embednorm.engine.HostMemory;
import io.embednorm.engine.PinnedBlock;
import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * An Arrow allocator over a test's {@link HostMemory}, as {@link PinnedAllocators} is over the CUDA
 * driver's: its buffers count as pinned there. The caller closes it.
 */
final class CountingPinnedAllocator {
  private static final BufferAllocator EMPTY_SOURCE = new RootAllocator(0);

  private CountingPinnedAllocator() {}

  static RootAllocator over(HostMemory memory) {
    return new RootAllocator(
        RootAllocator.configBuilder()
            .allocationManagerFactory(
                new AllocationManager.Factory() {
                  @Override
                  public AllocationManager create(BufferAllocator accounting, long size) {
                    return new Manager(accounting, memory.allocate(size), size);
                  }

                  @Override
                  public ArrowBuf empty() {
                    return EMPTY_SOURCE.getEmpty();
                  }
                })
            .build());
  }

  private static final class Manager extends AllocationManager {
    private final PinnedBlock block;
    private final long size;

    Manager(BufferAllocator accounting, PinnedBlock block, long size) {
      super(accounting);
      this.block = block;
      this.size = size;
    }

    @Override
    public long getSize() {
      return size;
    }

    @Override
    protected long memoryAddress() {
      return block.address();
    }

    @Override
    protected void release0() {
      block.close();
    }
  }
}

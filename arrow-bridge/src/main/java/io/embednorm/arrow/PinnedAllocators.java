package io.embednorm.arrow;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.HostMemory;
import io.embednorm.engine.PinnedBlock;
import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Arrow allocators whose buffers are pinned host memory, so that {@link ArrowNormalizer} copies
 * them to and from the GPU at full PCIe speed with nothing to register per call. Read Arrow data
 * into one (e.g. {@link ArrowFiles#readFile}) and normalize with a normalizer built on it.
 *
 * <p>Pinning memory is slow, so freed buffers go back to a process-wide pool of pinned blocks (size
 * classes, four per power of two) instead of to the system; {@link HostMemory#releasePooled()}
 * empties it.
 */
public final class PinnedAllocators {
  private static final BufferAllocator EMPTY_SOURCE = new RootAllocator(0);

  private PinnedAllocators() {}

  /**
   * A new root allocator of pinned memory that hands out at most {@code limit} bytes; the caller
   * closes it (which fails, as for any Arrow allocator, while its buffers are still open).
   *
   * @throws EmbedNormException when no GPU is usable in this process (pinned memory needs the CUDA
   *     driver), saying why
   */
  public static RootAllocator newRootAllocator(long limit) {
    String unavailable = Engines.gpuUnavailableReason();
    if (unavailable != null) {
      throw new EmbedNormException("Cannot create a pinned allocator: " + unavailable);
    }
    return new RootAllocator(
        RootAllocator.configBuilder()
            .allocationManagerFactory(new Factory())
            .maxAllocation(limit)
            .build());
  }

  /**
   * A new root allocator for data a normalizer on {@code device} will read: pinned when that choice
   * resolves to a usable GPU (as {@code auto} and {@code gpu} do where CUDA works), ordinary
   * otherwise. The caller closes it.
   */
  public static RootAllocator newRootAllocatorFor(DeviceChoice device, long limit) {
    if (device != DeviceChoice.CPU && Engines.gpuUnavailableReason() == null) {
      return newRootAllocator(limit);
    }
    return new RootAllocator(limit);
  }

  /** Creates managers of pinned blocks. */
  private static final class Factory implements AllocationManager.Factory {
    @Override
    public AllocationManager create(BufferAllocator accountingAllocator, long size) {
      return new PinnedAllocationManager(accountingAllocator, size);
    }

    @Override
    public ArrowBuf empty() {
      return EMPTY_SOURCE.getEmpty();
    }
  }

  /** One pinned block backing one Arrow allocation. */
  private static final class PinnedAllocationManager extends AllocationManager {
    private final PinnedBlock block;
    private final long size;

    PinnedAllocationManager(BufferAllocator accountingAllocator, long size) {
      super(accountingAllocator);
      this.block = Engines.hostMemory().allocate(size);
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

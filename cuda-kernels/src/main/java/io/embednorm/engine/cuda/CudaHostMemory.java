package io.embednorm.engine.cuda;

import io.embednorm.engine.HostMemory;
import io.embednorm.engine.HostPin;
import io.embednorm.engine.PinnedBlock;

/** {@link HostMemory} over the process-wide {@link PinnedHostMemory}; found by ServiceLoader. */
public final class CudaHostMemory implements HostMemory {

  @Override
  public PinnedBlock allocate(long bytes) {
    return PinnedHostMemory.allocate(bytes);
  }

  @Override
  public HostPin pin(long address, long bytes) {
    return PinnedHostMemory.pin(address, bytes);
  }

  @Override
  public boolean isPinned(long address, long bytes) {
    return PinnedHostMemory.isAllocated(address, bytes);
  }

  @Override
  public void releasePooled() {
    PinnedHostMemory.releasePooled();
  }

  @Override
  public long allocatedBytes() {
    return PinnedHostMemory.allocatedBytes();
  }

  @Override
  public long registeredBytes() {
    return PinnedHostMemory.registeredBytes();
  }
}

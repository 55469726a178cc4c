package io.embednorm.arrow.internal;

import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Staging sources and targets in host memory: position {@code p} is address {@code base + p}.
 * Memory that is pinned already is read or written by the device in place; other memory is copied
 * through the slots.
 */
public final class HostAddresses {
  /** What {@code pinnedAddress} returns for memory that must go through a slot. */
  public static final long NOT_PINNED = -1;

  private HostAddresses() {}

  /**
   * Reads position {@code p} at {@code base + p}; straight from the device where {@code pinned}.
   */
  public static StagingSource source(long base, Pinning pinning) {
    return new StagingSource() {
      @Override
      public void copyTo(long position, long address, long bytes) {
        MemoryUtil.copyMemory(base + position, address, bytes);
      }

      @Override
      public long pinnedAddress(long position) {
        return pinning == Pinning.PINNED ? base + position : NOT_PINNED;
      }

      @Override
      public int alignment(long position) {
        return (int) ((base + position) & 15);
      }
    };
  }

  /** Writes position {@code p} at {@code base + p}; straight from the device where pinned. */
  public static StagingTarget target(long base, Pinning pinning) {
    return new StagingTarget() {
      @Override
      public void copyFrom(long address, long position, long bytes) {
        MemoryUtil.copyMemory(address, base + position, bytes);
      }

      @Override
      public long pinnedAddress(long position) {
        return pinning == Pinning.PINNED ? base + position : NOT_PINNED;
      }
    };
  }

  /** Whether the device may copy a range of memory in place, or it goes through slots. */
  public enum Pinning {
    /** Pinned (or registered) for as long as the chunks run: the device copies it in place. */
    PINNED,
    /** Ordinary memory: copied through the pinned slots. */
    STAGED
  }
}

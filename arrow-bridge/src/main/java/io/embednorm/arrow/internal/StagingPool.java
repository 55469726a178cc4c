package io.embednorm.arrow.internal;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.HostMemory;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.PinnedBlock;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The pinned staging slots of one GPU of a normalizer: bounce buffers through which memory that is
 * not pinned goes to the device and back ({@link StagedChunks}). Slots are allocated as sessions
 * ask for them, up to {@code poolBytes}, and kept for the next calls; a slot for a row wider than a
 * slot is allocated for that chunk and freed after it.
 *
 * <p>Thread-safe: the sessions of several threads share it. Owns its slots' pinned memory: the
 * normalizer that made it closes it, which frees the idle slots; a slot given back after that is
 * freed then. Pinned blocks go back to the process's pinned pool ({@link HostMemory}).
 */
public final class StagingPool implements AutoCloseable {
  private final HostMemory memory;
  private final long slotBytes;
  private final int maximumSlots;
  private final Deque<StagingSlot> idle = new ArrayDeque<>();
  private int allocated;
  private long outstandingBytes;
  private boolean closed;

  /**
   * A pool of slots of {@code slotBytes} a half, at most {@code poolBytes} in all (at least one
   * slot), allocated from {@code memory}.
   */
  public StagingPool(HostMemory memory, long slotBytes, long poolBytes) {
    if (slotBytes < 1 || slotBytes > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot make staging slots of "
              + slotBytes
              + " bytes: the size must be between 1 and "
              + Integer.MAX_VALUE);
    }
    this.memory = memory;
    this.slotBytes = slotBytes;
    this.maximumSlots = (int) Math.max(1, Math.min(1 << 16, poolBytes / (2 * slotBytes)));
  }

  /** A pool sized by the internal switches {@code embednorm.staging.*}, over {@code memory}. */
  public static StagingPool withDefaults(HostMemory memory) {
    return new StagingPool(
        memory,
        InternalSwitches.STAGING_SLOT_BYTES.value(),
        InternalSwitches.STAGING_POOL_BYTES.value());
  }

  /** Bytes each half of a pooled slot holds: the largest chunk that goes through one. */
  public long slotBytes() {
    return slotBytes;
  }

  /** The pinned memory the slots come from. */
  public HostMemory memory() {
    return memory;
  }

  /** Whether memory the device would copy is pinned already: then it needs no slot. */
  public boolean isPinned(long address, long bytes) {
    return memory.isPinned(address, bytes);
  }

  /** The most slots this pool holds at once. */
  public int maximumSlots() {
    return maximumSlots;
  }

  /** Pinned bytes of slots allocated and not freed (idle or in use). */
  public synchronized long outstandingBytes() {
    return outstandingBytes;
  }

  /** Pooled slots taken and not given back. */
  public synchronized int slotsInUse() {
    return allocated - idle.size();
  }

  /** An idle slot, a new one while the pool is below its bound, or null. */
  synchronized StagingSlot tryTake() {
    StagingSlot slot = idle.poll();
    if (slot != null) {
      return slot;
    }
    if (closed || allocated >= maximumSlots) {
      return null;
    }
    allocated++;
    return allocate(slotBytes, true);
  }

  /** A slot, waiting while every slot is taken. */
  synchronized StagingSlot take() {
    StagingSlot slot;
    boolean interrupted = false;
    while ((slot = tryTake()) == null) {
      if (closed) {
        throw new EmbedNormException("Cannot stage a chunk for the GPU: the normalizer is closed");
      }
      try {
        wait();
      } catch (InterruptedException stop) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return slot;
  }

  /** A slot of its own for a chunk wider than a pooled slot; freed when given back. */
  synchronized StagingSlot takeWide(long bytes) {
    return allocate(bytes, false);
  }

  /** Takes back a slot from {@link #take}, {@link #tryTake} or {@link #takeWide}. */
  synchronized void give(StagingSlot slot) {
    if (slot.pooled() && !closed) {
      idle.push(slot);
      notifyAll();
      return;
    }
    if (slot.pooled()) {
      allocated--;
    }
    free(slot);
  }

  /** Frees the idle slots; slots in use are freed when given back. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    while (!idle.isEmpty()) {
      allocated--;
      free(idle.pop());
    }
    notifyAll();
  }

  private StagingSlot allocate(long half, boolean pooled) {
    // A half holds the bytes at their offset modulo 16 and ends on a page, so that the output half
    // starts page-aligned too.
    long halfBytes = (half + 16 + 4095) & -4096L;
    PinnedBlock block;
    try {
      block = memory.allocate(2 * halfBytes);
    } catch (RuntimeException failure) {
      if (pooled) {
        allocated--;
      }
      throw failure;
    }
    outstandingBytes += block.capacity();
    return new StagingSlot(block, halfBytes, pooled);
  }

  private void free(StagingSlot slot) {
    outstandingBytes -= slot.block().capacity();
    slot.block().close();
  }
}

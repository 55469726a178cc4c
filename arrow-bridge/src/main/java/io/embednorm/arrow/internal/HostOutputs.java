package io.embednorm.arrow.internal;

import io.embednorm.engine.InternalSwitches;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The element buffers of a CPU call's output on an ordinary allocator, from a process-wide pool of
 * off-heap blocks, wrapped into the caller's allocator (which counts them at the size asked for,
 * and whose owner closes them like any buffer; the last release returns the block to the pool). A
 * large buffer allocated afresh per call is fresh pages, which Netty's allocator zeroes on one
 * thread and whose first touch faults page by page: more than the normalization itself costs on the
 * CPU engine. A pooled block's pages are touched already. Its old contents never show: the engine
 * writes every element of the valid rows and the caller zeroes the others, as for the GPU's pinned
 * outputs.
 *
 * <p>Only buffers of at least {@link #SMALLEST_BYTES}. The pool lives while a normalizer is open
 * ({@link #normalizerOpened}): then idle blocks stay pooled up to {@code
 * embednorm.hostOutputPoolBytes} (0: no pooling) and others are freed when released; when the last
 * normalizer closes, the idle blocks are freed, and so is every block released after. Thread-safe.
 */
public final class HostOutputs {
  /** Smaller buffers come from the caller's allocator, whose pools serve them well. */
  public static final long SMALLEST_BYTES = 1L << 20;

  private static final long PAGE = 4096;
  private static final Object LOCK = new Object();

  /** Idle blocks by capacity. Guarded by LOCK. */
  private static final Map<Long, Deque<Long>> IDLE = new HashMap<>();

  private static long idleBytes;
  private static int openNormalizers;

  private HostOutputs() {}

  /** A normalizer opened: blocks released while one is open go back to the pool. */
  public static void normalizerOpened() {
    synchronized (LOCK) {
      openNormalizers++;
    }
  }

  /**
   * A normalizer closed; the last one frees the idle blocks. Call once per {@link
   * #normalizerOpened}.
   */
  public static void normalizerClosed() {
    synchronized (LOCK) {
      if (--openNormalizers == 0) {
        IDLE.values().forEach(blocks -> blocks.forEach(MemoryUtil::freeMemory));
        IDLE.clear();
        idleBytes = 0;
      }
    }
  }

  /**
   * A buffer of {@code bytes} accounted to {@code allocator}: a pooled block where the rules above
   * allow, from {@code allocator} otherwise. The caller closes it.
   */
  public static ArrowBuf buffer(BufferAllocator allocator, long bytes) {
    long limit = InternalSwitches.HOST_OUTPUT_POOL_BYTES.value();
    if (bytes < SMALLEST_BYTES || limit <= 0) {
      return allocator.buffer(bytes);
    }
    long capacity = capacityFor(bytes);
    long address = takeIdle(capacity);
    if (address == 0) {
      address = MemoryUtil.allocateMemory(capacity);
    }
    return LentMemory.lend(allocator, new Pooled(address, capacity, bytes, limit));
  }

  /** Bytes of idle blocks in the pool. */
  public static long idleBytes() {
    synchronized (LOCK) {
      return idleBytes;
    }
  }

  /** Normalizers open now (those that called {@link #normalizerOpened} and not yet closed). */
  public static int openNormalizers() {
    synchronized (LOCK) {
      return openNormalizers;
    }
  }

  /** Whole pages, rounded up to a quarter of the request's highest power of two: few classes. */
  static long capacityFor(long bytes) {
    long step = Math.max(PAGE, Long.highestOneBit(bytes) / 4);
    return (bytes + step - 1) / step * step;
  }

  private static long takeIdle(long capacity) {
    synchronized (LOCK) {
      Deque<Long> blocks = IDLE.get(capacity);
      if (blocks == null || blocks.isEmpty()) {
        return 0;
      }
      idleBytes -= capacity;
      return blocks.pop();
    }
  }

  private static void giveBack(long address, long capacity, long limit) {
    synchronized (LOCK) {
      if (openNormalizers > 0 && idleBytes + capacity <= limit) {
        IDLE.computeIfAbsent(capacity, key -> new ArrayDeque<>()).push(address);
        idleBytes += capacity;
        return;
      }
    }
    MemoryUtil.freeMemory(address);
  }

  /** A pooled block lent to an Arrow allocator; given back under the limit of its lending. */
  private static final class Pooled extends LentMemory {
    private final long capacity;
    private final long limit;

    Pooled(long address, long capacity, long bytes, long limit) {
      super(bytes, address);
      this.capacity = capacity;
      this.limit = limit;
    }

    @Override
    protected void giveBack() {
      HostOutputs.giveBack(memoryAddress(), capacity, limit);
    }
  }
}

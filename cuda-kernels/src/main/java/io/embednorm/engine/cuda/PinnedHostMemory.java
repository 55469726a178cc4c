package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.HostPin;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.PinnedBlock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jcuda.CudaException;
import jcuda.driver.JCudaDriver;

/**
 * Page-locked host memory, the kind the GPU copies to and from at full PCIe speed: blocks that
 * embednorm allocates pinned (and pools, since pinning is slow), and ranges of other memory (e.g.
 * Arrow buffers) registered with the driver for the length of a call.
 *
 * <p>One process-wide registry knows every pinned range, so that a range is registered once even
 * when several threads copy from it at once, and never overlaps another registration (the driver
 * refuses that). Memory this registry did not pin is treated as pageable.
 */
public final class PinnedHostMemory {
  /** Registrations and allocations cover whole pages. */
  static final long PAGE = 4096;

  /** Idle pinned blocks kept for reuse, at most this many bytes (system property to change). */
  static final long POOL_LIMIT = InternalSwitches.PINNED_POOL_BYTES.value();

  private static final Object LOCK = new Object();

  /** Live pinned ranges by start address. Guarded by LOCK. */
  private static final TreeMap<Long, Range> RANGES = new TreeMap<>();

  /** Idle blocks by capacity. Guarded by LOCK. */
  private static final Map<Long, Deque<Long>> IDLE = new HashMap<>();

  private static long idleBytes;
  private static long allocatedBytes;

  private PinnedHostMemory() {}

  /**
   * A pinned block of at least {@code bytes} bytes, from the pool when one is idle. The caller
   * closes it, which returns it to the pool.
   *
   * @throws EmbedNormException when the driver cannot pin that much memory
   */
  public static PinnedBlock allocate(long bytes) {
    long capacity = capacityFor(bytes);
    synchronized (LOCK) {
      Deque<Long> idle = IDLE.get(capacity);
      if (idle != null && !idle.isEmpty()) {
        idleBytes -= capacity;
        return new CudaPinnedBlock(idle.pop(), capacity);
      }
    }
    CudaContext.of(0);
    HostPointer pointer = new HostPointer();
    try {
      cuMemHostAlloc(pointer, capacity, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE);
    } catch (CudaException failure) {
      releasePooled();
      try {
        cuMemHostAlloc(pointer, capacity, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE);
      } catch (CudaException again) {
        throw new EmbedNormException(
            "Cannot allocate "
                + capacity
                + " bytes of pinned host memory: "
                + again.getMessage()
                + " ("
                + allocatedBytes()
                + " bytes pinned by embednorm already)",
            again);
      }
    }
    long address = pointer.address();
    synchronized (LOCK) {
      RANGES.put(address, new Range(address, address + capacity, Kind.ALLOCATED));
      allocatedBytes += capacity;
    }
    return new CudaPinnedBlock(address, capacity);
  }

  /**
   * Makes {@code [address, address + bytes)} copyable at full speed for as long as the returned pin
   * is open: nothing to do when embednorm pinned it already, otherwise its pages are registered
   * with the driver. Pages that other open pins registered already are shared (the pin holds them
   * too); the pages between them are registered anew, so that registrations never overlap (the
   * driver refuses that). Where the driver refuses a registration, those pages stay pageable and
   * the pin says {@link HostPin.Kind#PAGEABLE}; copies still work (see {@link #pieces}).
   *
   * <p>The caller keeps the memory alive and closes the pin after the last copy has finished.
   */
  public static HostPin pin(long address, long bytes) {
    if (bytes <= 0) {
      return new CudaHostPin(HostPin.Kind.PINNED, List.of(), 0);
    }
    long start = address & -PAGE;
    long end = (address + bytes + PAGE - 1) & -PAGE;
    long began = System.nanoTime();
    synchronized (LOCK) {
      Map.Entry<Long, Range> below = RANGES.floorEntry(address);
      if (below != null && below.getValue().end >= address + bytes) {
        Range range = below.getValue();
        if (range.kind == Kind.ALLOCATED) {
          return new CudaHostPin(HostPin.Kind.PINNED, List.of(), 0);
        }
        range.references++;
        return new CudaHostPin(HostPin.Kind.REGISTERED, List.of(range), 0);
      }
      // Walk the pages from start: reuse the ranges there, register the gaps between them.
      List<Range> held = new ArrayList<>();
      boolean registered = false;
      boolean whole = true;
      long at = start;
      Map.Entry<Long, Range> first = RANGES.lowerEntry(start);
      if (first != null && first.getValue().end > start) {
        at = hold(first.getValue(), held);
      }
      while (at < end) {
        Map.Entry<Long, Range> next = RANGES.ceilingEntry(at);
        long gapEnd = next == null ? end : Math.min(end, next.getKey());
        if (gapEnd > at) {
          Range gap = register(at, gapEnd);
          if (gap == null) {
            whole = false;
          } else {
            held.add(gap);
            registered = true;
          }
          at = gapEnd;
        } else {
          at = hold(next.getValue(), held);
        }
      }
      long nanos = registered ? System.nanoTime() - began : 0;
      return new CudaHostPin(whole ? HostPin.Kind.REGISTERED : HostPin.Kind.PAGEABLE, held, nanos);
    }
  }

  /** Holds {@code range} for a pin (allocated ranges need no hold); returns its end. */
  private static long hold(Range range, List<Range> held) {
    if (range.kind == Kind.REGISTERED) {
      range.references++;
      held.add(range);
    }
    return range.end;
  }

  /** Registers whole pages {@code [start, end)}, or returns null where the driver refuses. */
  private static Range register(long start, long end) {
    CudaContext.of(0);
    try {
      cuMemHostRegister(
          new HostPointer(start), end - start, JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE);
    } catch (CudaException refused) {
      return null;
    }
    Range range = new Range(start, end, Kind.REGISTERED);
    range.references = 1;
    RANGES.put(start, range);
    return range;
  }

  /**
   * The lengths of the consecutive pieces of {@code [address, address + bytes)} that each lie
   * within one pinned range or within no pinned range, in order. An asynchronous copy must not span
   * memory of several registrations or mix registered and pageable memory (the driver answers
   * CUDA_ERROR_INVALID_VALUE), so copies go piece by piece.
   */
  public static long[] pieces(long address, long bytes) {
    List<Long> lengths = new ArrayList<>();
    long end = address + bytes;
    synchronized (LOCK) {
      long at = address;
      while (at < end) {
        Map.Entry<Long, Range> below = RANGES.floorEntry(at);
        long pieceEnd;
        if (below != null && below.getValue().end > at) {
          pieceEnd = Math.min(end, below.getValue().end);
        } else {
          Long next = RANGES.higherKey(at);
          pieceEnd = next == null ? end : Math.min(end, next);
        }
        lengths.add(pieceEnd - at);
        at = pieceEnd;
      }
    }
    return lengths.stream().mapToLong(Long::longValue).toArray();
  }

  /** Whether embednorm has pinned all of {@code [address, address + bytes)} now. */
  public static boolean isPinned(long address, long bytes) {
    synchronized (LOCK) {
      Map.Entry<Long, Range> below = RANGES.floorEntry(address);
      return below != null && below.getValue().end >= address + bytes;
    }
  }

  /**
   * Whether all of {@code [address, address + bytes)} lies in one block that embednorm allocated
   * pinned (registrations, which end with their pins, do not count).
   */
  public static boolean isAllocated(long address, long bytes) {
    synchronized (LOCK) {
      Map.Entry<Long, Range> below = RANGES.floorEntry(address);
      return below != null
          && below.getValue().kind == Kind.ALLOCATED
          && below.getValue().end >= address + bytes;
    }
  }

  /** Frees the idle pooled blocks. */
  public static void releasePooled() {
    synchronized (LOCK) {
      for (Deque<Long> idle : IDLE.values()) {
        for (Long address : idle) {
          free(address);
        }
      }
      IDLE.clear();
      idleBytes = 0;
    }
  }

  /** Bytes of pinned blocks allocated and not freed, idle pooled ones included. */
  public static long allocatedBytes() {
    synchronized (LOCK) {
      return allocatedBytes;
    }
  }

  /** Bytes of pinned blocks idle in the pool. */
  public static long pooledBytes() {
    synchronized (LOCK) {
      return idleBytes;
    }
  }

  /** Bytes of other memory registered now (by pins still open). */
  public static long registeredBytes() {
    synchronized (LOCK) {
      return RANGES.values().stream()
          .filter(range -> range.kind == Kind.REGISTERED)
          .mapToLong(range -> range.end - range.start)
          .sum();
    }
  }

  /** Pages, rounded up to a size class (four per power of two) so that pooled blocks fit again. */
  static long capacityFor(long bytes) {
    long pages = Math.max(1, (bytes + PAGE - 1) / PAGE);
    int shift = Math.max(0, 63 - Long.numberOfLeadingZeros(pages) - 2);
    long step = 1L << shift;
    return ((pages + step - 1) / step) * step * PAGE;
  }

  static void giveBack(long address, long capacity) {
    synchronized (LOCK) {
      if (idleBytes + capacity <= POOL_LIMIT) {
        IDLE.computeIfAbsent(capacity, key -> new ArrayDeque<>()).push(address);
        idleBytes += capacity;
        return;
      }
      free(address);
    }
  }

  static void unpin(Range range) {
    synchronized (LOCK) {
      if (--range.references > 0) {
        return;
      }
      RANGES.remove(range.start);
      CudaContext.of(0);
      cuMemHostUnregister(new HostPointer(range.start));
    }
  }

  /** Guarded by LOCK. */
  private static void free(long address) {
    Range range = RANGES.remove(address);
    if (range != null) {
      allocatedBytes -= range.end - range.start;
    }
    CudaContext.of(0);
    cuMemFreeHost(new HostPointer(address));
  }

  enum Kind {
    ALLOCATED,
    REGISTERED
  }

  /** A pinned range. */
  static final class Range {
    final long start;
    final long end;
    final Kind kind;
    int references;

    Range(long start, long end, Kind kind) {
      this.start = start;
      this.end = end;
      this.kind = kind;
    }
  }
}

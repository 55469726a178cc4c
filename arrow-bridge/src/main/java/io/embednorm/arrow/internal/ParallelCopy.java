package io.embednorm.arrow.internal;

import io.embednorm.engine.InternalSwitches;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Copies a range in pieces on the process's copy threads ({@code embednorm.staging.copyThreads}
 * daemons, started as needed and stopped when idle) and the calling thread: one thread copies far
 * below what the memory and PCIe can carry. Each piece is claimed once by whichever thread comes
 * first, the caller included, so a copy finishes even when every copy thread is busy with other
 * callers' copies. Thread-safe.
 */
final class ParallelCopy {
  /** Pieces are this large (the last may be smaller): large enough that claiming one is cheap. */
  static final long PIECE_BYTES = 1L << 20;

  private static final ExecutorService THREADS = threads();

  private ParallelCopy() {}

  /** Copies one piece: {@code bytes} from {@code offset} into the range. */
  interface Piece {
    void copy(long offset, long bytes);
  }

  /**
   * Runs {@code piece} over {@code [0, bytes)} in pieces and returns once every piece has ended;
   * throws the first failure, after the others have ended (no piece runs after this returns).
   */
  static void run(long bytes, Piece piece) {
    if (bytes <= PIECE_BYTES) {
      piece.copy(0, bytes);
      return;
    }
    Pieces pieces = new Pieces(bytes, piece);
    int helpers = Math.min(InternalSwitches.STAGING_COPY_THREADS.value(), pieces.count - 1);
    for (int helper = 0; helper < helpers; helper++) {
      THREADS.execute(pieces::work);
    }
    pieces.work();
    pieces.awaitAll();
  }

  private static ExecutorService threads() {
    AtomicInteger counter = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            Math.max(1, InternalSwitches.STAGING_COPY_THREADS.value()),
            Math.max(1, InternalSwitches.STAGING_COPY_THREADS.value()),
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            task -> {
              Thread thread = new Thread(task, "embednorm-staging-" + counter.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** The pieces of one copy: claimed by index, counted when done. */
  private static final class Pieces {
    private final long bytes;
    private final Piece piece;
    private final int count;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private int done;

    Pieces(long bytes, Piece piece) {
      this.bytes = bytes;
      this.piece = piece;
      this.count = (int) ((bytes + PIECE_BYTES - 1) / PIECE_BYTES);
    }

    /** Copies pieces until none is left to claim. */
    void work() {
      int index;
      while ((index = next.getAndIncrement()) < count) {
        long offset = index * PIECE_BYTES;
        try {
          if (failure.get() == null) {
            piece.copy(offset, Math.min(PIECE_BYTES, bytes - offset));
          }
        } catch (RuntimeException | Error copying) {
          failure.compareAndSet(null, copying);
        } finally {
          synchronized (this) {
            if (++done == count) {
              notifyAll();
            }
          }
        }
      }
    }

    /** Waits for every piece (those claimed by other threads too), then throws a failure. */
    void awaitAll() {
      synchronized (this) {
        Monitors.awaitUninterruptibly(this, () -> done >= count);
      }
      Throwable first = failure.get();
      if (first instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (first instanceof Error error) {
        throw error;
      }
    }
  }
}

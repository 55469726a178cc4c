package io.embednorm.arrow.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Writes finished chunks from their staging slots to a {@link StagingTarget} on a thread of its
 * own, whole and in the order they are handed over, so that the staging's thread fills the next
 * chunk meanwhile: for a target whose writes do not go faster on several threads (a file: the
 * kernel serializes the writes to one file). The thread starts with the first chunk and ends at
 * {@link #stop()}.
 *
 * <p>Used by one {@link StagedChunks}, which hands it slots the device is done with and takes each
 * back once its write has ended ({@link #pollWritten()}). After a write fails, the chunks queued
 * behind it are not written; their slots come back all the same, and the failure is thrown to the
 * staging's thread. Thread-safe.
 */
final class SlotWriter {
  private static final AtomicInteger THREADS = new AtomicInteger();

  private final StagingTarget target;
  private final Deque<Write> queued = new ArrayDeque<>();
  private final Deque<StagingSlot> written = new ArrayDeque<>();
  private Thread thread;
  private boolean writing;
  private boolean stopped;
  private Throwable failure;

  SlotWriter(StagingTarget target) {
    this.target = target;
  }

  /**
   * Queues the write of {@code bytes} from {@code address} (in {@code slot}) to {@code position}.
   */
  synchronized void write(StagingSlot slot, long address, long position, long bytes) {
    if (stopped) {
      throw new IllegalStateException("Cannot write a chunk: the staging is closed");
    }
    queued.add(new Write(slot, address, position, bytes));
    if (thread == null) {
      thread = new Thread(this::writeQueued, "embednorm-writer-" + THREADS.incrementAndGet());
      thread.setDaemon(true);
      thread.start();
    }
    notifyAll();
  }

  /** Chunks queued or being written. */
  synchronized int pending() {
    return queued.size() + (writing ? 1 : 0);
  }

  /** A slot whose write has ended, or null; throws the failure of a write first. */
  synchronized StagingSlot pollWritten() {
    throwFailure();
    return written.poll();
  }

  /** Waits until a write has ended, unless none is pending; throws the failure of a write. */
  synchronized void awaitWritten() {
    Monitors.awaitUninterruptibly(
        this, () -> !written.isEmpty() || failure != null || pending() == 0);
    throwFailure();
  }

  /** Waits until every chunk handed over is written; throws the failure of a write. */
  synchronized void awaitAll() {
    Monitors.awaitUninterruptibly(this, () -> failure != null || pending() == 0);
    throwFailure();
  }

  /**
   * Drops the chunks not yet being written and waits for the write in progress (it cannot be cut
   * short), so that nothing is written after this returns; the slots of every chunk handed over are
   * then in {@link #takeAllWritten()}. Idempotent.
   */
  synchronized void stop() {
    stopped = true;
    while (!queued.isEmpty()) {
      written.add(queued.poll().slot());
    }
    notifyAll();
    Monitors.awaitUninterruptibly(this, () -> !writing);
  }

  /** Takes the slots of every ended write, without throwing a failure. */
  synchronized Deque<StagingSlot> takeAllWritten() {
    Deque<StagingSlot> slots = new ArrayDeque<>(written);
    written.clear();
    return slots;
  }

  /** The writer thread: writes the queued chunks one after the other until stopped. */
  private void writeQueued() {
    while (true) {
      Write next;
      synchronized (this) {
        while (queued.isEmpty() && !stopped) {
          try {
            wait();
          } catch (InterruptedException ignored) {
            // only stop() ends this thread, so that no slot is left unwritten and unreturned
          }
        }
        if (queued.isEmpty()) {
          return;
        }
        next = queued.poll();
        if (failure != null) {
          written.add(next.slot());
          notifyAll();
          continue;
        }
        writing = true;
      }
      Throwable failed = null;
      try {
        target.copyFrom(next.address(), next.position(), next.bytes());
      } catch (RuntimeException | Error writingFailure) {
        failed = writingFailure;
      }
      synchronized (this) {
        writing = false;
        if (failure == null) {
          failure = failed;
        }
        written.add(next.slot());
        notifyAll();
      }
    }
  }

  private void throwFailure() {
    if (failure instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failure instanceof Error error) {
      throw error;
    }
  }

  private record Write(StagingSlot slot, long address, long position, long bytes) {}
}

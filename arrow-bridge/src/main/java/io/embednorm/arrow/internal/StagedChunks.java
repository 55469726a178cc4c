package io.embednorm.arrow.internal;

import static io.embednorm.arrow.internal.HostAddresses.NOT_PINNED;

import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.PipelineSession;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Runs the chunks of one {@link PipelineSession} through pinned staging slots, for memory the
 * device cannot copy at full speed in place: each chunk's input is copied from the {@link
 * StagingSource} into a slot (in pieces, on the copy threads), enqueued from there, and once the
 * session says the chunk is done, its output is copied from the slot to the {@link StagingTarget}
 * and the slot reused. Up to {@code lanes + 2} slots are in flight, so that filling and draining
 * overlap the device's uploads, kernels and downloads. A side whose memory is pinned already
 * ({@code pinnedAddress}) is copied by the device in place. A target that {@linkplain
 * StagingTarget#writesOnOneThread() writes on one thread} gets each finished chunk whole on a
 * writer thread of this staging's ({@link SlotWriter}), which writes it while this thread fills the
 * next chunks; its slot is reused once written, and a failed write is thrown here.
 *
 * <p>Used by one thread, as its session. Holds slots of the {@link StagingPool} from the first
 * chunk to {@link #close()}: the caller closes it after the session has closed (or after {@link
 * #finish()}), so that no copy still reads or writes a slot given back.
 */
public final class StagedChunks implements AutoCloseable {
  private final PipelineSession session;
  private final StagingPool pool;
  private final StagingSource source;
  private final StagingTarget target;
  private final int slotLimit;
  private final Deque<StagingSlot> idle = new ArrayDeque<>();
  private final Deque<InFlight> inFlight = new ArrayDeque<>();
  private final List<StagingSlot> unsettled = new ArrayList<>();
  private final SlotWriter writer;
  private int held;
  private boolean closed;

  /** Staging for {@code session}'s chunks, from {@code source} to {@code target}. */
  public StagedChunks(
      PipelineSession session, StagingPool pool, StagingSource source, StagingTarget target) {
    this.session = session;
    this.pool = pool;
    this.source = source;
    this.target = target;
    this.slotLimit = Math.max(1, Math.min(pool.maximumSlots(), session.lanes() + 2));
    this.writer = target.writesOnOneThread() ? new SlotWriter(target) : null;
  }

  /** Enqueues a chunk whose input and output are at the given addresses; returns its ticket. */
  public interface Enqueue {
    long enqueue(long inputAddress, long outputAddress);
  }

  /**
   * Runs the chunk of bytes {@code [position, position + bytes)}: stages its input (unless pinned),
   * calls {@code enqueue} with the addresses the device should copy, and drains its output once
   * done (at a later call, or {@link #finish()}). A failure of {@code enqueue} is thrown as it is;
   * after a {@link GpuOutOfMemoryException} the caller may run the chunk again in smaller parts.
   */
  public void run(long position, long bytes, Enqueue enqueue) {
    long pinnedInput = source.pinnedAddress(position);
    long pinnedOutput = target.pinnedAddress(position);
    if (pinnedInput != NOT_PINNED && pinnedOutput != NOT_PINNED) {
      enqueue.enqueue(pinnedInput, pinnedOutput);
      return;
    }
    StagingSlot slot = take(bytes);
    long alignment = source.alignment(position);
    long input = slot.input() + alignment;
    long output = slot.output() + alignment;
    try {
      if (pinnedInput == NOT_PINNED) {
        ParallelCopy.run(
            bytes, (offset, length) -> source.copyTo(position + offset, input + offset, length));
      }
    } catch (RuntimeException | Error failure) {
      settle(slot);
      throw failure;
    }
    long ticket;
    try {
      ticket =
          enqueue.enqueue(
              pinnedInput == NOT_PINNED ? input : pinnedInput,
              pinnedOutput == NOT_PINNED ? output : pinnedOutput);
    } catch (GpuOutOfMemoryException full) {
      // Refused before any copy: the slot is free for the halves the caller retries.
      settle(slot);
      throw full;
    } catch (RuntimeException | Error failure) {
      // The device may have started copying from the slot: it goes back at close.
      unsettled.add(slot);
      throw failure;
    }
    inFlight.add(
        new InFlight(
            ticket, slot, position, bytes, pinnedOutput == NOT_PINNED ? output : NOT_PINNED));
  }

  /** Waits for every chunk in flight and copies its output to the target. */
  public void finish() {
    while (!inFlight.isEmpty()) {
      completeOldest();
    }
    if (writer != null) {
      writer.awaitAll();
      takeWritten();
    }
  }

  /** Gives every slot back to the pool; call after the session has closed. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (writer != null) {
      writer.stop();
      unsettled.addAll(writer.takeAllWritten());
    }
    for (InFlight chunk : inFlight) {
      unsettled.add(chunk.slot());
    }
    inFlight.clear();
    unsettled.addAll(idle);
    idle.clear();
    for (StagingSlot slot : unsettled) {
      pool.give(slot);
    }
    unsettled.clear();
  }

  /**
   * A slot for {@code bytes}: one of this staging's idle ones, a new one from the pool while this
   * staging holds fewer than its limit, else the oldest chunk's once it is done and drained (or,
   * none being in flight, the first written by the writer). Waits for the pool only while it holds
   * none, so that sessions sharing a pool always progress. A wide slot is allocated once fewer than
   * the limit of chunks are in flight or being written, so that wide slots cannot pile up.
   */
  private StagingSlot take(long bytes) {
    takeWritten();
    if (bytes > pool.slotBytes()) {
      while (inFlight.size() + (writer == null ? 0 : writer.pending()) >= slotLimit) {
        awaitSlot();
      }
      // A write that ended after the first look no longer counts as pending, but its slot is
      // still held among the written ones: a wide one is freed here before another is allocated.
      takeWritten();
      return pool.takeWide(bytes);
    }
    StagingSlot slot = idle.poll();
    if (slot != null) {
      return slot;
    }
    if (held < slotLimit) {
      slot = held == 0 ? pool.take() : pool.tryTake();
      if (slot != null) {
        held++;
        return slot;
      }
    }
    while (idle.isEmpty()) {
      awaitSlot();
    }
    return idle.poll();
  }

  /**
   * Frees a slot: the oldest chunk in flight's, its output drained or handed to the writer, else
   * (that keeping the writer busy) the first one the writer is done with.
   */
  private void awaitSlot() {
    if (!inFlight.isEmpty()) {
      completeOldest();
      takeWritten();
      return;
    }
    if (writer != null) {
      // A write may have ended since the caller last looked: its slot is then among the written
      // ones, which awaitWritten returns at once for (as it does when nothing is pending).
      boolean wasPending = writer.pending() > 0;
      writer.awaitWritten();
      if (takeWritten() || wasPending) {
        return;
      }
    }
    throw new IllegalStateException("Cannot stage a chunk: every slot is held by a failed one");
  }

  /**
   * Keeps the slots whose writes have ended and says whether there were any; throws the failure of
   * a write.
   */
  private boolean takeWritten() {
    if (writer == null) {
      return false;
    }
    boolean any = false;
    StagingSlot slot;
    while ((slot = writer.pollWritten()) != null) {
      settle(slot);
      any = true;
    }
    return any;
  }

  /**
   * Waits for the oldest chunk in flight, drains its output (or hands it to the writer) and frees
   * its slot.
   */
  private void completeOldest() {
    InFlight chunk = inFlight.poll();
    try {
      session.awaitChunk(chunk.ticket());
      if (chunk.output() != NOT_PINNED && writer != null) {
        writer.write(chunk.slot(), chunk.output(), chunk.position(), chunk.bytes());
        return;
      }
      if (chunk.output() != NOT_PINNED) {
        long output = chunk.output();
        long position = chunk.position();
        ParallelCopy.run(
            chunk.bytes(),
            (offset, length) -> target.copyFrom(output + offset, position + offset, length));
      }
    } catch (RuntimeException | Error failure) {
      // The device may still copy into the slot: it goes back at close, after the session.
      unsettled.add(chunk.slot());
      throw failure;
    }
    if (chunk.slot().pooled()) {
      idle.push(chunk.slot());
    } else {
      pool.give(chunk.slot());
    }
  }

  /** Keeps a slot that no chunk in flight uses: idle, or a wide one freed. */
  private void settle(StagingSlot slot) {
    if (slot.pooled()) {
      idle.push(slot);
    } else {
      pool.give(slot);
    }
  }

  /**
   * A chunk on the device; {@code output} is its slot's output, or NOT_PINNED: nothing to drain.
   */
  private record InFlight(long ticket, StagingSlot slot, long position, long bytes, long output) {}
}

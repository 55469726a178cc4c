package io.embednorm.arrow;

import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.Device;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TransferTimes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * One test GPU of several, for the spread tests on CI: {@link FaultingGpuEngine}'s results (the CPU
 * engine's, each element's lowest bit flipped), one session at a time (as a CUDA engine with a
 * concurrency of 1: others wait), recording the rows of every chunk it ran, and failing one of its
 * own chunks when told to, so that one device of several fails whatever the others do.
 */
final class RecordingGpuEngine implements NormalizationEngine {
  private final int ordinal;
  private final FaultingGpuEngine gpu = new FaultingGpuEngine();
  private final Semaphore sessions = new Semaphore(1, true);
  private final List<long[]> chunks = new ArrayList<>();
  private final AtomicInteger openSessions = new AtomicInteger();
  private final AtomicInteger enqueued = new AtomicInteger();
  private volatile int failingChunk;
  private volatile Function<String, RuntimeException> failure;
  private volatile boolean closed;

  RecordingGpuEngine(int ordinal) {
    this.ordinal = ordinal;
  }

  /** Makes this engine's {@code chunk}-th chunk from now (from 1) throw {@code failure}. */
  void failChunk(int chunk, Function<String, RuntimeException> failure) {
    this.failure = failure;
    this.enqueued.set(0);
    this.failingChunk = chunk;
  }

  /** The chunks run so far, each {@code [first row, rows]}, in the order they ran. */
  List<long[]> chunks() {
    synchronized (chunks) {
      return List.copyOf(chunks);
    }
  }

  void clearChunks() {
    synchronized (chunks) {
      chunks.clear();
    }
  }

  int openSessions() {
    return openSessions.get();
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public Device device() {
    return Device.GPU;
  }

  @Override
  public String description() {
    return "test gpu " + ordinal;
  }

  @Override
  public int threads() {
    return 1;
  }

  @Override
  public boolean copiesToDevice() {
    return true;
  }

  @Override
  public void normalize(Normalization normalization, RowBatch batch) {
    gpu.normalize(normalization, batch);
  }

  @Override
  public PipelineSession openSession(List<Normalization> steps, ElementType type) {
    sessions.acquireUninterruptibly();
    openSessions.incrementAndGet();
    return new Session(gpu.openSession(steps, type));
  }

  @Override
  public void close() {
    closed = true;
    gpu.close();
  }

  private void beforeChunk(long firstRow, int rows) {
    Function<String, RuntimeException> fails = failure;
    if (failingChunk > 0 && enqueued.incrementAndGet() == failingChunk && fails != null) {
      throw fails.apply("test gpu " + ordinal + ", chunk of rows from " + firstRow);
    }
  }

  private void record(long firstRow, int rows) {
    synchronized (chunks) {
      chunks.add(new long[] {firstRow, rows});
    }
  }

  /** Records and fails chunks, then hands them to the faulting engine's session. */
  private final class Session implements PipelineSession {
    private final PipelineSession session;
    private boolean closed;

    Session(PipelineSession session) {
      this.session = session;
    }

    @Override
    public int lanes() {
      return session.lanes();
    }

    @Override
    public long enqueue(
        long inputAddress, long outputAddress, int rows, int width, long firstRowIndex) {
      beforeChunk(firstRowIndex, rows);
      long ticket = session.enqueue(inputAddress, outputAddress, rows, width, firstRowIndex);
      record(firstRowIndex, rows);
      return ticket;
    }

    @Override
    public long enqueueRagged(
        long inputAddress,
        long outputAddress,
        int[] offsets,
        long firstRowIndex,
        ColumnShape shape) {
      beforeChunk(firstRowIndex, offsets.length - 1);
      long ticket =
          session.enqueueRagged(inputAddress, outputAddress, offsets, firstRowIndex, shape);
      record(firstRowIndex, offsets.length - 1);
      return ticket;
    }

    @Override
    public void awaitChunk(long ticket) {
      session.awaitChunk(ticket);
    }

    @Override
    public TransferTimes finish() {
      return session.finish();
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        session.close();
        openSessions.decrementAndGet();
        sessions.release();
      }
    }
  }
}

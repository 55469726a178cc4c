package io.embednorm.engine;

/**
 * One user's turn on an engine that copies host memory to a device and back (the GPU): chunks of
 * rows, given by host address, go host → device → kernels → host, several in flight at once. Opened
 * by {@link NormalizationEngine#openSession}, which limits how many are open at once.
 *
 * <p>Host memory must stay alive, and the caller must not touch a chunk's input or output, until
 * that chunk is done: {@link #awaitChunk} of its ticket, or {@link #finish()}, returned. Memory
 * pinned through {@link HostMemory} copies at full speed; other memory works, through the driver's
 * staging. Not thread-safe: one thread uses a session. {@link #close()} waits for everything
 * enqueued (a failure never leaves a copy writing into freed memory) and returns the session's
 * device resources to the engine.
 */
public interface PipelineSession extends AutoCloseable {

  /** Bytes each row offset of a ragged chunk takes on its way to the device. */
  int RAGGED_OFFSET_BYTES = Long.BYTES;

  /** The ticket of a chunk that holds no rows: done at once. */
  long NOTHING_ENQUEUED = -1;

  /** How many chunks can be in flight at once. */
  int lanes();

  /**
   * Enqueues {@code rows} rows of {@code width} elements from {@code inputAddress}, their results
   * to go to {@code outputAddress}. A row's bits do not depend on where a chunk starts, only on its
   * address modulo 16 (which picks vector loads).
   *
   * @param firstRowIndex the index of the chunk's first row, for error messages
   * @return the chunk's ticket for {@link #awaitChunk}: the session's chunks counted from 0, or
   *     {@link #NOTHING_ENQUEUED} when the chunk holds no element
   * @throws EmbedNormException when a weight or bias does not fit the width
   * @throws GpuOutOfMemoryException when the chunk does not fit the device (retryable in smaller
   *     chunks)
   */
  long enqueue(long inputAddress, long outputAddress, int rows, int width, long firstRowIndex);

  /**
   * Enqueues ragged rows: row {@code r} holds elements {@code [offsets[r], offsets[r + 1])} counted
   * from {@code inputAddress} and {@code outputAddress}. Every chunk of a column gives the same
   * {@code shape}, which picks the kernels. The offsets go to the device as {@code rows + 1} int64
   * values through the driver's staging (see {@link #RAGGED_OFFSET_BYTES}).
   *
   * @return the chunk's ticket, as {@link #enqueue}'s
   */
  long enqueueRagged(
      long inputAddress, long outputAddress, int[] offsets, long firstRowIndex, ColumnShape shape);

  /**
   * Waits until the chunk of {@code ticket} is in host memory: its input may then be reused and its
   * output read, while later chunks are still in flight. Returns at once for a chunk already done
   * (or {@link #NOTHING_ENQUEUED}).
   *
   * @throws IllegalArgumentException for a ticket this session did not give
   * @throws GpuFaultException when the device failed
   */
  void awaitChunk(long ticket);

  /**
   * Waits until every enqueued chunk is in host memory and returns their device times since the
   * last finish. The session stays open for more chunks.
   */
  TransferTimes finish();

  /** Waits for everything enqueued, then gives the device resources back. Idempotent. */
  @Override
  void close();
}

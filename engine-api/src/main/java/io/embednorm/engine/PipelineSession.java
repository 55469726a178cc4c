package io.embednorm.engine;

/**
 * One user's turn on an engine that copies host memory to a device and back (the GPU): chunks of
 * rows, given by host address, go host → device → kernels → host, several in flight at once. Opened
 * by {@link NormalizationEngine#openSession}, which limits how many are open at once.
 *
 * <p>Host memory must stay alive, and the caller must not touch a chunk's output, until {@link
 * #finish()} returns. Memory pinned through {@link HostMemory} copies at full speed; other memory
 * works, through the driver's staging. Not thread-safe: one thread uses a session. {@link #close()}
 * waits for everything enqueued (a failure never leaves a copy writing into freed memory) and
 * returns the session's device resources to the engine.
 */
public interface PipelineSession extends AutoCloseable {

  /** How many chunks can be in flight at once. */
  int lanes();

  /**
   * Enqueues {@code rows} rows of {@code width} elements from {@code inputAddress}, their results
   * to go to {@code outputAddress}. A row's bits do not depend on where a chunk starts.
   *
   * @param firstRowIndex the index of the chunk's first row, for error messages
   * @throws EmbedNormException when a weight or bias does not fit the width
   * @throws GpuOutOfMemoryException when the chunk does not fit the device (retryable in smaller
   *     chunks)
   */
  void enqueue(long inputAddress, long outputAddress, int rows, int width, long firstRowIndex);

  /**
   * Enqueues ragged rows: row {@code r} holds elements {@code [offsets[r], offsets[r + 1])} counted
   * from {@code inputAddress} and {@code outputAddress}. Every chunk of a column gives the same
   * {@code shape}, which picks the kernels.
   *
   * @return the bytes of row offsets staged for the upload
   */
  long enqueueRagged(
      long inputAddress, long outputAddress, int[] offsets, long firstRowIndex, ColumnShape shape);

  /**
   * Waits until every enqueued chunk is in host memory and returns their device times since the
   * last finish. The session stays open for more chunks.
   */
  TransferTimes finish();

  /** Waits for everything enqueued, then gives the device resources back. Idempotent. */
  @Override
  void close();
}

package io.embednorm.kernels;

/**
 * Normalizes batches of rows on one device. The CPU engine and the CUDA engine implement it with
 * the same semantics (DESIGN.md §2); on one device a row's output bits depend only on the row and
 * the normalization, never on the batch around it.
 *
 * <p>Engines are thread-safe. An engine owns its device resources (threads, streams, device memory)
 * and frees them on {@link #close()}; it never owns the buffers of the batches it is given.
 */
public interface NormalizationEngine extends AutoCloseable {

  /** The device this engine runs on. */
  Device device();

  /** What runs, for logs and explain output, e.g. {@code cpu (java scalar)}. */
  String description();

  /**
   * Writes the normalization of every row of {@code batch.input()} to the same elements of {@code
   * batch.output()}. Empty rows stay empty; elements outside the rows are left alone.
   *
   * @throws EmbedNormException when a weight or bias does not fit a row (the message names the op,
   *     the row index counted from {@link RowBatch#firstRowIndex()}, and both lengths)
   */
  void normalize(Normalization normalization, RowBatch batch);

  @Override
  void close();
}

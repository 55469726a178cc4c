package io.embednorm.engine;

import io.embednorm.engine.spi.HostEncoding;
import java.nio.FloatBuffer;
import java.util.List;

/**
 * Normalizes batches of rows on one device: the one seam every surface goes through. The CPU engine
 * and the CUDA engine implement it with the same semantics (docs/SEMANTICS.md); on one device a
 * row's output bits depend only on the row and the normalization, never on the batch around it.
 * Surfaces get engines from {@link Engines}, never by naming an implementation.
 *
 * <p>Engines are thread-safe. An engine owns its device resources (threads, streams, device memory)
 * and frees them on {@link #close()}; it never owns the buffers of the batches it is given.
 */
public interface NormalizationEngine extends AutoCloseable {

  /** The device this engine runs on. */
  Device device();

  /** What runs, for logs and explain output, e.g. {@code cpu (java scalar)}. */
  String description();

  /** The most host threads one call runs on. */
  int threads();

  /**
   * Writes the normalization of every row of {@code batch.input()} to the same elements of {@code
   * batch.output()}. Empty rows stay empty; elements outside the rows are left alone.
   *
   * @throws EmbedNormException when a weight or bias does not fit a row (the message names the op,
   *     the row index counted from {@link RowBatch#firstRowIndex()}, and both lengths)
   */
  void normalize(Normalization normalization, RowBatch batch);

  /**
   * Writes the {@link Encoding} of the normalization of every float32 row of {@code batch.input()}
   * to {@code target} (layout in {@link EncodedRows}), in one pass over the input: the float32
   * result is encoded where it is computed and never written to memory. {@code batch.output()} is
   * not written; pass the input buffer there.
   *
   * @throws EmbedNormException when the rows are not float32, a target buffer is too small, or as
   *     {@link #normalize(Normalization, RowBatch)}
   */
  default void normalizeEncoded(Normalization normalization, RowBatch batch, EncodedRows target) {
    HostEncoding.run(this, normalization, batch, target);
  }

  /**
   * Writes {@code causal_conv} (docs/SEMANTICS.md, Causal convolution) of {@code count} sequences
   * of {@code steps} steps held one after another in {@code sequences} (sequence s, step t, channel
   * c at float {@code (s * steps + t) * channels + c}) to {@code output} in the same layout. Both
   * buffers hold exactly the batch's floats, counted from index 0 whatever their positions; heap
   * and direct buffers both serve (a slice of an Arrow buffer is read and written in place, with no
   * copy into the Java heap on a GPU). This default runs the CPU engine's loops one sequence after
   * another on the calling thread.
   *
   * @throws EmbedNormException as {@link ConvolutionKernel#checkBatch}, or when {@code output} is
   *     read-only
   */
  default void causalConvolution(
      ConvolutionKernel kernel,
      float eps,
      FloatBuffer sequences,
      int count,
      int steps,
      FloatBuffer output) {
    kernel.checkBatch(count, steps, sequences, output);
    float[] input = FloatArrays.readable(sequences);
    float[] result = FloatArrays.writable(output);
    int floats = steps * kernel.channels();
    CausalConvolution loops = Engines.causalConvolution();
    for (int sequence = 0; sequence < count; sequence++) {
      loops.convolve(kernel, eps, input, sequence * floats, steps, result, sequence * floats);
    }
    FloatArrays.store(result, output);
  }

  /**
   * Whether this engine copies rows to a device of its own, through {@link #openSession}: then
   * callers holding host memory by address should pipeline through sessions; otherwise the engine
   * works on host memory directly and {@link #normalize} is the way in.
   */
  default boolean copiesToDevice() {
    return false;
  }

  /**
   * Opens a pipelined session that runs {@code steps} in order on rows of {@code type}, waiting
   * while the engine's limit of sessions are open. The caller closes it.
   *
   * @throws EmbedNormException when the engine does not copy to a device ({@link #copiesToDevice()}
   *     is false) or is closed
   */
  default PipelineSession openSession(List<Normalization> steps, ElementType type) {
    throw new EmbedNormException(
        "Cannot open a pipelined session on " + description() + ": it works on host memory");
  }

  @Override
  void close();
}

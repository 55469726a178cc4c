package io.embednorm.spark.internal;

import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The Arrow copies of one task's input columns: a list vector per input column, refilled batch
 * after batch ({@link SparkArrays#toArrow(org.apache.spark.sql.vectorized.ColumnVector, int,
 * SparkArrays.ElementWidth, ListVector, BatchTimes)}; for {@code causal_conv}, {@link
 * SparkSequences#toArrow}, one per column and kernel width), so that a task touches the same memory
 * each batch instead of fresh pages. A vector holds the task's largest batch of its column, and is
 * valid until its column is copied again. The task's {@link ColumnarNormalizer} owns this and
 * closes it when the task completes.
 */
final class InputVectors implements AutoCloseable {
  private final BufferAllocator allocator;
  private final Map<Integer, ListVector> vectors = new HashMap<>();
  private final Map<SequenceInput, ListVector> sequences = new HashMap<>();

  /** Vectors from {@code allocator}, the task's. */
  InputVectors(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  /** Copies the input column of {@code chain} in {@code batch} into its vector, and returns it. */
  ListVector copy(ColumnarBatch batch, ColumnChain chain, BatchTimes times) {
    ListVector vector = vectors.get(chain.inputOrdinal());
    if (vector == null) {
      vector = SparkArrays.newList(chain.inputName(), chain.width(), allocator);
      vectors.put(chain.inputOrdinal(), vector);
    }
    return SparkArrays.toArrow(
        batch.column(chain.inputOrdinal()), batch.numRows(), chain.width(), vector, times);
  }

  /**
   * Copies the input column of {@code convolution} in {@code batch} into its vector of sequences,
   * and returns it.
   *
   * @throws io.embednorm.engine.EmbedNormException as {@link SparkSequences#toArrow}
   */
  ListVector copySequences(ColumnarBatch batch, ColumnConvolution convolution, BatchTimes times) {
    SequenceInput key = new SequenceInput(convolution.inputOrdinal(), convolution.channels());
    ListVector vector = sequences.get(key);
    if (vector == null) {
      vector = SparkSequences.newList(convolution.inputName(), convolution.channels(), allocator);
      sequences.put(key, vector);
    }
    return SparkSequences.toArrow(
        batch.column(convolution.inputOrdinal()),
        batch.numRows(),
        convolution.kernel(),
        vector,
        times);
  }

  /** Frees the vectors. Idempotent. */
  @Override
  public void close() {
    vectors.values().forEach(ListVector::close);
    vectors.clear();
    sequences.values().forEach(ListVector::close);
    sequences.clear();
  }

  /** A column of sequences copied for kernels of {@code channels} channels. */
  private record SequenceInput(int ordinal, int channels) {}
}

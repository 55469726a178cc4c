package io.embednorm.arrow;

import io.embednorm.kernels.Device;
import io.embednorm.kernels.DeviceChoice;
import io.embednorm.kernels.EmbedNormException;
import io.embednorm.kernels.EngineSelection;
import io.embednorm.kernels.Engines;
import io.embednorm.kernels.Normalization;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Normalizes embedding columns of Arrow data: the public Arrow entry point of embednorm.
 *
 * <p>A column is a {@code FixedSizeList} or {@code List} of float32, float64 or float16 ({@code
 * Float4Vector}, {@code Float8Vector}, {@code Float2Vector}). The result is a new vector with the
 * input's field (name, type, nullability), allocated from the allocator given to {@link #create}:
 * <b>the caller closes the result</b>; the input stays the caller's and is not modified;
 * intermediates are freed before a method returns or throws. Null rows stay null, a row with a null
 * element becomes null, empty rows stay empty. The engine reads the input's element buffer in place
 * and writes straight into the result's.
 *
 * <p>Thread-safe. {@link #close()} frees the engine (device resources), never the allocator or any
 * vector.
 */
public final class ArrowNormalizer implements AutoCloseable {
  /**
   * Rows are handed to the engine in runs of at most this many bytes (buffer views end at 2 GiB).
   */
  static final long DEFAULT_CHUNK_BYTES = 1L << 30;

  private final BufferAllocator allocator;
  private final EngineSelection selection;
  private final long chunkByteLimit;
  private volatile boolean closed;

  ArrowNormalizer(BufferAllocator allocator, EngineSelection selection, long chunkByteLimit) {
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.selection = Objects.requireNonNull(selection, "selection");
    if (chunkByteLimit < 1 || chunkByteLimit > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("chunkByteLimit out of range: " + chunkByteLimit);
    }
    this.chunkByteLimit = chunkByteLimit;
  }

  /**
   * A normalizer on the device that {@code device} resolves to (see {@link Engines#select}); its
   * results are allocated from {@code allocator}, which stays the caller's and must outlive them.
   *
   * @throws EmbedNormException when {@code gpu} is asked for and no GPU is usable
   */
  public static ArrowNormalizer create(BufferAllocator allocator, DeviceChoice device) {
    Objects.requireNonNull(allocator, "allocator");
    return new ArrowNormalizer(
        allocator, Engines.select(Objects.requireNonNull(device, "device")), DEFAULT_CHUNK_BYTES);
  }

  /** Where the normalization runs. */
  public Device device() {
    return selection.device();
  }

  /** Why this device was chosen, e.g. {@code auto chose cpu: ...}. */
  public String deviceReason() {
    return selection.reason();
  }

  /** What runs, for logs, e.g. {@code cpu (java scalar)}. */
  public String engineDescription() {
    return selection.engine().description();
  }

  /**
   * Normalizes the column {@code column} of {@code root} into a new vector; the root and its other
   * columns are left alone. The caller closes the result.
   *
   * @throws EmbedNormException when there is no such column, its type is not supported, or the
   *     weight or bias does not fit a row
   */
  public FieldVector normalize(VectorSchemaRoot root, String column, Normalization normalization) {
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(column, "column");
    int index = EmbeddingColumn.require(root.getSchema().getFields(), column, "the batch");
    return normalize(root.getVector(index), normalization);
  }

  /**
   * Normalizes every row of {@code input} into a new vector of the same field. The caller closes
   * the result; {@code input} stays the caller's.
   *
   * @throws EmbedNormException when the type of {@code input} is not supported or the weight or
   *     bias does not fit a row (the message names the row)
   */
  public FieldVector normalize(FieldVector input, Normalization normalization) {
    return normalize(input, normalization, 0);
  }

  /**
   * As {@link #normalize(FieldVector, Normalization)}, numbering rows from {@code firstRowIndex}.
   */
  FieldVector normalize(FieldVector input, Normalization normalization, long firstRowIndex) {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(normalization, "normalization");
    ListColumn column = ListColumn.of(input);
    if (closed) {
      throw new EmbedNormException(
          "Cannot normalize column '" + column.name() + "': the normalizer is closed");
    }
    return new ChunkedNormalization(selection.engine(), normalization, chunkByteLimit)
        .normalize(column, allocator, firstRowIndex);
  }

  /** The allocator results come from. */
  BufferAllocator allocator() {
    return allocator;
  }

  /** Frees the engine; the allocator and all vectors stay as they are. Idempotent. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      selection.close();
    }
  }
}

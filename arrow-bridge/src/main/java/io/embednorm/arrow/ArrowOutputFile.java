package io.embednorm.arrow;

import io.embednorm.arrow.internal.TemporaryOutput;
import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An Arrow IPC file (file format, uncompressed) written batch by batch to a temporary file next to
 * the output ({@code <name>.embednorm-partial-<pid>}) and moved into place by {@link #commit()}.
 * Closing it without a commit, or stopping the JVM by SIGTERM or SIGINT, deletes the temporary file
 * and leaves any existing output untouched; one left by a killed process is removed by the next
 * write of the same output. Every failure reads "Cannot write Arrow file '&lt;path&gt;':
 * &lt;why&gt;".
 *
 * <p>Either fill {@link #root()} (e.g. by transferring vectors into it) and call {@link
 * #writeBatch()}, or hand whole batches to {@link #write(VectorSchemaRoot)}. Not thread-safe.
 */
public final class ArrowOutputFile implements AutoCloseable {
  private final Path output;
  private final TemporaryOutput file;
  private final VectorSchemaRoot root;
  private final ArrowFileWriter writer;
  private final BufferAllocator allocator;

  private ArrowOutputFile(
      Path output,
      TemporaryOutput file,
      VectorSchemaRoot root,
      BufferAllocator allocator,
      DictionaryProvider dictionaries) {
    this.output = output;
    this.file = file;
    this.root = root;
    this.allocator = allocator;
    this.writer = new ArrowFileWriter(root, dictionaries, file.channel());
  }

  /**
   * Starts writing {@code output} with {@code schema}; creates missing parent directories. The
   * caller closes the result (after {@link #commit()} to keep the file). {@code output} must be
   * absent or a regular file (through a symbolic link, the file is written); anything else fails
   * with "Cannot write output '&lt;path&gt;': &lt;why&gt;" before any file is created.
   *
   * @param allocator where the root's vectors come from; batches given to {@link
   *     #write(VectorSchemaRoot)} must share its root allocator
   */
  public static ArrowOutputFile create(Path output, Schema schema, BufferAllocator allocator) {
    return create(output, schema, allocator, null);
  }

  static ArrowOutputFile create(
      Path output, Schema schema, BufferAllocator allocator, DictionaryProvider dictionaries) {
    Objects.requireNonNull(output, "output");
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(allocator, "allocator");
    TemporaryOutput file = null;
    VectorSchemaRoot root = null;
    try {
      file = TemporaryOutput.create(output);
      root = VectorSchemaRoot.create(schema, allocator);
      return new ArrowOutputFile(
          output,
          file,
          root,
          allocator,
          dictionaries != null ? dictionaries : new DictionaryProvider.MapDictionaryProvider());
    } catch (IOException | RuntimeException failure) {
      if (root != null) {
        root.close();
      }
      if (file != null) {
        file.close();
      }
      throw failure instanceof EmbedNormException refused ? refused : failure(output, failure);
    }
  }

  /** The root whose contents {@link #writeBatch()} writes; owned by this file. */
  public VectorSchemaRoot root() {
    return root;
  }

  /**
   * Writes the current contents of {@link #root()} as one record batch, then clears the root (frees
   * its buffers; vectors filled with {@code setSafe} grow again on their own).
   */
  public void writeBatch() {
    checkOpen();
    try {
      writer.writeBatch();
    } catch (IOException | RuntimeException failure) {
      throw failure(output, failure);
    } finally {
      root.clear();
    }
  }

  /**
   * Writes {@code batch} as one record batch, sharing its buffers (no copy); {@code batch} stays
   * the caller's and is not modified. Its schema must equal this file's.
   */
  public void write(VectorSchemaRoot batch) {
    checkOpen();
    if (!batch.getSchema().equals(root.getSchema())) {
      throw new EmbedNormException(
          "Cannot write Arrow file '"
              + output
              + "': a batch has schema "
              + batch.getSchema()
              + " but the file has "
              + root.getSchema());
    }
    for (FieldVector vector : batch.getFieldVectors()) {
      if (vector.getAllocator().getRoot() != allocator.getRoot()) {
        throw new EmbedNormException(
            "Cannot write Arrow file '"
                + output
                + "': the batch's buffers come from another root allocator than the file's");
      }
    }
    try (ArrowRecordBatch recordBatch = new VectorUnloader(batch).getRecordBatch()) {
      new VectorLoader(root).load(recordBatch);
    }
    writeBatch();
  }

  /**
   * Finishes the file and moves it into place, replacing an existing file.
   *
   * @return the size of the file in bytes
   */
  public long commit() {
    checkOpen();
    try {
      writer.end();
      long bytes = writer.bytesWritten();
      file.commit();
      return bytes;
    } catch (IOException | RuntimeException failure) {
      throw failure(output, failure);
    }
  }

  /** Frees the root; without a commit, also deletes the temporary file. Idempotent. */
  @Override
  public void close() {
    file.close();
    root.close();
  }

  private void checkOpen() {
    if (file.isFinished()) {
      throw new EmbedNormException(
          "Cannot write Arrow file '" + output + "': it is already committed or closed");
    }
  }

  static EmbedNormException failure(Path path, Exception failure) {
    return new EmbedNormException(
        "Cannot write Arrow file '" + path + "': " + ArrowInput.reason(failure), failure);
  }
}

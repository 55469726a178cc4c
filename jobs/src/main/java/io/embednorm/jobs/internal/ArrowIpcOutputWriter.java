package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowFieldWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter$;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * One task's Arrow IPC file: rows gathered into record batches of about {@link #BATCH_BYTES} of
 * embeddings, each written as the batch fills. The file is complete (footer included) only after
 * {@link #close()}; Spark writes it under the attempt's temporary folder and moves it into the
 * output when the task commits, so a failed task leaves nothing in the output. Owns its Arrow
 * memory (a child of Spark's Arrow allocator) and the open file; Spark closes it.
 */
final class ArrowIpcOutputWriter extends OutputWriter {
  /** Embedding bytes per record batch: large enough for readers, small next to a task's memory. */
  static final long BATCH_BYTES = 8L << 20;

  /** Rows per record batch without an embedding column, and the most with one. */
  static final int BATCH_ROWS = 65536;

  private final String path;
  private final BufferAllocator allocator;
  private final VectorSchemaRoot root;
  private final ArrowFieldWriter[] writers;
  private final FixedSizeListColumn embedding;
  private final int embeddingOrdinal;
  private final int batchRows;
  private final ArrowFileWriter file;
  private int rows;

  ArrowIpcOutputWriter(String path, ArrowIpcLayout layout, Configuration configuration) {
    this.path = path;
    this.embeddingOrdinal = layout.fixedOrdinal();
    this.allocator =
        ArrowUtils.rootAllocator().newChildAllocator("embednorm arrow output", 0, Long.MAX_VALUE);
    VectorSchemaRoot created = null;
    FSDataOutputStream stream = null;
    try {
      created = VectorSchemaRoot.create(layout.schema(), allocator);
      List<FieldVector> vectors = created.getFieldVectors();
      writers = new ArrowFieldWriter[vectors.size()];
      if (embeddingOrdinal >= 0) {
        long rowBytes = (long) layout.width() * layout.elementBytes();
        batchRows = (int) Math.max(1, Math.min(BATCH_ROWS, BATCH_BYTES / rowBytes));
        embedding =
            new FixedSizeListColumn(
                (FixedSizeListVector) vectors.get(embeddingOrdinal),
                batchRows,
                layout.elementBytes());
      } else {
        batchRows = BATCH_ROWS;
        embedding = null;
      }
      for (int ordinal = 0; ordinal < writers.length; ordinal++) {
        if (ordinal != embeddingOrdinal) {
          vectors.get(ordinal).allocateNew();
          writers[ordinal] = ArrowWriter$.MODULE$.createFieldWriter(vectors.get(ordinal));
        }
      }
      Path target = new Path(path);
      stream = target.getFileSystem(configuration).create(target, false);
      file = new ArrowFileWriter(created, null, Channels.newChannel(stream));
      file.start();
      root = created;
    } catch (IOException | RuntimeException failure) {
      closeQuietly(stream, created);
      allocator.close();
      throw failure instanceof IOException io
          ? new EmbedNormException("Cannot write Arrow file '" + path + "': " + io.getMessage(), io)
          : (RuntimeException) failure;
    }
  }

  @Override
  public void write(InternalRow row) {
    for (int ordinal = 0; ordinal < writers.length; ordinal++) {
      if (ordinal == embeddingOrdinal) {
        embedding.write(row, ordinal, rows);
      } else {
        writers[ordinal].write(row, ordinal);
      }
    }
    rows++;
    if (rows == batchRows) {
      writeBatch();
    }
  }

  private void writeBatch() {
    for (ArrowFieldWriter writer : writers) {
      if (writer != null) {
        writer.finish();
      }
    }
    if (embedding != null) {
      embedding.finish(rows);
    }
    root.setRowCount(rows);
    try {
      file.writeBatch();
    } catch (IOException failure) {
      throw new UncheckedIOException("Cannot write Arrow file '" + path + "'", failure);
    }
    for (ArrowFieldWriter writer : writers) {
      if (writer != null) {
        writer.reset();
      }
    }
    rows = 0;
  }

  /** Writes the last batch and the footer; frees the memory and closes the file either way. */
  @Override
  public void close() {
    try {
      if (rows > 0) {
        writeBatch();
      }
      file.end();
    } catch (IOException failure) {
      throw new UncheckedIOException("Cannot write Arrow file '" + path + "'", failure);
    } finally {
      try {
        file.close();
      } finally {
        root.close();
        allocator.close();
      }
    }
  }

  @Override
  public String path() {
    return path;
  }

  private static void closeQuietly(FSDataOutputStream stream, VectorSchemaRoot root) {
    try {
      if (stream != null) {
        stream.close();
      }
    } catch (IOException ignored) {
      // The constructor's failure is the one to report.
    }
    if (root != null) {
      root.close();
    }
  }
}

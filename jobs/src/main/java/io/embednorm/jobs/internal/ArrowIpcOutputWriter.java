package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.execution.arrow.ArrowFieldWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter$;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.util.CollectionAccumulator;

/**
 * One task's Arrow IPC file: rows gathered into record batches of about {@link #BATCH_BYTES} of
 * embeddings, each written as the batch fills. The embedding column's width is the option's, or
 * else that of the task's first non-null embedding: rows before it are null entries, and a task
 * with no non-null embedding in its first {@link #BATCH_ROWS} rows writes the column as Spark types
 * it, {@code List<element>}. A task without rows writes no file.
 *
 * <p>The file is created with its first record batch and complete (footer included) only after
 * {@link #close()}; Spark writes it under the attempt's temporary folder and moves it into the
 * output when the task commits, so a failed task leaves nothing in the output. Owns its Arrow
 * memory (a child of Spark's Arrow allocator) and the open file; Spark closes it.
 */
final class ArrowIpcOutputWriter extends OutputWriter {
  /** Embedding bytes per record batch: large enough for readers, small next to a task's memory. */
  static final long BATCH_BYTES = 8L << 20;

  /** Rows per record batch without a fixed-size list column, and the most with one. */
  static final int BATCH_ROWS = 65536;

  private static final InternalRow NULL_ROW = new GenericInternalRow(new Object[] {null});

  private final String path;
  private final Configuration configuration;
  private final BufferAllocator allocator;
  private final StructType schema;
  private final String timeZone;
  private final int embeddingOrdinal;
  private final CollectionAccumulator<ArrowOutput.FileWidth> widths;
  private final Field[] fields;
  private final FieldVector[] vectors;
  private final ArrowFieldWriter[] writers;
  private FixedSizeListColumn embedding;
  private int batchRows = BATCH_ROWS;
  private VectorSchemaRoot root;
  private ArrowFileWriter file;
  private int rows;
  private long taskRows;

  /**
   * A writer of {@code schema}'s rows to {@code path}, {@code column} (may be null: none) as a
   * fixed-size list of {@code width} elements, or of the task's first non-null row's when {@code
   * width} is 0; the width it fixes is added to {@code widths} (may be null).
   */
  ArrowIpcOutputWriter(
      String path,
      StructType schema,
      String column,
      int width,
      String timeZone,
      Configuration configuration,
      CollectionAccumulator<ArrowOutput.FileWidth> widths) {
    this.path = path;
    this.widths = widths;
    this.schema = schema;
    this.timeZone = timeZone;
    this.configuration = configuration;
    this.embeddingOrdinal =
        column == null ? -1 : Arrays.asList(schema.fieldNames()).indexOf(column);
    StructField[] columns = schema.fields();
    this.fields = new Field[columns.length];
    this.vectors = new FieldVector[columns.length];
    this.writers = new ArrowFieldWriter[columns.length];
    this.allocator =
        ArrowUtils.rootAllocator().newChildAllocator("embednorm arrow output", 0, Long.MAX_VALUE);
    try {
      if (embeddingOrdinal >= 0) {
        ArrowIpcLayout.elementBytes(columns[embeddingOrdinal]);
      }
      for (int ordinal = 0; ordinal < columns.length; ordinal++) {
        if (ordinal != embeddingOrdinal) {
          writers[ordinal] = sparkWriter(ordinal);
        }
      }
      if (embeddingOrdinal >= 0 && width > 0) {
        fixWidth(width, "the width option");
      }
    } catch (RuntimeException failure) {
      closeVectors();
      throw failure;
    }
  }

  @Override
  public void write(InternalRow row) {
    for (int ordinal = 0; ordinal < writers.length; ordinal++) {
      if (writers[ordinal] != null) {
        writers[ordinal].write(row, ordinal);
      } else if (embedding != null) {
        embedding.write(row, ordinal, rows, taskRows);
      } else if (!row.isNullAt(ordinal)) {
        int width = row.getArray(ordinal).numElements();
        fixWidth(width, "the width of row " + taskRows + ", the task's first non-null row");
        embedding.write(row, ordinal, rows, taskRows);
      }
      // Else a null before the width is known: the entry is null in the vector made for it.
    }
    rows++;
    taskRows++;
    if (rows >= batchRows) {
      writeBatch();
    }
  }

  /**
   * Makes the embedding column a fixed-size list of {@code width}, with room for the rows already
   * taken (null entries) and the record batch's rows.
   */
  private void fixWidth(int width, String source) {
    StructField field = schema.fields()[embeddingOrdinal];
    int elementBytes = ArrowIpcLayout.elementBytes(field);
    long rowBytes = Math.max(1L, (long) width * elementBytes);
    batchRows = (int) Math.max(1, Math.min(BATCH_ROWS, BATCH_BYTES / rowBytes));
    fields[embeddingOrdinal] = ArrowIpcLayout.fixedSizeList(field, width);
    FixedSizeListVector vector =
        (FixedSizeListVector) fields[embeddingOrdinal].createVector(allocator);
    vectors[embeddingOrdinal] = vector;
    embedding =
        new FixedSizeListColumn(vector, Math.max(batchRows, rows + 1), elementBytes, source);
    if (widths != null) {
      widths.add(new ArrowOutput.FileWidth(width, path));
    }
  }

  /** The embedding column as Spark types it, with the null entries of the rows already taken. */
  private void fixList() {
    writers[embeddingOrdinal] = sparkWriter(embeddingOrdinal);
    for (int row = 0; row < rows; row++) {
      writers[embeddingOrdinal].write(NULL_ROW, 0);
    }
  }

  private ArrowFieldWriter sparkWriter(int ordinal) {
    fields[ordinal] = ArrowIpcLayout.asSpark(schema.fields()[ordinal], timeZone);
    FieldVector vector = fields[ordinal].createVector(allocator);
    vectors[ordinal] = vector;
    vector.allocateNew();
    return ArrowWriter$.MODULE$.createFieldWriter(vector);
  }

  private void writeBatch() {
    if (embeddingOrdinal >= 0 && embedding == null && writers[embeddingOrdinal] == null) {
      fixList();
    }
    if (file == null) {
      root = new VectorSchemaRoot(List.of(fields), List.of(vectors));
      file = ArrowIpcFiles.open(path, root, configuration);
    }
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

  /**
   * Writes the last batch and the footer (nothing when the task had no rows); frees the memory and
   * closes the file either way.
   */
  @Override
  public void close() {
    try {
      if (rows > 0) {
        writeBatch();
      }
      if (file != null) {
        file.end();
      }
    } catch (IOException failure) {
      throw new EmbedNormException(
          "Cannot write Arrow file '" + path + "': " + failure.getMessage(), failure);
    } finally {
      try {
        if (file != null) {
          file.close();
        }
      } finally {
        closeVectors();
      }
    }
  }

  private void closeVectors() {
    List<AutoCloseable> owned = new ArrayList<>(Arrays.asList(vectors));
    owned.add(allocator);
    try {
      AutoCloseables.close(owned);
    } catch (Exception failure) {
      throw new EmbedNormException(
          "Cannot free the Arrow memory of file '" + path + "': " + failure.getMessage(), failure);
    }
  }

  @Override
  public String path() {
    return path;
  }
}

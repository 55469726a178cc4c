package io.embednorm.spark.internal;

import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.RowToColumnConverter;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Turns rows into batches of at most {@code spark.embednorm.batchRows} rows, for the columnar
 * operator over a child that produces rows. Reuses one set of on-heap column vectors: a batch is
 * valid until the next call to {@link #next()}. Closing frees the vectors.
 */
public final class RowBatcher implements Iterator<ColumnarBatch>, AutoCloseable {
  private final Iterator<InternalRow> rows;
  private final int batchRows;
  private final OnHeapColumnVector[] vectors;
  private final RowToColumnConverter converter;
  private final ColumnarBatch batch;

  /** Batches {@code rows} of {@code schema}; the caller closes it. */
  public RowBatcher(Iterator<InternalRow> rows, StructType schema, int batchRows) {
    this.rows = rows;
    this.batchRows = batchRows;
    this.vectors = OnHeapColumnVector.allocateColumns(batchRows, schema);
    this.converter = new RowToColumnConverter(schema);
    this.batch = new ColumnarBatch(vectors);
  }

  @Override
  public boolean hasNext() {
    return rows.hasNext();
  }

  @Override
  public ColumnarBatch next() {
    if (!rows.hasNext()) {
      throw new NoSuchElementException("no more rows to batch");
    }
    for (WritableColumnVector vector : vectors) {
      vector.reset();
    }
    int count = 0;
    while (count < batchRows && rows.hasNext()) {
      converter.convert(rows.next(), vectors);
      count++;
    }
    batch.setNumRows(count);
    return batch;
  }

  @Override
  public void close() {
    batch.close();
  }
}

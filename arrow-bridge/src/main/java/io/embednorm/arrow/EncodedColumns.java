package io.embednorm.arrow;

import io.embednorm.arrow.internal.HostOutputs;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Runs an op with an {@link Encoding} over a float32 list column into the encoded Arrow column
 * (layout in {@link ArrowNormalizer#normalizeEncoded}): each run of non-null rows goes through
 * {@link NormalizationEngine#normalizeEncoded} straight into the Arrow buffers.
 */
final class EncodedColumns {
  static final String VALUES = "values";
  static final String SCALE = "scale";

  private EncodedColumns() {}

  static FieldVector encode(
      NormalizationEngine engine,
      ListColumn column,
      Normalization normalization,
      Encoding encoding,
      BufferAllocator allocator,
      long firstRowIndex) {
    if (column.type() != ElementType.FLOAT32) {
      throw new EmbedNormException(
          "Cannot encode column '"
              + column.name()
              + "' as "
              + encoding.optionName()
              + ": encodings take float32 rows, got "
              + column.type().name().toLowerCase(java.util.Locale.ROOT));
    }
    int rows = column.rows();
    long[] starts = new long[rows + 1];
    // A FixedSizeBinary value of a null row keeps its place (zeros); a Binary one takes no bytes.
    boolean fixed = column.fixedWidth() > 0;
    for (int row = 0; row < rows; row++) {
      boolean empty = column.isNullRow(row) && !fixed;
      int width = empty ? 0 : (int) (column.boundary(row + 1) - column.boundary(row));
      starts[row + 1] = starts[row] + encoding.rowBytes(width);
    }
    StructVector struct =
        encoding.hasScales() ? StructVector.empty(column.name(), allocator) : null;
    FieldVector values = null;
    Float4Vector scales = null;
    try {
      values = allocateValues(column, encoding, allocator, starts, struct);
      if (struct != null) {
        scales =
            struct.addOrGet(
                SCALE,
                FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
                Float4Vector.class);
        scales.allocateNew(rows);
      }
      ByteBuffer elements =
          column
              .elements()
              .getDataBuffer()
              .nioBuffer(0, (int) column.elements().getDataBuffer().capacity());
      ByteBuffer valueBytes = dataBuffer(values).nioBuffer(0, (int) Math.max(starts[rows], 0));
      int row = 0;
      while (row < rows) {
        if (column.isNullRow(row)) {
          row++;
          continue;
        }
        int end = row + 1;
        while (end < rows && !column.isNullRow(end)) {
          end++;
        }
        encodeRun(
            engine,
            column,
            normalization,
            encoding,
            elements,
            valueBytes,
            starts,
            scales,
            row,
            end,
            firstRowIndex);
        row = end;
      }
      for (row = 0; row < rows; row++) {
        if (!column.isNullRow(row)) {
          BitVectorHelper.setBit(values.getValidityBuffer(), row);
          if (struct != null) {
            BitVectorHelper.setBit(scales.getValidityBuffer(), row);
            struct.setIndexDefined(row);
          }
        }
      }
      if (values instanceof BaseVariableWidthVector variable) {
        variable.setLastSet(rows - 1);
      }
      values.setValueCount(rows);
      if (struct == null) {
        return values;
      }
      scales.setValueCount(rows);
      struct.setValueCount(rows);
      return struct;
    } catch (RuntimeException failure) {
      if (struct != null) {
        struct.close();
      } else if (values != null) {
        values.close();
      }
      throw failure;
    }
  }

  private static void encodeRun(
      NormalizationEngine engine,
      ListColumn column,
      Normalization normalization,
      Encoding encoding,
      ByteBuffer elements,
      ByteBuffer valueBytes,
      long[] starts,
      Float4Vector scales,
      int from,
      int to,
      long firstRowIndex) {
    long start = column.boundary(from);
    long end = column.boundary(to);
    ByteBuffer input = elements.duplicate();
    input.position((int) (4 * start)).limit((int) (4 * end));
    input = input.slice().order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer target = valueBytes.duplicate();
    target.position((int) starts[from]).limit((int) starts[to]);
    target = target.slice();
    RowBatch batch =
        RowBatch.ragged(ElementType.FLOAT32, IntBuffer.wrap(column.offsets(from, to)), input, input)
            .withFirstRowIndex(firstRowIndex + from);
    if (scales == null) {
      engine.normalizeEncoded(normalization, batch, EncodedRows.of(encoding, target));
      return;
    }
    ByteBuffer scaleBytes =
        scales.getDataBuffer().nioBuffer(4L * from, 4 * (to - from)).order(ByteOrder.LITTLE_ENDIAN);
    engine.normalizeEncoded(
        normalization, batch, EncodedRows.withScales(encoding, target, scaleBytes));
  }

  /**
   * FixedSizeBinary for a fixed-size list column, Binary otherwise; the bytes unwritten (validity
   * all null, offsets set). The value bytes come from the pool of {@link HostOutputs} (from 1 MiB),
   * whose pages earlier calls touched: fresh pages from the allocator cost more than encoding.
   */
  private static FieldVector allocateValues(
      ListColumn column,
      Encoding encoding,
      BufferAllocator allocator,
      long[] starts,
      StructVector parent) {
    int rows = column.rows();
    if (starts[rows] > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot encode column '"
              + column.name()
              + "': "
              + starts[rows]
              + " encoded bytes exceed one Arrow buffer of 2 GiB; pass fewer rows a call");
    }
    int width = column.fixedWidth();
    if (width > 0) {
      int bytes = (int) encoding.rowBytes(width);
      FixedSizeBinaryVector vector =
          parent == null
              ? new FixedSizeBinaryVector(column.name(), allocator, bytes)
              : parent.addOrGet(
                  VALUES,
                  FieldType.nullable(new ArrowType.FixedSizeBinary(bytes)),
                  FixedSizeBinaryVector.class);
      ListColumn.loadUnzeroed(vector, allocator, HostOutputs::buffer, rows, (long) bytes * rows);
      ArrowBuf validity = vector.getValidityBuffer();
      validity.setZero(0, validity.capacity());
      // Every row that is not null is written whole; a null row keeps its place as zeros.
      for (int row = 0; row < rows; row++) {
        if (column.isNullRow(row)) {
          vector.getDataBuffer().setZero((long) bytes * row, bytes);
        }
      }
      return vector;
    }
    VarBinaryVector vector =
        parent == null
            ? new VarBinaryVector(column.name(), allocator)
            : parent.addOrGet(
                VALUES, FieldType.nullable(ArrowType.Binary.INSTANCE), VarBinaryVector.class);
    ListColumn.loadUnzeroed(
        vector, allocator, HostOutputs::buffer, rows, 4L * (rows + 1), Math.max(starts[rows], 1));
    for (int row = 0; row <= rows; row++) {
      vector.getOffsetBuffer().setInt(4L * row, (int) starts[row]);
    }
    return vector;
  }

  private static ArrowBuf dataBuffer(FieldVector values) {
    return values.getDataBuffer();
  }
}

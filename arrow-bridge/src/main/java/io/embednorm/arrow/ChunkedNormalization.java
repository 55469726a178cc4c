package io.embednorm.arrow;

import io.embednorm.kernels.EmbedNormException;
import io.embednorm.kernels.Normalization;
import io.embednorm.kernels.NormalizationEngine;
import io.embednorm.kernels.RowBatch;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.util.Arrays;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;

/**
 * Normalizes one list column into a new vector: hands the engine views of the input's and the
 * output's element buffers (no copies), in runs of rows whose bytes stay within a limit, then sets
 * the output's validity.
 *
 * <p>A row is valid when it is not null and none of its elements is null; invalid rows come out
 * null, with zeroed elements. Invalid rows are normalized along with their neighbours (their
 * results are discarded), except those whose width does not fit the weight or bias: those are left
 * out of the runs, so that a null row never raises a width error.
 */
final class ChunkedNormalization {
  private final NormalizationEngine engine;
  private final Normalization normalization;
  private final long chunkByteLimit;

  ChunkedNormalization(
      NormalizationEngine engine, Normalization normalization, long chunkByteLimit) {
    this.engine = engine;
    this.normalization = normalization;
    this.chunkByteLimit = chunkByteLimit;
  }

  /**
   * Returns the normalized column, allocated from {@code allocator}; the caller closes it.
   *
   * @param firstRowIndex the index of the column's first row in messages
   */
  FieldVector normalize(ListColumn input, BufferAllocator allocator, long firstRowIndex) {
    int rows = input.rows();
    long base = input.boundary(0);
    long end = input.boundary(rows);
    checkSize(input, base, end);
    boolean[] valid = validRows(input);
    FieldVector output = input.allocateOutput(allocator, (int) (end - base));
    try {
      new Runs(input, valid, output, firstRowIndex).submitAll();
      setValidity(input, valid, output);
      return output;
    } catch (RuntimeException | Error failure) {
      output.close();
      throw failure;
    }
  }

  private static void checkSize(ListColumn input, long base, long end) {
    if (end - base > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot normalize column '"
              + input.name()
              + "': its rows hold "
              + (end - base)
              + " elements, more than one Arrow vector can hold ("
              + Integer.MAX_VALUE
              + ")");
    }
    if (input.elements().getValueCount() < end) {
      throw new EmbedNormException(
          "Cannot normalize column '"
              + input.name()
              + "': its rows end at element "
              + end
              + " but its element vector holds "
              + input.elements().getValueCount());
    }
  }

  private static boolean[] validRows(ListColumn input) {
    boolean[] valid = new boolean[input.rows()];
    BaseFixedWidthVector elements = input.elements();
    boolean elementNulls = elements.getNullCount() > 0;
    if (!elementNulls && input.nullRows() == 0) {
      Arrays.fill(valid, true);
      return valid;
    }
    ArrowBuf elementValidity = elements.getValidityBuffer();
    for (int row = 0; row < valid.length; row++) {
      valid[row] =
          !input.isNullRow(row)
              && (!elementNulls
                  || BitRanges.allSet(
                      elementValidity, input.boundary(row), input.boundary(row + 1)));
    }
    return valid;
  }

  /** Marks valid rows and their elements valid; zeroes the elements of invalid rows. */
  private static void setValidity(ListColumn input, boolean[] valid, FieldVector output) {
    ArrowBuf rowValidity = output.getValidityBuffer();
    BaseFixedWidthVector elements = ListColumn.elementsOf(output);
    ArrowBuf elementValidity = elements.getValidityBuffer();
    ArrowBuf data = elements.getDataBuffer();
    int byteWidth = input.type().byteWidth();
    long base = input.boundary(0);
    long validFrom = 0;
    for (int row = 0; row < valid.length; row++) {
      long start = input.boundary(row) - base;
      long end = input.boundary(row + 1) - base;
      if (valid[row]) {
        BitVectorHelper.setBit(rowValidity, row);
      } else {
        BitRanges.set(elementValidity, validFrom, start);
        validFrom = end;
        if (end > start) {
          data.setZero(start * byteWidth, (end - start) * byteWidth);
        }
      }
    }
    BitRanges.set(elementValidity, validFrom, input.boundary(valid.length) - base);
  }

  /** Splits the rows into runs and hands each to the engine. */
  private final class Runs {
    private final ListColumn input;
    private final boolean[] valid;
    private final long firstRowIndex;
    private final long base;
    private final int byteWidth;
    private final ArrowBuf inputData;
    private final ArrowBuf outputData;

    Runs(ListColumn input, boolean[] valid, FieldVector output, long firstRowIndex) {
      this.input = input;
      this.valid = valid;
      this.firstRowIndex = firstRowIndex;
      this.base = input.boundary(0);
      this.byteWidth = input.type().byteWidth();
      this.inputData = input.elements().getDataBuffer();
      this.outputData = ListColumn.elementsOf(output).getDataBuffer();
    }

    void submitAll() {
      int runStart = 0;
      for (int row = 0; row < valid.length; row++) {
        if (!valid[row] && !fits(width(row))) {
          submit(runStart, row);
          runStart = row + 1;
        } else if (row > runStart && bytes(runStart, row + 1) > chunkByteLimit) {
          submit(runStart, row);
          runStart = row;
        }
      }
      submit(runStart, valid.length);
    }

    private void submit(int from, int to) {
      long bytes = bytes(from, to);
      if (bytes == 0) {
        return;
      }
      if (bytes > Integer.MAX_VALUE) {
        throw new EmbedNormException(
            "Cannot normalize row "
                + (firstRowIndex + from)
                + " of column '"
                + input.name()
                + "': it holds "
                + bytes
                + " bytes, more than one buffer view can hold ("
                + Integer.MAX_VALUE
                + ")");
      }
      long start = input.boundary(from);
      ByteBuffer in = inputData.nioBuffer(start * byteWidth, (int) bytes);
      ByteBuffer out = outputData.nioBuffer((start - base) * byteWidth, (int) bytes);
      int width = input.fixedWidth();
      RowBatch batch =
          width >= 0
              ? RowBatch.fixedWidth(input.type(), to - from, width, in, out)
              : RowBatch.ragged(input.type(), offsets(from, to), in, out);
      engine.normalize(normalization, batch.withFirstRowIndex(firstRowIndex + from));
    }

    private IntBuffer offsets(int from, int to) {
      int[] offsets = new int[to - from + 1];
      long start = input.boundary(from);
      for (int row = from; row <= to; row++) {
        offsets[row - from] = (int) (input.boundary(row) - start);
      }
      return IntBuffer.wrap(offsets);
    }

    private long bytes(int from, int to) {
      return (input.boundary(to) - input.boundary(from)) * byteWidth;
    }

    private int width(int row) {
      return (int) (input.boundary(row + 1) - input.boundary(row));
    }

    private boolean fits(int width) {
      return width == 0
          || ((!normalization.hasWeight() || normalization.weight().length == width)
              && (!normalization.hasBias() || normalization.bias().length == width));
    }
  }
}

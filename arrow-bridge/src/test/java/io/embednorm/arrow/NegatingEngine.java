package io.embednorm.arrow;

import io.embednorm.engine.Device;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * A test engine that writes −x for every element (flips the sign bit, for every element type),
 * checks widths as real engines do, and records each batch it gets: the bridge's plumbing can be
 * tested without the kernels.
 */
final class NegatingEngine implements NormalizationEngine {
  /** One call to {@link #normalize}. */
  record Call(
      long firstRowIndex,
      int rows,
      boolean ragged,
      long elements,
      int inputBytes,
      long inputAddress,
      long outputAddress) {}

  final List<Call> calls = Collections.synchronizedList(new ArrayList<>());
  volatile boolean closed;

  @Override
  public Device device() {
    return Device.CPU;
  }

  @Override
  public int threads() {
    return 1;
  }

  @Override
  public String description() {
    return "negating test engine";
  }

  @Override
  public void normalize(Normalization normalization, RowBatch batch) {
    for (int row = 0; row < batch.rows(); row++) {
      normalization.checkWidth(batch.firstRowIndex() + row, batch.rowWidth(row));
    }
    ByteBuffer input = batch.input();
    ByteBuffer output = batch.output();
    calls.add(
        new Call(
            batch.firstRowIndex(),
            batch.rows(),
            batch.isRagged(),
            batch.elementCount(),
            input.capacity(),
            MemoryUtil.getByteBufferAddress(input),
            MemoryUtil.getByteBufferAddress(output)));
    int byteWidth = batch.type().byteWidth();
    for (int row = 0; row < batch.rows(); row++) {
      long start = batch.rowStart(row) * byteWidth;
      long end = start + (long) batch.rowWidth(row) * byteWidth;
      for (long index = start; index < end; index++) {
        byte value = input.get((int) index);
        boolean signByte = (index + 1) % byteWidth == 0;
        output.put((int) index, signByte ? (byte) (value ^ 0x80) : value);
      }
    }
  }

  @Override
  public void close() {
    closed = true;
  }
}

package io.embednorm.arrow;

import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.HostPin;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.TransferTimes;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.FieldVector;

/**
 * Sends runs of a column's rows through a {@link PipelineSession}: straight from the input's
 * element buffer to the device and back into the output's, by address. Both buffers are pinned for
 * the call first (nothing to do for pinned Arrow memory; registration otherwise; pageable copies
 * where neither works). A run that does not fit the device is split in halves and retried, down to
 * {@link #SPLIT_FLOOR_BYTES} or one row; a run that still does not fit throws, and the whole call
 * runs again on the CPU engine ({@link ChunkedNormalization}).
 *
 * <p>Closing waits for every chunk in flight, then unpins: the device never writes into memory that
 * is no longer pinned or no longer the caller's.
 */
final class GpuPipeline implements ChunkedNormalization.RunSink {
  /**
   * Runs at or below this size are not split further when the GPU has no memory for them: a device
   * that cannot hold 64 KiB of rows is full, and the call goes to the CPU.
   */
  static final long SPLIT_FLOOR_BYTES = 64L << 10;

  private final NormalizationEngine engine;
  private final List<Normalization> steps;
  private final ListColumn input;
  private final long firstRowIndex;
  private final NormalizationMetrics metrics;
  private final long base;
  private final int byteWidth;
  private final ArrowBuf inputData;
  private final ArrowBuf outputData;
  private ColumnShape shape;
  private PipelineSession session;
  private HostPin inputPin;
  private HostPin outputPin;

  GpuPipeline(
      NormalizationEngine engine,
      List<Normalization> steps,
      ListColumn input,
      FieldVector output,
      long firstRowIndex,
      NormalizationMetrics metrics) {
    this.engine = engine;
    this.steps = steps;
    this.input = input;
    this.firstRowIndex = firstRowIndex;
    this.metrics = metrics;
    this.base = input.boundary(0);
    this.byteWidth = input.type().byteWidth();
    this.inputData = input.elements().getDataBuffer();
    this.outputData = ListColumn.elementsOf(output).getDataBuffer();
  }

  @Override
  public void run(int from, int to) {
    open();
    try {
      enqueue(from, to);
    } catch (GpuOutOfMemoryException full) {
      if (to - from == 1 || bytes(from, to) <= SPLIT_FLOOR_BYTES) {
        throw full;
      }
      metrics.addOutOfMemorySplit();
      int middle = from + (to - from) / 2;
      run(from, middle);
      run(middle, to);
    }
  }

  @Override
  public void finish() {
    if (session == null) {
      return;
    }
    TransferTimes times = session.finish();
    metrics.addChunks(times.chunks());
    metrics.addGpuTimes(times.uploadNanos(), times.kernelNanos(), times.downloadNanos());
  }

  @Override
  public void close() {
    try {
      if (session != null) {
        session.close();
      }
    } finally {
      unpin(inputPin);
      unpin(outputPin);
    }
  }

  /** Opens the session and pins both buffers on the first run. */
  private void open() {
    if (session != null) {
      return;
    }
    long end = input.boundary(input.rows());
    long bytes = (end - base) * byteWidth;
    inputPin = pin(inputData.memoryAddress() + base * byteWidth, bytes);
    outputPin = pin(outputData.memoryAddress(), bytes);
    session = engine.openSession(steps, input.type());
  }

  /** The widest row and the alignment of all rows: one plan for every chunk of the column. */
  private ColumnShape shape() {
    if (shape == null) {
      int widest = 0;
      boolean aligned = true;
      long address = inputData.memoryAddress();
      for (int row = 0; row < input.rows(); row++) {
        int width = (int) (input.boundary(row + 1) - input.boundary(row));
        widest = Math.max(widest, width);
        aligned &=
            ColumnShape.fitsVectors(input.type(), address + input.boundary(row) * byteWidth, width);
      }
      shape = new ColumnShape(widest, aligned);
    }
    return shape;
  }

  /**
   * Pins a range, or returns null where this process has no pinned memory (an engine that copies to
   * a device of its own without CUDA, as tests' engines do): the copies are then staged.
   */
  private HostPin pin(long address, long bytes) {
    if (Engines.gpuUnavailableReason() != null) {
      return null;
    }
    HostPin pin = Engines.hostMemory().pin(address, bytes);
    if (pin.kind() == HostPin.Kind.REGISTERED) {
      metrics.addRegistered(bytes, pin.registrationNanos());
    }
    return pin;
  }

  private void enqueue(int from, int to) {
    long start = input.boundary(from);
    long bytes = (input.boundary(to) - start) * byteWidth;
    long inputAddress = inputData.memoryAddress() + start * byteWidth;
    long outputAddress = outputData.memoryAddress() + (start - base) * byteWidth;
    int width = input.fixedWidth();
    if (width >= 0) {
      session.enqueue(inputAddress, outputAddress, to - from, width, firstRowIndex + from);
    } else {
      long offsetBytes =
          session.enqueueRagged(
              inputAddress, outputAddress, input.offsets(from, to), firstRowIndex + from, shape());
      metrics.addStaged(offsetBytes);
      metrics.addTransfer(offsetBytes, 0);
    }
    metrics.addTransfer(bytes, bytes);
    count(inputPin, bytes);
    count(outputPin, bytes);
  }

  private void count(HostPin pin, long bytes) {
    if (pin != null && pin.isPinned()) {
      metrics.addPinned(bytes);
    } else {
      metrics.addStaged(bytes);
    }
  }

  private long bytes(int from, int to) {
    return (input.boundary(to) - input.boundary(from)) * byteWidth;
  }

  private static void unpin(HostPin pin) {
    if (pin != null) {
      pin.close();
    }
  }
}

package io.embednorm.arrow;

import io.embednorm.arrow.internal.StagedChunks;
import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.TransferTimes;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.FieldVector;

/**
 * Sends runs of a column's rows through a {@link PipelineSession} on one GPU: memory that is pinned
 * (or registered for the call) straight from the input's element buffer to the device and back into
 * the output's, by address; other memory through the GPU's pinned staging slots ({@link
 * StagedChunks}), filled and drained by host threads while other chunks are on the device. {@link
 * PinnedColumn} says which, once per call. A run that does not fit the device is split in halves
 * and retried, down to {@link #SPLIT_FLOOR_BYTES} or one row; a run that still does not fit throws,
 * and the whole call runs again on the CPU engine ({@link ChunkedNormalization}).
 *
 * <p>The session opens when the pipeline is made (waiting for one of the engine's sessions) and
 * closes with it. Closing waits for every chunk in flight, then gives the staging slots back: the
 * device never writes into memory that is no longer pinned or no longer the caller's.
 */
final class GpuPipeline implements ChunkedNormalization.RunSink {
  /**
   * Runs at or below this size are not split further when the GPU has no memory for them: a device
   * that cannot hold 64 KiB of rows is full, and the call goes to the CPU.
   */
  static final long SPLIT_FLOOR_BYTES = 64L << 10;

  private final GpuDevice device;
  private final ListColumn input;
  private final long firstRowIndex;
  private final NormalizationMetrics metrics;
  private final long base;
  private final int byteWidth;
  private final ArrowBuf inputData;
  private final ArrowBuf outputData;
  private final PinnedColumn pins;
  private final PipelineSession session;

  /** The staging of this call's chunks, or null when both sides are pinned (or registered). */
  private final StagedChunks staged;

  /** Opens a session on {@code device}, waiting while the engine's limit of sessions are open. */
  GpuPipeline(
      GpuDevice device,
      List<Normalization> steps,
      ListColumn input,
      FieldVector output,
      PinnedColumn pins,
      long firstRowIndex,
      NormalizationMetrics metrics) {
    this.device = device;
    this.input = input;
    this.firstRowIndex = firstRowIndex;
    this.metrics = metrics;
    this.base = input.boundary(0);
    this.byteWidth = input.type().byteWidth();
    this.inputData = input.elements().getDataBuffer();
    this.outputData = ListColumn.elementsOf(output).getDataBuffer();
    this.pins = pins;
    this.session = device.engine().openSession(steps, input.type());
    this.staged =
        pins.staged() && device.staging() != null
            ? new StagedChunks(session, device.staging(), pins.source(), pins.target())
            : null;
  }

  @Override
  public void run(int from, int to) {
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
    if (staged != null) {
      staged.finish();
    }
    TransferTimes times = session.finish();
    metrics.addChunks(device.ordinal(), times.chunks());
    metrics.addGpuTimes(times.uploadNanos(), times.kernelNanos(), times.downloadNanos());
  }

  @Override
  public void close() {
    try {
      session.close();
    } finally {
      if (staged != null) {
        staged.close();
      }
    }
  }

  private void enqueue(int from, int to) {
    long start = input.boundary(from);
    long bytes = (input.boundary(to) - start) * byteWidth;
    int width = input.fixedWidth();
    int[] offsets = width >= 0 ? null : input.offsets(from, to);
    StagedChunks.Enqueue chunk =
        (inputAddress, outputAddress) ->
            offsets == null
                ? session.enqueue(
                    inputAddress, outputAddress, to - from, width, firstRowIndex + from)
                : session.enqueueRagged(
                    inputAddress, outputAddress, offsets, firstRowIndex + from, pins.shape());
    if (staged != null) {
      staged.run(start * byteWidth, bytes, chunk);
    } else {
      chunk.enqueue(
          inputData.memoryAddress() + start * byteWidth,
          outputData.memoryAddress() + (start - base) * byteWidth);
    }
    if (offsets != null) {
      long offsetBytes = (long) offsets.length * PipelineSession.RAGGED_OFFSET_BYTES;
      metrics.addPageable(offsetBytes);
      metrics.addTransfer(offsetBytes, 0);
    }
    metrics.addTransfer(bytes, bytes);
    pins.countCopies(bytes, metrics);
  }

  private long bytes(int from, int to) {
    return (input.boundary(to) - input.boundary(from)) * byteWidth;
  }
}

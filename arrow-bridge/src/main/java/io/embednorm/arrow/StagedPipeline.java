package io.embednorm.arrow;

import static io.embednorm.arrow.internal.HostAddresses.NOT_PINNED;

import io.embednorm.arrow.internal.StagedChunks;
import io.embednorm.arrow.internal.StagedColumn;
import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.TransferTimes;
import java.util.List;

/**
 * Sends runs of a {@link StagedColumn}'s rows through a {@link PipelineSession} on one GPU, every
 * chunk through the GPU's pinned staging slots ({@link StagedChunks}): filled from the column's
 * source and drained into its target by host threads while other chunks are on the device. As
 * {@link GpuPipeline} does for Arrow vectors, a run that does not fit the device is split in halves
 * down to {@link GpuPipeline#SPLIT_FLOOR_BYTES} or one row, and a run that still does not fit
 * throws (the call then runs on the CPU engine).
 *
 * <p>The session opens when the pipeline is made and closes with it; closing waits for every chunk
 * in flight, then gives the slots back, so no copy touches the caller's memory after it.
 */
final class StagedPipeline implements ChunkedNormalization.RunSink {
  private final GpuDevice device;
  private final StagedColumn column;
  private final ColumnShape shape;
  private final NormalizationMetrics metrics;
  private final int byteWidth;
  private final PipelineSession session;
  private final StagedChunks staged;

  /**
   * Opens a session on {@code device} (whose staging is not null), waiting while the engine's limit
   * of sessions are open; {@code shape} is the column's for ragged rows, null for fixed ones.
   */
  StagedPipeline(
      GpuDevice device,
      List<Normalization> steps,
      StagedColumn column,
      ColumnShape shape,
      NormalizationMetrics metrics) {
    this.device = device;
    this.column = column;
    this.shape = shape;
    this.metrics = metrics;
    this.byteWidth = column.type().byteWidth();
    this.session = device.engine().openSession(steps, column.type());
    this.staged = new StagedChunks(session, device.staging(), column.source(), column.target());
  }

  @Override
  public void run(int from, int to) {
    try {
      enqueue(from, to);
    } catch (GpuOutOfMemoryException full) {
      if (to - from == 1 || bytes(from, to) <= GpuPipeline.SPLIT_FLOOR_BYTES) {
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
    staged.finish();
    TransferTimes times = session.finish();
    metrics.addChunks(device.ordinal(), times.chunks());
    metrics.addGpuTimes(times.uploadNanos(), times.kernelNanos(), times.downloadNanos());
  }

  @Override
  public void close() {
    try {
      session.close();
    } finally {
      staged.close();
    }
  }

  private void enqueue(int from, int to) {
    long position = column.boundary(from) * byteWidth;
    long bytes = bytes(from, to);
    int width = column.fixedWidth();
    int[] offsets = width >= 0 ? null : column.offsets(from, to);
    // Rows are numbered in messages from the column's first row, as for an Arrow column.
    staged.run(
        position,
        bytes,
        (inputAddress, outputAddress) ->
            offsets == null
                ? session.enqueue(inputAddress, outputAddress, to - from, width, from)
                : session.enqueueRagged(inputAddress, outputAddress, offsets, from, shape));
    if (offsets != null) {
      long offsetBytes = (long) offsets.length * PipelineSession.RAGGED_OFFSET_BYTES;
      metrics.addPageable(offsetBytes);
      metrics.addTransfer(offsetBytes, 0);
    }
    metrics.addTransfer(bytes, bytes);
    countSide(column.source().pinnedAddress(position), bytes);
    countSide(column.target().pinnedAddress(position), bytes);
  }

  private void countSide(long pinnedAddress, long bytes) {
    if (pinnedAddress == NOT_PINNED) {
      metrics.addStaged(bytes);
    } else {
      metrics.addPinned(bytes);
    }
  }

  private long bytes(int from, int to) {
    return (column.boundary(to) - column.boundary(from)) * byteWidth;
  }
}

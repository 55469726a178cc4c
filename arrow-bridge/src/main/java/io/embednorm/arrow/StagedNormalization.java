package io.embednorm.arrow;

import io.embednorm.arrow.internal.StagedColumn;
import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Normalizes a {@link StagedColumn} on the normalizer's GPUs, its rows going from the column's
 * source through pinned staging slots to the device and back into its target, with no Arrow vector:
 * runs of rows of at most a GPU chunk (and a slot), spread over the GPUs as {@link DeviceSpread}
 * does for Arrow columns, each GPU through a {@link StagedPipeline}. The column's shape is worked
 * out once, from the rows' positions modulo 16 as the slots keep them, so that a row gets the
 * kernels (hence the bits) it gets read from an Arrow buffer of the same layout.
 *
 * <p>When a GPU fails (as {@link ChunkedNormalization#isGpuFailure} says), every pipeline is
 * drained and closed and the whole column runs again on the CPU engine, in runs copied from the
 * source into a scratch buffer of its own, normalized there in place and copied to the target; the
 * metrics count it.
 */
final class StagedNormalization {
  /**
   * Rows of a CPU fallback go through a scratch buffer of at most this size (a wider row alone).
   */
  private static final long FALLBACK_RUN_BYTES = 64L << 20;

  private final DeviceSpread gpus;
  private final Supplier<NormalizationEngine> cpuFallback;
  private final List<Normalization> steps;
  private final long gpuChunkBytes;

  StagedNormalization(
      DeviceSpread gpus,
      Supplier<NormalizationEngine> cpuFallback,
      List<Normalization> steps,
      long gpuChunkBytes) {
    this.gpus = gpus;
    this.cpuFallback = cpuFallback;
    this.steps = List.copyOf(steps);
    this.gpuChunkBytes = gpuChunkBytes;
  }

  void normalize(StagedColumn column, NormalizationMetrics metrics) {
    long started = System.nanoTime();
    column.checkSize();
    long chunkBytes =
        Math.min(
            ChunkedNormalization.gpuChunkBytes(gpuChunkBytes, column.bytes()),
            gpus.staging().slotBytes());
    List<RowRuns.Run> runs = runs(column, chunkBytes);
    ColumnShape shape = column.fixedWidth() >= 0 ? null : shape(column);
    try {
      gpus.run(runs, device -> new StagedPipeline(device, steps, column, shape, metrics));
    } catch (RuntimeException failure) {
      if (!ChunkedNormalization.isGpuFailure(failure)) {
        throw failure;
      }
      try {
        runOnCpu(column, metrics);
      } catch (RuntimeException | Error onCpu) {
        onCpu.addSuppressed(failure);
        throw onCpu;
      }
      metrics.addCpuFallback(column.rows(), failure);
    }
    metrics.addCall(column.rows(), System.nanoTime() - started);
  }

  /** Runs of rows of at most {@code limit} bytes (a wider row alone); empty runs left out. */
  static List<RowRuns.Run> runs(StagedColumn column, long limit) {
    List<RowRuns.Run> runs = new ArrayList<>();
    int byteWidth = column.type().byteWidth();
    int start = 0;
    for (int row = 0; row < column.rows(); row++) {
      if (row > start && (column.boundary(row + 1) - column.boundary(start)) * byteWidth > limit) {
        add(runs, column, start, row);
        start = row;
      }
    }
    add(runs, column, start, column.rows());
    return runs;
  }

  private static void add(List<RowRuns.Run> runs, StagedColumn column, int from, int to) {
    if (column.boundary(to) > column.boundary(from)) {
      runs.add(new RowRuns.Run(from, to));
    }
  }

  /** The widest row and whether every row fits 16-byte loads where the slots place it. */
  private static ColumnShape shape(StagedColumn column) {
    int byteWidth = column.type().byteWidth();
    int widest = 0;
    boolean aligned = true;
    for (int row = 0; row < column.rows(); row++) {
      int width = (int) (column.boundary(row + 1) - column.boundary(row));
      widest = Math.max(widest, width);
      long position = column.boundary(row) * byteWidth;
      aligned &= ColumnShape.fitsVectors(column.type(), column.source().alignment(position), width);
    }
    return new ColumnShape(widest, aligned);
  }

  /** The whole column on the CPU engine, run by run through a scratch buffer. */
  private void runOnCpu(StagedColumn column, NormalizationMetrics metrics) {
    List<RowRuns.Run> runs = runs(column, FALLBACK_RUN_BYTES);
    int byteWidth = column.type().byteWidth();
    long largest = 0;
    for (RowRuns.Run run : runs) {
      largest = Math.max(largest, (column.boundary(run.to()) - column.boundary(run.from())));
    }
    if (largest == 0) {
      return;
    }
    NormalizationEngine engine = cpuFallback.get();
    long scratch = MemoryUtil.allocateMemory(largest * byteWidth);
    try {
      for (RowRuns.Run run : runs) {
        long started = System.nanoTime();
        long position = column.boundary(run.from()) * byteWidth;
        int bytes = (int) ((column.boundary(run.to()) - column.boundary(run.from())) * byteWidth);
        column.source().copyTo(position, scratch, bytes);
        ByteBuffer rows = MemoryUtil.directBuffer(scratch, bytes);
        for (Normalization step : steps) {
          int width = column.fixedWidth();
          RowBatch batch =
              width >= 0
                  ? RowBatch.fixedWidth(column.type(), run.to() - run.from(), width, rows, rows)
                  : RowBatch.ragged(
                      column.type(),
                      IntBuffer.wrap(column.offsets(run.from(), run.to())),
                      rows,
                      rows);
          engine.normalize(step, batch.withFirstRowIndex(run.from()));
        }
        column.target().copyFrom(scratch, position, bytes);
        metrics.addCpu(System.nanoTime() - started);
      }
    } finally {
      MemoryUtil.freeMemory(scratch);
    }
  }
}

package io.embednorm.arrow.internal;

import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.PipelineSession;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongConsumer;

/**
 * The mapped path of {@code ArrowFiles.normalizeFile} on a GPU: as on the CPU ({@link
 * MappedFileNormalization}) every byte but the column's values is copied in the kernel and the
 * validity of null rows marked, then the values go from the input file straight into pinned staging
 * slots (positional reads on the copy threads, {@link FileStaging}), through the GPU, and from the
 * slots to the output file at their positions (one writer thread, which writes a chunk while the
 * next ones are read), overlapped ({@link StagedChunks}); no Arrow vector holds them. The rows get
 * the kernels, hence the bits, of the record-batch path on the GPU (a slot keeps each row's offset
 * modulo 16 in the reader's buffer; ragged batches take the shape of the batch). Invalid rows are
 * zeroed once every chunk is written.
 *
 * <p>When the GPU fails (a fault, or no memory for a chunk at the split floor), the values of every
 * batch are written again on the CPU engine, so the output is then the CPU mapped path's. On any
 * other failure the temporary file is deleted and an existing output stays untouched.
 */
public final class MappedGpuNormalization {
  /** Chunks at or below this size are not split further when the GPU has no memory for them. */
  static final long SPLIT_FLOOR_BYTES = 64L << 10;

  private static final int ZEROS_BYTES = 1 << 16;

  private MappedGpuNormalization() {}

  /**
   * Writes {@code output}: the input of {@code plan} with its column normalized by {@code
   * normalization} on {@code gpu}, staged through {@code staging}. The plan, the engine and the
   * pool stay the caller's.
   *
   * @param cpuThreads threads of the CPU engine should the GPU fail
   * @param progress called after each batch is enqueued, with the rows enqueued so far
   * @return why the GPU failed, the values having been written on the CPU engine, or null
   * @throws IOException when the output cannot be written (nothing is left behind)
   */
  public static String run(
      MappedColumnPlan plan,
      Path output,
      Normalization normalization,
      NormalizationEngine gpu,
      StagingPool staging,
      int cpuThreads,
      LongConsumer progress)
      throws IOException {
    FileChannel input = plan.input();
    ElementType type = plan.layout().type();
    try (TemporaryOutput target = TemporaryOutput.create(output)) {
      MappedFileNormalization.copyAllButValues(plan, target.channel());
      for (BatchRows rows : plan.batches()) {
        if (rows.hasInvalidRows()) {
          MappedFileNormalization.markInvalidRows(input, rows, target.channel());
        }
      }
      String fallback = null;
      try {
        new Chunks(plan, target.channel(), normalization, gpu, staging).runAll(progress);
        zeroInvalidRows(plan, target.channel());
      } catch (UncheckedIOException failure) {
        throw failure.getCause();
      } catch (RuntimeException failure) {
        if (!isGpuFailure(failure)) {
          throw failure;
        }
        fallback = failure.getClass().getSimpleName() + ": " + failure.getMessage();
        try (ValueWriters writers =
            new ValueWriters(
                cpuThreads, target.channel(), normalization, type, plan.largestRowBytes())) {
          for (BatchRows rows : plan.batches()) {
            writers.write(rows, input);
          }
        }
      }
      target.commit();
      return fallback;
    }
  }

  /** A fault, memory that splitting did not free, or a driver error embednorm did not translate. */
  private static boolean isGpuFailure(RuntimeException failure) {
    return failure instanceof GpuFaultException
        || failure instanceof GpuOutOfMemoryException
        || !(failure instanceof EmbedNormException);
  }

  /** Writes zeros over the values of invalid rows, as the record-batch path leaves them. */
  private static void zeroInvalidRows(MappedColumnPlan plan, FileChannel output)
      throws IOException {
    ByteBuffer zeros = ByteBuffer.allocateDirect(ZEROS_BYTES);
    int byteWidth = plan.layout().type().byteWidth();
    for (BatchRows rows : plan.batches()) {
      for (int row = 0; rows.hasInvalidRows() && row < rows.rows(); row++) {
        if (!rows.isValid(row)) {
          long position = rows.batch().values().position() + rows.start(row) * byteWidth;
          long end = rows.batch().values().position() + rows.start(row + 1) * byteWidth;
          while (position < end) {
            zeros.clear().limit((int) Math.min(ZEROS_BYTES, end - position));
            position += output.write(zeros, position);
          }
        }
      }
    }
  }

  /** One file's chunks through one session and its staging. */
  private static final class Chunks {
    private final MappedColumnPlan plan;
    private final NormalizationEngine gpu;
    private final Normalization normalization;
    private final StagingPool staging;
    private final FileChannel output;
    private final int byteWidth;

    /** Each batch's values start, to the start of its block (see {@link ColumnBatch}). */
    private final TreeMap<Long, Long> blocks = new TreeMap<>();

    Chunks(
        MappedColumnPlan plan,
        FileChannel output,
        Normalization normalization,
        NormalizationEngine gpu,
        StagingPool staging) {
      this.plan = plan;
      this.gpu = gpu;
      this.normalization = normalization;
      this.staging = staging;
      this.output = output;
      this.byteWidth = plan.layout().type().byteWidth();
      for (BatchRows rows : plan.batches()) {
        blocks.put(rows.batch().values().position(), rows.batch().blockStart());
      }
    }

    void runAll(LongConsumer progress) {
      PipelineSession session = gpu.openSession(List.of(normalization), plan.layout().type());
      StagedChunks staged = null;
      try {
        staged =
            new StagedChunks(
                session,
                staging,
                FileStaging.source(plan.input(), this::blockStart),
                FileStaging.target(output));
        long rowsDone = 0;
        for (BatchRows rows : plan.batches()) {
          ColumnShape shape = rows.offsets() == null ? null : shape(rows);
          int[] boundaries = rows.runs(0, rows.rows(), staging.slotBytes(), byteWidth);
          for (int run = 1; run < boundaries.length; run++) {
            run(session, staged, rows, shape, boundaries[run - 1], boundaries[run]);
          }
          rowsDone += rows.rows();
          progress.accept(rowsDone);
        }
        staged.finish();
        session.finish();
      } finally {
        try {
          session.close();
        } finally {
          if (staged != null) {
            staged.close();
          }
        }
      }
    }

    private long blockStart(long position) {
      Map.Entry<Long, Long> batch = blocks.floorEntry(position);
      return batch == null ? 0 : batch.getValue();
    }

    /** Rows {@code [from, to)} of a batch as one chunk, halved while the GPU has no memory. */
    private void run(
        PipelineSession session,
        StagedChunks staged,
        BatchRows rows,
        ColumnShape shape,
        int from,
        int to) {
      long first = rows.start(from);
      long bytes = (rows.start(to) - first) * byteWidth;
      long position = rows.batch().values().position() + first * byteWidth;
      long firstRow = rows.batch().firstRow() + from;
      try {
        staged.run(
            position,
            bytes,
            (inputAddress, outputAddress) ->
                shape == null
                    ? session.enqueue(
                        inputAddress, outputAddress, to - from, rows.width(), firstRow)
                    : session.enqueueRagged(
                        inputAddress, outputAddress, offsets(rows, from, to), firstRow, shape));
      } catch (GpuOutOfMemoryException full) {
        if (to - from == 1 || bytes <= SPLIT_FLOOR_BYTES) {
          throw full;
        }
        int middle = from + (to - from) / 2;
        run(session, staged, rows, shape, from, middle);
        run(session, staged, rows, shape, middle, to);
      }
    }

    /**
     * The batch's widest row and whether every row allows 16-byte access where the record-batch
     * path's reader puts it: the plan of every chunk of the batch, as there.
     */
    private ColumnShape shape(BatchRows rows) {
      ElementType type = plan.layout().type();
      long origin = rows.batch().values().position() - rows.batch().blockStart();
      int widest = 0;
      boolean aligned = true;
      for (int row = 0; row < rows.rows(); row++) {
        int width = (int) (rows.start(row + 1) - rows.start(row));
        widest = Math.max(widest, width);
        aligned &= ColumnShape.fitsVectors(type, origin + rows.start(row) * byteWidth, width);
      }
      return new ColumnShape(widest, aligned);
    }

    private static int[] offsets(BatchRows rows, int from, int to) {
      int[] offsets = new int[to - from + 1];
      long first = rows.start(from);
      for (int row = from; row <= to; row++) {
        offsets[row - from] = (int) (rows.start(row) - first);
      }
      return offsets;
    }
  }
}

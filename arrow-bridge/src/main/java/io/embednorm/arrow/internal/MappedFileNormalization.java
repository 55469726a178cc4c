package io.embednorm.arrow.internal;

import io.embednorm.engine.Normalization;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * The mapped path of {@code ArrowFiles.normalizeFile} on the CPU: the output is the input with the
 * column's values replaced. Every byte but the values is copied in the kernel ({@link
 * FileChannel#transferTo}, as {@code cp} does); null rows get their element validity bits cleared
 * and their element node's null count set, as the record-batch path writes them; then each batch's
 * values are read piece by piece, normalized and written in place ({@link ValueWriters}), the
 * output being forced to disk in the background as it grows ({@link BackgroundForce}). Finally the
 * output is forced and moved into place, as on the record-batch path; on any failure the temporary
 * file is deleted and an existing output stays untouched. No Arrow allocator is involved.
 */
public final class MappedFileNormalization {
  /** The output is forced to disk in the background every this many bytes of values. */
  static final long FORCE_INTERVAL_BYTES = 256L << 20;

  private MappedFileNormalization() {}

  /**
   * Writes {@code output}: the input of {@code plan} with its column normalized by {@code
   * normalization} on up to {@code threads} threads. The plan stays the caller's.
   *
   * @param progress called after each batch with the rows done so far
   * @throws IOException when the output cannot be written (nothing is left behind)
   */
  public static void run(
      MappedColumnPlan plan,
      Path output,
      Normalization normalization,
      int threads,
      LongConsumer progress)
      throws IOException {
    FileChannel input = plan.input();
    try (TemporaryOutput target = TemporaryOutput.create(output);
        ValueWriters writers =
            new ValueWriters(
                threads,
                target.channel(),
                normalization,
                plan.layout().type(),
                plan.largestRowBytes());
        BackgroundForce force = new BackgroundForce(target.channel(), FORCE_INTERVAL_BYTES)) {
      copyAllButValues(plan, target.channel());
      for (BatchRows rows : plan.batches()) {
        if (rows.hasInvalidRows()) {
          markInvalidRows(input, rows, target.channel());
        }
      }
      long rowsDone = 0;
      for (BatchRows rows : plan.batches()) {
        force.written(writeValues(input, rows, plan, writers));
        rowsDone += rows.rows();
        progress.accept(rowsDone);
      }
      force.finish();
      target.commit();
    }
  }

  /** The bytes of a batch's values that the path writes itself. */
  private static Region values(BatchRows rows, MappedColumnPlan plan) {
    return new Region(
        rows.batch().values().position(), rows.elements() * plan.layout().type().byteWidth());
  }

  static void copyAllButValues(MappedColumnPlan plan, FileChannel output) throws IOException {
    List<Region> values = new ArrayList<>();
    for (BatchRows rows : plan.batches()) {
      values.add(values(rows, plan));
    }
    values.sort(Comparator.comparingLong(Region::position));
    long copied = 0;
    for (Region region : values) {
      transfer(plan.input(), copied, region.position(), output);
      copied = Math.max(copied, region.end());
    }
    transfer(plan.input(), copied, plan.size(), output);
  }

  /** Copies bytes {@code [from, to)} of {@code input} to the same place of {@code output}. */
  private static void transfer(FileChannel input, long from, long to, FileChannel output)
      throws IOException {
    output.position(from);
    for (long position = from; position < to; ) {
      long copied = input.transferTo(position, to - position, output);
      if (copied <= 0) {
        throw new IOException("the input ended at byte " + position + " of " + to);
      }
      position += copied;
    }
  }

  /**
   * Clears the element validity bits of invalid rows (and the unused bits of the last byte) and
   * sets the element node's null count, as the record-batch path writes them.
   */
  static void markInvalidRows(FileChannel input, BatchRows rows, FileChannel output)
      throws IOException {
    Region bitmap = rows.batch().elementValidity();
    ByteBuffer bits = IpcFileLayout.read(input, bitmap.position(), (int) bitmap.length());
    long elements = rows.elements();
    ValidityBits.set(bits, 0, elements);
    for (int row = 0; row < rows.rows(); row++) {
      if (!rows.isValid(row)) {
        ValidityBits.clear(bits, rows.start(row), rows.start(row + 1));
      }
    }
    ValidityBits.clear(bits, elements, Math.min((elements + 7) & -8L, bitmap.length() * 8));
    writeFully(output, bits, bitmap.position());
    ByteBuffer nullCount =
        ByteBuffer.allocate(Long.BYTES)
            .order(ByteOrder.LITTLE_ENDIAN)
            .putLong(0, rows.invalidElements());
    writeFully(output, nullCount, rows.batch().elementNullCountPosition());
  }

  /** Normalizes and writes one batch's values; returns the bytes. */
  private static long writeValues(
      FileChannel input, BatchRows rows, MappedColumnPlan plan, ValueWriters writers)
      throws IOException {
    writers.write(rows, input);
    return rows.elements() * plan.layout().type().byteWidth();
  }

  private static void writeFully(FileChannel output, ByteBuffer bytes, long position)
      throws IOException {
    for (long at = position; bytes.hasRemaining(); ) {
      at += output.write(bytes, at);
    }
  }
}

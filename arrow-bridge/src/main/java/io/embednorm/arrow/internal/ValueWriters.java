package io.embednorm.arrow.internal;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Normalizes pieces of a column (runs of whole rows of about {@link #PIECE_BYTES}): each piece is
 * read from the input with a positional read into a small buffer per thread, normalized in place,
 * its invalid rows zeroed there, and written to the output at its place with a positional write.
 * Small pieces keep the buffer in the cache, so the kernel copies from and to it there, which
 * measured faster than writing through a mapping of the output or from large buffers. Reads rather
 * than a mapping of the input: a mapping takes a page fault for every page it touches, which
 * measured slower than positional reads of the same bytes; reads run at about the speed of {@code
 * cp} (see docs/PERFORMANCE.md).
 *
 * <p>Up to {@code threads} threads take pieces from a shared counter (the caller's thread is one of
 * them); each has its own single-threaded CPU engine and scratch buffer. Every row is computed
 * alone, so its bits depend neither on the pieces nor on the threads. Owns its threads and engines
 * ({@link #close()} stops them), not the output channel.
 */
final class ValueWriters implements AutoCloseable {
  /** Bytes of rows per piece: fits the L2 cache with room for the input. */
  static final int PIECE_BYTES = 1 << 20;

  private static final byte[] ZEROS = new byte[4096];

  private final FileChannel output;
  private final Normalization normalization;
  private final ElementType type;
  private final List<Worker> workers = new ArrayList<>();
  private final Object writeLock = new Object();
  private final ExecutorService pool;

  ValueWriters(
      int threads,
      FileChannel output,
      Normalization normalization,
      ElementType type,
      long largestRowBytes) {
    this.output = output;
    this.normalization = normalization;
    this.type = type;
    int scratchBytes = (int) Math.max(PIECE_BYTES, largestRowBytes);
    for (int thread = 0; thread < threads; thread++) {
      workers.add(new Worker(scratchBytes));
    }
    this.pool =
        threads > 1
            ? Executors.newFixedThreadPool(
                threads - 1,
                runnable -> {
                  Thread writer = new Thread(runnable, "embednorm-mapped-writer");
                  writer.setDaemon(true);
                  return writer;
                })
            : null;
  }

  /**
   * Normalizes and writes the values of {@code rows}, read from {@code input} at their place;
   * returns when every piece is written.
   */
  void write(BatchRows rows, FileChannel input) throws IOException {
    List<Piece> pieces = pieces(rows, input);
    AtomicInteger next = new AtomicInteger();
    int helpers = Math.min(workers.size(), pieces.size()) - 1;
    List<Future<?>> others = new ArrayList<>();
    Throwable failure = null;
    try {
      for (int helper = 1; helper <= helpers; helper++) {
        Worker worker = workers.get(helper);
        others.add(pool.submit(() -> worker.drain(pieces, next)));
      }
      workers.get(0).drain(pieces, next);
    } catch (RuntimeException | Error thrown) {
      failure = thrown;
    }
    for (Future<?> other : others) {
      try {
        other.get();
      } catch (ExecutionException thrown) {
        failure = failure != null ? failure : thrown.getCause();
      } catch (InterruptedException thrown) {
        Thread.currentThread().interrupt();
        next.set(pieces.size());
        failure =
            failure != null
                ? failure
                : new CancellationException("Interrupted while normalizing a file");
      }
    }
    if (failure != null) {
      rethrow(failure);
    }
  }

  private static void rethrow(Throwable failure) throws IOException {
    if (failure instanceof UncheckedIOException unchecked) {
      throw unchecked.getCause();
    }
    if (failure instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failure instanceof Error error) {
      throw error;
    }
    throw new IllegalStateException(failure);
  }

  /** Stops the helper threads and the engines. */
  @Override
  public void close() {
    if (pool != null) {
      pool.shutdown();
    }
    workers.forEach(worker -> worker.engine.close());
  }

  private List<Piece> pieces(BatchRows rows, FileChannel input) {
    int[] boundaries = rows.runs(0, rows.rows(), PIECE_BYTES, type.byteWidth());
    List<Piece> pieces = new ArrayList<>(boundaries.length);
    for (int run = 1; run < boundaries.length; run++) {
      pieces.add(new Piece(rows, boundaries[run - 1], boundaries[run], input));
    }
    return pieces;
  }

  /** Rows {@code [from, to)} of a batch whose values {@code input} holds at their place. */
  private record Piece(BatchRows rows, int from, int to, FileChannel input) {}

  /** One thread's engine and scratch buffer. */
  private final class Worker {
    private final NormalizationEngine engine = Engines.cpu(1);
    private final ByteBuffer scratch;

    Worker(int scratchBytes) {
      this.scratch = ByteBuffer.allocateDirect(scratchBytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Writes pieces until none is left; on a failure, leaves none for the other threads. */
    void drain(List<Piece> pieces, AtomicInteger next) {
      try {
        for (int index = next.getAndIncrement();
            index < pieces.size();
            index = next.getAndIncrement()) {
          write(pieces.get(index));
        }
      } catch (IOException failure) {
        next.set(pieces.size());
        throw new UncheckedIOException(failure);
      } catch (RuntimeException | Error failure) {
        next.set(pieces.size());
        throw failure;
      }
    }

    private void write(Piece piece) throws IOException {
      BatchRows rows = piece.rows();
      long first = rows.start(piece.from());
      int byteWidth = type.byteWidth();
      int bytes = (int) ((rows.start(piece.to()) - first) * byteWidth);
      long position = rows.batch().values().position() + first * byteWidth;
      ByteBuffer values = scratch.duplicate().clear().limit(bytes);
      for (long at = position; values.hasRemaining(); ) {
        int read = piece.input().read(values, at);
        if (read < 0) {
          throw new IOException("the input ended at byte " + at + " of " + (position + bytes));
        }
        at += read;
      }
      values.flip();
      int count = piece.to() - piece.from();
      RowBatch batch =
          rows.offsets() == null
              ? RowBatch.fixedWidth(type, count, rows.width(), values, values)
              : RowBatch.ragged(type, IntBuffer.wrap(offsets(rows, piece)), values, values);
      engine.normalize(
          normalization, batch.withFirstRowIndex(rows.batch().firstRow() + piece.from()));
      zeroInvalidRows(piece, first);
      ByteBuffer written = scratch.duplicate().clear().limit(bytes);
      // One write at a time: the file system serializes writes to a file anyway, and a thread
      // that waits here sleeps, where one waiting in the kernel may spin.
      synchronized (writeLock) {
        while (written.hasRemaining()) {
          position += output.write(written, position);
        }
      }
    }

    private void zeroInvalidRows(Piece piece, long first) {
      BatchRows rows = piece.rows();
      int byteWidth = type.byteWidth();
      for (int row = piece.from(); rows.hasInvalidRows() && row < piece.to(); row++) {
        if (!rows.isValid(row)) {
          int end = (int) ((rows.start(row + 1) - first) * byteWidth);
          for (int index = (int) ((rows.start(row) - first) * byteWidth); index < end; ) {
            int length = Math.min(ZEROS.length, end - index);
            scratch.put(index, ZEROS, 0, length);
            index += length;
          }
        }
      }
    }

    private int[] offsets(BatchRows rows, Piece piece) {
      int[] offsets = new int[piece.to() - piece.from() + 1];
      long first = rows.start(piece.from());
      for (int row = piece.from(); row <= piece.to(); row++) {
        offsets[row - piece.from()] = (int) (rows.start(row) - first);
      }
      return offsets;
    }
  }
}

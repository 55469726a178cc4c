package io.embednorm.arrow.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.function.LongUnaryOperator;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Staging sources and targets in files, for the mapped path on the GPU: position {@code p} is byte
 * {@code p} of the channel, read into a slot and written from one with positional I/O (several
 * threads at once, as {@link FileChannel} allows). Failures come as {@link UncheckedIOException}s,
 * whose cause the caller rethrows.
 */
public final class FileStaging {
  private FileStaging() {}

  /**
   * Reads position {@code p} from byte {@code p} of {@code input}. The rows are placed in the slot
   * as they would lie in the buffer an Arrow reader reads them into, which starts on a 16-byte
   * boundary at file position {@code alignedAt.applyAsLong(p)} (their record batch's block), so
   * that they get the kernels, hence the bits, of the record-batch path.
   */
  public static StagingSource source(FileChannel input, LongUnaryOperator alignedAt) {
    return new StagingSource() {
      @Override
      public void copyTo(long position, long address, long bytes) {
        ByteBuffer slot = MemoryUtil.directBuffer(address, Math.toIntExact(bytes));
        try {
          while (slot.hasRemaining()) {
            int read = input.read(slot, position + slot.position());
            if (read < 0) {
              throw new EOFException(
                  "the file ends before byte " + (position + bytes) + " of the values");
            }
          }
        } catch (IOException failure) {
          throw new UncheckedIOException(failure);
        }
      }

      @Override
      public int alignment(long position) {
        return (int) ((position - alignedAt.applyAsLong(position)) & 15);
      }
    };
  }

  /** Writes position {@code p} to byte {@code p} of {@code output}. */
  public static StagingTarget target(FileChannel output) {
    return (address, position, bytes) -> {
      ByteBuffer slot = MemoryUtil.directBuffer(address, Math.toIntExact(bytes));
      try {
        while (slot.hasRemaining()) {
          output.write(slot, position + slot.position());
        }
      } catch (IOException failure) {
        throw new UncheckedIOException(failure);
      }
    };
  }
}

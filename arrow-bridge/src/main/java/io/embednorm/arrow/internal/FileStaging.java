package io.embednorm.arrow.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.util.function.LongUnaryOperator;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Staging sources and targets in files, for the mapped path on the GPU: position {@code p} is byte
 * {@code p} of the channel, read into a slot (several threads at once, as {@link FileChannel}
 * allows) and written from one with positional I/O (one thread). Failures come as {@link
 * UncheckedIOException}s, whose cause the caller rethrows.
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

  /**
   * Writes position {@code p} to byte {@code p} of {@code output}, on one writer thread ({@link
   * StagingTarget#writesOnOneThread()}): the kernel serializes the writes to one file, so more
   * threads would only queue on its lock. A failure says which bytes it was writing.
   */
  public static StagingTarget target(FileChannel output) {
    return new StagingTarget() {
      @Override
      public void copyFrom(long address, long position, long bytes) {
        ByteBuffer slot = MemoryUtil.directBuffer(address, Math.toIntExact(bytes));
        try {
          while (slot.hasRemaining()) {
            output.write(slot, position + slot.position());
          }
        } catch (IOException failure) {
          throw new UncheckedIOException(
              new IOException(
                  reason(failure)
                      + " (writing bytes "
                      + position
                      + " to "
                      + (position + bytes)
                      + " of the output, "
                      + slot.position()
                      + " of them written)",
                  failure));
        }
      }

      @Override
      public boolean writesOnOneThread() {
        return true;
      }
    };
  }

  private static String reason(IOException failure) {
    if (failure instanceof FileSystemException system && system.getReason() != null) {
      return system.getReason();
    }
    String message = failure.getMessage();
    return message == null || message.isBlank() ? failure.getClass().getSimpleName() : message;
  }
}

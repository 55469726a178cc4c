package io.embednorm.arrow.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A hidden temporary file beside an output path ({@code .<name>.<random>.tmp}), written through
 * {@link #channel()} and moved into place by {@link #commit()}: forced to disk first, then renamed
 * over the output (atomically where the file system can). Closing it without a commit deletes the
 * temporary file and leaves any existing output untouched, so a failed write never leaves a partial
 * output behind.
 *
 * <p>The caller closes it; it owns and closes its channel. Not thread-safe, except that several
 * threads may write to {@link #channel()} at positions of their own.
 */
public final class TemporaryOutput implements AutoCloseable {
  private final Path output;
  private final Path temporary;
  private final FileChannel channel;
  private boolean finished;

  private TemporaryOutput(Path output, Path temporary, FileChannel channel) {
    this.output = output;
    this.temporary = temporary;
    this.channel = channel;
  }

  /** Creates the temporary file for {@code output}, and any missing parent directories. */
  public static TemporaryOutput create(Path output) throws IOException {
    Path absolute = output.toAbsolutePath();
    Files.createDirectories(absolute.getParent());
    Path temporary =
        absolute.resolveSibling(
            "."
                + absolute.getFileName()
                + "."
                + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE)
                + ".tmp");
    FileChannel channel =
        FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    return new TemporaryOutput(absolute, temporary, channel);
  }

  /** The temporary file, open for writing; owned by this object. */
  public FileChannel channel() {
    return channel;
  }

  /**
   * Forces the file's contents and metadata to disk, closes it and moves it over the output.
   * Afterwards {@link #close()} does nothing.
   */
  public void commit() throws IOException {
    if (finished) {
      throw new IllegalStateException("The output '" + output + "' is already committed or closed");
    }
    channel.force(true);
    channel.close();
    try {
      Files.move(temporary, output, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException notAtomic) {
      Files.move(temporary, output, StandardCopyOption.REPLACE_EXISTING);
    }
    finished = true;
  }

  /** Whether {@link #commit()} or {@link #close()} has run. */
  public boolean isFinished() {
    return finished;
  }

  /** Without a commit, closes the channel and deletes the temporary file. Idempotent. */
  @Override
  public void close() {
    if (finished) {
      return;
    }
    finished = true;
    try {
      channel.close();
    } catch (IOException ignored) {
      // deleting the file matters more
    }
    try {
      Files.deleteIfExists(temporary);
    } catch (IOException ignored) {
      // nothing more to do; the name starts with a dot and ends with .tmp
    }
  }
}

package io.embednorm.arrow.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A temporary file beside an output path ({@code <name>.embednorm-partial-<pid>}, see {@link
 * PartialFiles}), written through {@link #channel()} and moved into place by {@link #commit()}:
 * forced to disk first, then renamed over the output (atomically where the file system can).
 * Closing it without a commit deletes the temporary file and leaves any existing output untouched,
 * so a failed write never leaves a partial output behind; so does stopping the JVM by SIGTERM or
 * SIGINT ({@link InFlightFiles}). The output must be absent or a regular file ({@link
 * OutputFileCheck}).
 *
 * <p>The caller closes it; it owns and closes its channel. Not thread-safe, except that several
 * threads may write to {@link #channel()} at positions of their own.
 */
public final class TemporaryOutput implements AutoCloseable {
  private static final int MOST_ATTEMPTS = 100;

  private final Path output;
  private final Path temporary;
  private final FileChannel channel;
  private boolean finished;

  private TemporaryOutput(Path output, Path temporary, FileChannel channel) {
    this.output = output;
    this.temporary = temporary;
    this.channel = channel;
  }

  /**
   * Creates the temporary file for {@code output}, and any missing parent directories; first
   * removes temporary files of this output left by processes that are gone.
   *
   * @throws io.embednorm.engine.EmbedNormException "Cannot write output ..." when {@code output} is
   *     no regular file
   */
  public static TemporaryOutput create(Path output) throws IOException {
    Path target = OutputFileCheck.target(output);
    Files.createDirectories(target.getParent());
    PartialFiles.removeLeftovers(target);
    for (int attempt = 0; attempt < MOST_ATTEMPTS; attempt++) {
      Path temporary = PartialFiles.name(target, attempt);
      try {
        return new TemporaryOutput(target, temporary, InFlightFiles.create(temporary));
      } catch (FileAlreadyExistsException taken) {
        // another write of the same output in progress; take the next name
      }
    }
    throw new IOException(
        "all " + MOST_ATTEMPTS + " temporary names beside it are taken by writes in progress");
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
    InFlightFiles.commit(temporary, output);
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
      InFlightFiles.delete(temporary);
    } catch (IOException ignored) {
      // the next write of this output removes it once this process is gone (PartialFiles)
    }
  }
}

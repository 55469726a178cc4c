package io.embednorm.arrow.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;

/**
 * Forces a file being written to disk on a thread of its own every {@code interval} bytes written,
 * so that the disk writes most of it while the rest is still being computed and the final {@code
 * fsync} before the commit has little left to do. At most one force runs at a time. Owns its
 * thread, not the channel: {@link #close()} stops the thread.
 */
final class BackgroundForce implements AutoCloseable {
  private final FileChannel channel;
  private final long interval;
  private final BackgroundTask thread = new BackgroundTask("embednorm-force");
  private long unforcedBytes;

  BackgroundForce(FileChannel channel, long interval) {
    this.channel = channel;
    this.interval = interval;
  }

  /** Counts {@code bytes} more written; starts a force when enough are and none is running. */
  void written(long bytes) throws IOException {
    unforcedBytes += bytes;
    if (unforcedBytes < interval || thread.isBusy()) {
      return;
    }
    unforcedBytes = 0;
    try {
      thread.start(
          () -> {
            try {
              channel.force(false);
            } catch (IOException failure) {
              throw new UncheckedIOException(failure);
            }
          });
    } catch (UncheckedIOException failure) {
      throw failure.getCause();
    }
  }

  /** Waits for the running force, if any, and rethrows its failure. */
  void finish() throws IOException {
    try {
      thread.finish();
    } catch (UncheckedIOException failure) {
      throw failure.getCause();
    }
  }

  /** Waits for a running force (its failure no longer matters) and stops the thread. */
  @Override
  public void close() {
    thread.close();
  }
}

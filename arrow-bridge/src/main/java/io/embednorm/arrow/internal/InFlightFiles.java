package io.embednorm.arrow.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Set;

/**
 * The temporary files this process is writing, deleted by a JVM shutdown hook (SIGTERM, SIGINT,
 * {@code System.exit}) so that an interrupted write leaves nothing behind. Creating, committing and
 * the hook exclude one another: once the hook has run, no temporary file is created or moved into
 * place, so threads still writing when the JVM stops write only into a deleted file.
 */
final class InFlightFiles {
  private static final Set<Path> FILES = new HashSet<>();
  private static boolean hookAdded;
  private static boolean shuttingDown;

  private InFlightFiles() {}

  /** Creates {@code file} (which must not exist) for writing and registers it. */
  static synchronized FileChannel create(Path file) throws IOException {
    requireRunning();
    if (!hookAdded) {
      Runtime.getRuntime()
          .addShutdownHook(new Thread(InFlightFiles::deleteAll, "embednorm-partial-files"));
      hookAdded = true;
    }
    FileChannel channel =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    FILES.add(file);
    return channel;
  }

  /** Moves {@code file} over {@code target} (atomically where the file system can); unregisters. */
  static synchronized void commit(Path file, Path target) throws IOException {
    requireRunning();
    try {
      Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException notAtomic) {
      Files.move(file, target, StandardCopyOption.REPLACE_EXISTING);
    }
    FILES.remove(file);
  }

  /** Deletes {@code file} if it exists and unregisters it. */
  static synchronized void delete(Path file) throws IOException {
    try {
      Files.deleteIfExists(file);
    } finally {
      FILES.remove(file);
    }
  }

  /**
   * Deletes {@code file}, left by an earlier process of this process id, unless this process is
   * writing it; whether it did.
   */
  static synchronized boolean deleteUnlessInFlight(Path file) throws IOException {
    return !FILES.contains(file) && Files.deleteIfExists(file);
  }

  private static void requireRunning() throws IOException {
    if (shuttingDown) {
      throw new IOException("the JVM is shutting down");
    }
  }

  private static synchronized void deleteAll() {
    shuttingDown = true;
    for (Path file : FILES) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException ignored) {
        // the next run on this output removes it (PartialFiles)
      }
    }
    FILES.clear();
  }
}

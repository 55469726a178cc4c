package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * A new folder under {@code java.io.tmpdir} that is deleted with everything in it on {@link
 * #close}, or by a shutdown hook when the JVM ends first (SIGTERM, Ctrl-C). The caller closes it.
 */
public final class TemporaryFolder implements AutoCloseable {
  private final Path path;
  private final Thread hook;

  private TemporaryFolder(Path path) {
    this.path = path;
    this.hook = new Thread(this::deleteQuietly, "embednorm delete " + path);
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Creates a folder named {@code prefix} plus a random suffix under java.io.tmpdir. */
  public static TemporaryFolder create(String prefix) {
    try {
      return new TemporaryFolder(Files.createTempDirectory(prefix));
    } catch (IOException failure) {
      throw new EmbedNormException(
          "Cannot create a temporary folder in '"
              + System.getProperty("java.io.tmpdir")
              + "': "
              + failure.getMessage(),
          failure);
    }
  }

  public Path path() {
    return path;
  }

  /** Deletes the folder and its contents; the shutdown hook is dropped. */
  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // The hook is running or about to; deleting twice is harmless.
    }
    delete(path);
  }

  /**
   * On SIGTERM Spark's tasks may still write into the folder while this hook runs beside Spark's
   * own: a file created during one pass is deleted by the next.
   */
  private void deleteQuietly() {
    for (int attempt = 0; attempt < 10; attempt++) {
      try {
        delete(path);
      } catch (UncheckedIOException tryAgain) {
        // A file appeared or vanished during the walk.
      }
      if (!Files.exists(path)) {
        return;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Deletes {@code folder} and everything under it; a missing folder is fine. */
  static void delete(Path folder) {
    try {
      Files.walkFileTree(
          folder,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes)
                throws IOException {
              Files.deleteIfExists(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException failure)
                throws IOException {
              if (failure instanceof NoSuchFileException) {
                return FileVisitResult.CONTINUE;
              }
              throw failure;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path directory, IOException failure)
                throws IOException {
              Files.deleteIfExists(directory);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (NoSuchFileException gone) {
      // Nothing to delete.
    } catch (IOException failure) {
      throw new UncheckedIOException(failure);
    }
  }
}

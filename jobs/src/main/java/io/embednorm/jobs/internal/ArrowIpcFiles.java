package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.channels.Channels;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Opens the Arrow IPC file of one task's output. On the local file system the file is written
 * without Hadoop's {@code .crc} side file: no Arrow reader checks it, and computing it in 512-byte
 * chunks took several times as long as writing the bytes (and without Hadoop's native library the
 * side file cost one more {@code chmod} subprocess).
 */
final class ArrowIpcFiles {
  /**
   * Bytes the output stream gathers per write: record batches are megabytes, and the file system's
   * default (4 KiB) made one system call per 4 KiB.
   */
  static final int STREAM_BUFFER_BYTES = 1 << 20;

  private ArrowIpcFiles() {}

  /** The file system of {@code path}; the local one without its checksum files. */
  static FileSystem fileSystem(Path path, Configuration configuration) throws IOException {
    FileSystem files = path.getFileSystem(configuration);
    return files instanceof LocalFileSystem local ? local.getRawFileSystem() : files;
  }

  /**
   * A new file at {@code path} (it must not exist) with {@code root}'s schema written; the caller
   * closes the writer, which closes the file.
   */
  static ArrowFileWriter open(String path, VectorSchemaRoot root, Configuration configuration) {
    FSDataOutputStream stream = null;
    try {
      Path target = new Path(path);
      stream = fileSystem(target, configuration).create(target, false, STREAM_BUFFER_BYTES);
      ArrowFileWriter file = new ArrowFileWriter(root, null, Channels.newChannel(stream));
      file.start();
      return file;
    } catch (IOException failure) {
      try {
        if (stream != null) {
          stream.close();
        }
      } catch (IOException ignored) {
        failure.addSuppressed(ignored);
      }
      throw new EmbedNormException(
          "Cannot write Arrow file '" + path + "': " + failure.getMessage(), failure);
    }
  }
}

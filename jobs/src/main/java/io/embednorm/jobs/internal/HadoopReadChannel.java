package io.embednorm.jobs.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;
import org.apache.hadoop.fs.FSDataInputStream;

/**
 * A file of a Hadoop file system as a read-only {@link SeekableByteChannel}, which Arrow's file
 * reader needs (it reads the footer first). Owns the stream: {@link #close()} closes it.
 */
final class HadoopReadChannel implements SeekableByteChannel {
  private static final int MOST_BYTES_A_READ = 1 << 20;

  private final FSDataInputStream stream;
  private final long size;
  private long position;
  private boolean open = true;

  HadoopReadChannel(FSDataInputStream stream, long size) {
    this.stream = stream;
    this.size = size;
  }

  @Override
  public int read(ByteBuffer target) throws IOException {
    if (!open) {
      throw new ClosedChannelException();
    }
    if (position >= size) {
      return -1;
    }
    int bytes = (int) Math.min(Math.min(target.remaining(), MOST_BYTES_A_READ), size - position);
    byte[] read = new byte[bytes];
    stream.readFully(position, read);
    target.put(read);
    position += bytes;
    return bytes;
  }

  @Override
  public int write(ByteBuffer source) {
    throw new NonWritableChannelException();
  }

  @Override
  public long position() {
    return position;
  }

  @Override
  public SeekableByteChannel position(long newPosition) {
    position = newPosition;
    return this;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public SeekableByteChannel truncate(long newSize) {
    throw new NonWritableChannelException();
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public void close() throws IOException {
    open = false;
    stream.close();
  }
}

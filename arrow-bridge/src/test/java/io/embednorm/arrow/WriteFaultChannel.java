package io.embednorm.arrow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * A real file's channel whose positional writes a test can watch and disturb, as a file system may:
 * each write is recorded (position, bytes asked, thread); a write may take fewer bytes than asked
 * ({@code mostBytesPerWrite}), fail once it reaches a byte ({@code failAtByte}: the bytes before it
 * are written, then "No space left on device", as Java reports ENOSPC), be slow, or wait before
 * writing until the test releases it ({@link #holdWrites()}; interrupted there, it closes as a file
 * channel does). Everything else goes to the file as it is.
 */
final class WriteFaultChannel extends FileChannel {
  /** One positional write as asked: where, how many bytes, on which thread. */
  record Write(long position, int bytes, String thread) {}

  private final FileChannel file;
  private final List<Write> writes = new CopyOnWriteArrayList<>();
  private volatile int mostBytesPerWrite = Integer.MAX_VALUE;
  private volatile long failAtByte = Long.MAX_VALUE;
  private volatile long delayNanos;
  private volatile CountDownLatch held;
  private final CountDownLatch holding = new CountDownLatch(1);

  WriteFaultChannel(FileChannel file) {
    this.file = file;
  }

  /** Each write takes at most {@code bytes} bytes; the caller writes the rest again. */
  WriteFaultChannel mostBytesPerWrite(int bytes) {
    this.mostBytesPerWrite = bytes;
    return this;
  }

  /** A write reaching byte {@code position} of the file writes up to it, then fails. */
  WriteFaultChannel failAtByte(long position) {
    this.failAtByte = position;
    return this;
  }

  /** Each write first sleeps {@code micros}: a file system slower than the test GPU. */
  WriteFaultChannel delayEachWrite(int micros) {
    this.delayNanos = micros * 1000L;
    return this;
  }

  /** Writes wait until {@link #release()}; {@link #awaitHolding()} returns once one waits. */
  WriteFaultChannel holdWrites() {
    this.held = new CountDownLatch(1);
    return this;
  }

  void release() {
    held.countDown();
  }

  void awaitHolding() throws InterruptedException {
    holding.await();
  }

  /** The positional writes asked so far, in the order they were asked. */
  List<Write> writes() {
    return List.copyOf(writes);
  }

  @Override
  public int write(ByteBuffer source, long position) throws IOException {
    writes.add(new Write(position, source.remaining(), Thread.currentThread().getName()));
    CountDownLatch latch = held;
    if (latch != null) {
      holding.countDown();
      try {
        latch.await();
      } catch (InterruptedException stop) {
        // as a file channel does when the thread writing is interrupted
        Thread.currentThread().interrupt();
        close();
        throw new ClosedByInterruptException();
      }
    }
    if (delayNanos > 0) {
      LockSupport.parkNanos(delayNanos);
    }
    int bytes = Math.min(source.remaining(), mostBytesPerWrite);
    if (position + bytes > failAtByte) {
      int before = (int) Math.max(0, failAtByte - position);
      if (before > 0) {
        file.write(source.slice(source.position(), before), position);
        source.position(source.position() + before);
      }
      throw new IOException("No space left on device");
    }
    ByteBuffer part = source.slice(source.position(), bytes);
    int written = file.write(part, position);
    source.position(source.position() + written);
    return written;
  }

  @Override
  public int read(ByteBuffer destination) throws IOException {
    return file.read(destination);
  }

  @Override
  public long read(ByteBuffer[] destinations, int offset, int length) throws IOException {
    return file.read(destinations, offset, length);
  }

  @Override
  public int write(ByteBuffer source) throws IOException {
    return file.write(source);
  }

  @Override
  public long write(ByteBuffer[] sources, int offset, int length) throws IOException {
    return file.write(sources, offset, length);
  }

  @Override
  public long position() throws IOException {
    return file.position();
  }

  @Override
  public FileChannel position(long position) throws IOException {
    file.position(position);
    return this;
  }

  @Override
  public long size() throws IOException {
    return file.size();
  }

  @Override
  public FileChannel truncate(long size) throws IOException {
    file.truncate(size);
    return this;
  }

  @Override
  public void force(boolean metadata) throws IOException {
    file.force(metadata);
  }

  @Override
  public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
    return file.transferTo(position, count, target);
  }

  @Override
  public long transferFrom(ReadableByteChannel source, long position, long count)
      throws IOException {
    return file.transferFrom(source, position, count);
  }

  @Override
  public int read(ByteBuffer destination, long position) throws IOException {
    return file.read(destination, position);
  }

  @Override
  public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
    return file.map(mode, position, size);
  }

  @Override
  public FileLock lock(long position, long size, boolean shared) throws IOException {
    return file.lock(position, size, shared);
  }

  @Override
  public FileLock tryLock(long position, long size, boolean shared) throws IOException {
    return file.tryLock(position, size, shared);
  }

  @Override
  protected void implCloseChannel() throws IOException {
    file.close();
  }
}

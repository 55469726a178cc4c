package io.embednorm.arrow;

import java.io.IOException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.MessageChannelReader;
import org.apache.arrow.vector.ipc.message.MessageResult;

/**
 * The messages of an Arrow IPC stream, each body held here until a batch takes it over. Arrow
 * Java's stream reader drops a body it has read when it throws before building a batch of it (a
 * message type it does not expect, such as a type byte it does not know, or batch metadata that
 * fails to deserialize), which leaks the body. The reader that reads through this calls {@link
 * #handOver()} once a batch owns the body; a body not handed over is freed when the next message is
 * read, on {@link #releaseUnclaimed()} and on {@link #close()}. The stream reader given this closes
 * it.
 */
final class BodyOwningMessageReader extends MessageChannelReader {
  private ArrowBuf unclaimed;

  BodyOwningMessageReader(ReadChannel in, BufferAllocator allocator) {
    super(in, allocator);
  }

  @Override
  public MessageResult readNext() throws IOException {
    releaseUnclaimed();
    MessageResult result = super.readNext();
    if (result != null) {
      unclaimed = result.getBodyBuffer();
    }
    return result;
  }

  /** The body of the last message now belongs to a batch, which frees it. */
  void handOver() {
    unclaimed = null;
  }

  /** Frees the body of the last message unless a batch took it over. */
  void releaseUnclaimed() {
    ArrowBuf body = unclaimed;
    unclaimed = null;
    if (body != null) {
      body.close();
    }
  }

  @Override
  public void close() throws IOException {
    try {
      releaseUnclaimed();
    } finally {
      super.close();
    }
  }
}

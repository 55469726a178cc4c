package io.embednorm.arrow;

import io.embednorm.arrow.internal.RecordBatchCheck;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;

/**
 * Reads the metadata of an Arrow IPC file or stream, and no data, before Arrow Java's reader does:
 * every message and block must lie within the file, be of the type its place calls for (the schema
 * first in a stream, then record and dictionary batches) and every record batch pass {@link
 * RecordBatchCheck}. Arrow Java allocates a body as long as the metadata says before reading it (an
 * exabyte for a damaged length) and leaks it when a buffer lies outside; this turns both into one
 * reason. One read per message, a few per batch in all.
 */
final class IpcMetadataCheck {
  private static final int CONTINUATION = 0xFFFFFFFF;

  /** The leading magic with its padding; the footer length and the magic at the end. */
  private static final int HEAD_BYTES = 8;

  private static final int TAIL_BYTES = 10;

  /** More metadata than any real message has: a damaged length, not something to allocate. */
  private static final int MAX_METADATA_BYTES = 64 << 20;

  private final FileChannel channel;
  private final long size;

  private IpcMetadataCheck(FileChannel channel, long size) {
    this.channel = channel;
    this.size = size;
  }

  /**
   * Checks the file open in {@code channel}, of {@code size} bytes, in {@code format}.
   *
   * @throws IOException saying what is damaged
   */
  static void check(FileChannel channel, long size, ArrowFormat format) throws IOException {
    IpcMetadataCheck check = new IpcMetadataCheck(channel, size);
    try {
      if (format == ArrowFormat.FILE) {
        check.file();
      } else {
        check.stream();
      }
    } catch (RuntimeException damaged) {
      // Flatbuffer accessors fail with index errors on damaged metadata.
      throw new IOException("its metadata is damaged (" + damaged + ")", damaged);
    }
  }

  private void file() throws IOException {
    if (size < HEAD_BYTES + TAIL_BYTES) {
      throw new IOException("it has " + size + " bytes, too few for an Arrow IPC file");
    }
    ByteBuffer tail = read(size - TAIL_BYTES, TAIL_BYTES);
    byte[] magic = new byte[6];
    tail.get(Integer.BYTES, magic);
    if (!"ARROW1".equals(new String(magic, java.nio.charset.StandardCharsets.US_ASCII))) {
      throw new IOException("it does not end with the Arrow file magic (truncated?)");
    }
    int footerLength = tail.getInt(0);
    long footerStart = size - TAIL_BYTES - footerLength;
    if (footerLength <= 0 || footerStart < HEAD_BYTES) {
      throw new IOException("its footer length " + footerLength + " is out of range");
    }
    Footer footer = Footer.getRootAsFooter(read(footerStart, footerLength));
    Block block = new Block();
    for (int index = 0; index < footer.dictionariesLength(); index++) {
      block(
          footer.dictionaries(block, index),
          footerStart,
          "dictionary batch " + index,
          MessageHeader.DictionaryBatch);
    }
    for (int index = 0; index < footer.recordBatchesLength(); index++) {
      block(
          footer.recordBatches(block, index),
          footerStart,
          "record batch " + index,
          MessageHeader.RecordBatch);
    }
  }

  private void block(Block block, long end, String what, byte type) throws IOException {
    long offset = block.offset();
    long metadata = block.metaDataLength();
    long body = block.bodyLength();
    if (offset < HEAD_BYTES
        || metadata <= HEAD_BYTES
        || metadata > MAX_METADATA_BYTES
        || body < 0
        || offset > end
        || metadata > end - offset
        || body > end - offset - metadata) {
      throw new IOException(
          what
              + " ("
              + metadata
              + " bytes of metadata and "
              + body
              + " of body at byte "
              + offset
              + ") lies outside the file's "
              + end
              + " bytes of batches");
    }
    ByteBuffer bytes = read(offset, (int) metadata);
    int start = bytes.getInt(0) == CONTINUATION ? HEAD_BYTES : Integer.BYTES;
    int length = bytes.getInt(start - Integer.BYTES);
    if (length <= 0 || length > metadata - start) {
      throw new IOException(what + " has a damaged metadata length " + length);
    }
    message(bytes.position(start).slice().order(ByteOrder.LITTLE_ENDIAN), body, what, type);
  }

  private void stream() throws IOException {
    long position = 0;
    for (int index = 0; position < size; index++) {
      String what = "message " + index + " (at byte " + position + ")";
      if (size - position < Integer.BYTES) {
        throw new IOException("it ends within the length of " + what + " (truncated?)");
      }
      int first = read(position, Integer.BYTES).getInt(0);
      int prefix = first == CONTINUATION ? HEAD_BYTES : Integer.BYTES;
      if (size - position < prefix) {
        throw new IOException("it ends within the length of " + what + " (truncated?)");
      }
      int length = first == CONTINUATION ? read(position + 4, Integer.BYTES).getInt(0) : first;
      if (length == 0) {
        return;
      }
      if (length < 0 || length > MAX_METADATA_BYTES || length > size - position - prefix) {
        throw new IOException(what + " has a metadata length " + length + " past the file's end");
      }
      ByteBuffer metadata = read(position + prefix, length);
      long bodyStart = position + prefix + length;
      long body = Message.getRootAsMessage(metadata).bodyLength();
      if (body < 0 || body > size - bodyStart) {
        throw new IOException(
            what + " has a body of " + body + " bytes, past the file's end (truncated?)");
      }
      if (index == 0) {
        message(metadata, body, what, MessageHeader.Schema);
      } else {
        message(metadata, body, what, MessageHeader.RecordBatch, MessageHeader.DictionaryBatch);
      }
      position = bodyStart + body;
    }
  }

  /**
   * Checks one message's metadata, whose body is {@code bodyLength} bytes and whose type must be
   * one of {@code types}: Arrow Java's file reader reads a block as the type its place in the
   * footer says, whatever the message's own type, so a batch of another type would pass unchecked.
   */
  private static void message(ByteBuffer metadata, long bodyLength, String what, byte... types)
      throws IOException {
    Message message = Message.getRootAsMessage(metadata);
    RecordBatchCheck.readFields(message);
    if (!contains(types, message.headerType())) {
      throw new IOException(
          what
              + " is a message of type "
              + Byte.toUnsignedInt(message.headerType())
              + " where a "
              + names(types)
              + " belongs");
    }
    if (message.bodyLength() != bodyLength) {
      throw new IOException(
          what
              + " says its body has "
              + message.bodyLength()
              + " bytes where the file's index says "
              + bodyLength);
    }
    RecordBatch batch = null;
    if (message.headerType() == MessageHeader.RecordBatch) {
      batch = (RecordBatch) message.header(new RecordBatch());
    } else if (message.headerType() == MessageHeader.DictionaryBatch) {
      DictionaryBatch dictionary = (DictionaryBatch) message.header(new DictionaryBatch());
      batch = dictionary == null ? null : dictionary.data();
      if (dictionary != null) {
        dictionary.id();
        dictionary.isDelta();
      }
    }
    if (batch == null) {
      if (bodyLength != 0 && message.headerType() == MessageHeader.Schema) {
        throw new IOException(what + " is a schema with a body of " + bodyLength + " bytes");
      }
      return;
    }
    String problem = RecordBatchCheck.problem(batch, bodyLength);
    if (problem != null) {
      throw new IOException(what + " is damaged: " + problem);
    }
  }

  private static boolean contains(byte[] types, byte type) {
    for (byte allowed : types) {
      if (allowed == type) {
        return true;
      }
    }
    return false;
  }

  /** For example {@code record batch or dictionary batch}. */
  private static String names(byte[] types) {
    StringBuilder names = new StringBuilder();
    for (byte type : types) {
      names.append(names.length() == 0 ? "" : " or ");
      names.append(
          switch (type) {
            case MessageHeader.Schema -> "schema";
            case MessageHeader.DictionaryBatch -> "dictionary batch";
            default -> "record batch";
          });
    }
    return names.toString();
  }

  private ByteBuffer read(long position, int length) throws IOException {
    ByteBuffer bytes = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    while (bytes.hasRemaining()) {
      if (channel.read(bytes, position + bytes.position()) < 0) {
        throw new IOException("it ends within its metadata at byte " + size + " (truncated?)");
      }
    }
    return bytes.flip();
  }
}

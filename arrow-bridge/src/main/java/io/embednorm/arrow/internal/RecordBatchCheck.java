package io.embednorm.arrow.internal;

import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.RecordBatch;

/**
 * Checks the metadata of a record batch (or a dictionary batch's record batch) before anyone
 * allocates or slices for it: its length, every field node's length and null count, and that every
 * buffer lies within the body. Arrow Java's reader trusts these numbers: a negative one fails deep
 * inside the allocator, a buffer past the body leaks the body it has already allocated. A check per
 * node and per buffer, never per row.
 */
public final class RecordBatchCheck {
  private RecordBatchCheck() {}

  /**
   * Reads the fields of {@code message} that Arrow Java reads besides its header; throws an index
   * error where they point outside the message.
   */
  public static void readFields(Message message) {
    message.version();
    for (int index = 0; index < message.customMetadataLength(); index++) {
      message.customMetadata(index).key();
      message.customMetadata(index).value();
    }
  }

  /** What is wrong with {@code batch} whose body has {@code bodyLength} bytes, or null. */
  public static String problem(RecordBatch batch, long bodyLength) {
    // Read every field Arrow Java reads, so that damaged flatbuffer offsets fail here, before a
    // body is allocated, and not after.
    BodyCompression compression = batch.compression();
    if (compression != null) {
      compression.codec();
      compression.method();
    }
    for (int index = 0; index < batch.variadicBufferCountsLength(); index++) {
      batch.variadicBufferCounts(index);
    }
    long length = batch.length();
    if (length < 0 || length > Integer.MAX_VALUE) {
      return "it says it has " + length + " rows (at most " + Integer.MAX_VALUE + ")";
    }
    FieldNode node = new FieldNode();
    for (int index = 0; index < batch.nodesLength(); index++) {
      batch.nodes(node, index);
      if (node.length() < 0 || node.length() > Integer.MAX_VALUE) {
        return "field node " + index + " says it has " + node.length() + " values";
      }
      if (node.nullCount() < 0 || node.nullCount() > node.length()) {
        return "field node "
            + index
            + " says it has "
            + node.nullCount()
            + " nulls in "
            + node.length()
            + " values";
      }
    }
    Buffer buffer = new Buffer();
    for (int index = 0; index < batch.buffersLength(); index++) {
      batch.buffers(buffer, index);
      if (buffer.offset() < 0
          || buffer.length() < 0
          || buffer.offset() > bodyLength
          || buffer.length() > bodyLength - buffer.offset()) {
        return "buffer "
            + index
            + " ("
            + buffer.length()
            + " bytes at "
            + buffer.offset()
            + ") lies outside the body of "
            + bodyLength
            + " bytes";
      }
    }
    return null;
  }
}

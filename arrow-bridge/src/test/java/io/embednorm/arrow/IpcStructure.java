package io.embednorm.arrow;

import com.google.flatbuffers.Table;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.MessageHeader;

/**
 * Where the parts of a well-formed Arrow IPC file or stream lie, for the fuzz test to cut and
 * rewrite them: each message's prefix, metadata and body, and for the file format the footer, its
 * length and the trailing magic; within record-batch metadata, where the length, field nodes and
 * buffers are written, and each message's header type (absolute byte positions, read with
 * flatbuffer offsets).
 */
final class IpcStructure {
  /** One encapsulated message. */
  record Message(
      long start,
      long metadataStart,
      int metadataLength,
      long bodyStart,
      long bodyLength,
      byte headerType,
      long headerTypePosition,
      long bodyLengthPosition,
      long lengthPosition,
      long nodesPosition,
      int nodeCount,
      long buffersPosition,
      int bufferCount) {
    boolean isRecordBatch() {
      return headerType == MessageHeader.RecordBatch;
    }
  }

  final List<Message> messages = new ArrayList<>();
  final List<Long> boundaries = new ArrayList<>();

  /** Where the footer's record-batch blocks are (24 bytes each), or -1. */
  long blocksPosition = -1;

  int blockCount;

  /** Parses {@code bytes}, written by Arrow Java's writer; {@code file} for the file format. */
  IpcStructure(byte[] bytes, boolean file) {
    ByteBuffer all = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    long end = bytes.length;
    long footerStart = -1;
    if (file) {
      int footerLength = all.getInt(bytes.length - 10);
      footerStart = bytes.length - 10L - footerLength;
      end = footerStart;
      boundaries.add(6L);
      boundaries.add(8L);
      boundaries.add(footerStart);
      boundaries.add(bytes.length - 10L);
      boundaries.add(bytes.length - 6L);
      boundaries.add((long) bytes.length);
      Positions footer = Positions.root(all, (int) footerStart);
      int blocks = footer.vector(10);
      if (blocks >= 0) {
        blocksPosition = blocks;
        blockCount = footer.vectorLength(10);
      }
    }
    long position = file ? 8 : 0;
    while (position + 8 <= end) {
      boundaries.add(position);
      int first = all.getInt((int) position);
      int prefix = first == -1 ? 8 : 4;
      int length = first == -1 ? all.getInt((int) position + 4) : first;
      if (length <= 0) {
        boundaries.add(position + prefix);
        break;
      }
      long metadataStart = position + prefix;
      boundaries.add(metadataStart);
      Positions message = Positions.root(all, (int) metadataStart);
      org.apache.arrow.flatbuf.Message parsed =
          org.apache.arrow.flatbuf.Message.getRootAsMessage(
              all.duplicate().position((int) metadataStart).slice().order(ByteOrder.LITTLE_ENDIAN));
      long bodyStart = metadataStart + length;
      long bodyLength = parsed.bodyLength();
      Positions header = message.table(8);
      boundaries.add(bodyStart);
      messages.add(
          new Message(
              position,
              metadataStart,
              length,
              bodyStart,
              bodyLength,
              parsed.headerType(),
              message.field(6),
              message.field(10),
              header == null ? -1 : header.field(4),
              header == null ? -1 : header.vector(6),
              header == null ? 0 : header.vectorLength(6),
              header == null ? -1 : header.vector(8),
              header == null ? 0 : header.vectorLength(8)));
      position = bodyStart + bodyLength;
      boundaries.add(position);
    }
  }

  /** Reads flatbuffer tables of a whole-file buffer, giving absolute positions. */
  private static final class Positions extends Table {
    static Positions root(ByteBuffer all, int start) {
      Positions table = new Positions();
      table.__reset(start + all.getInt(start), all);
      return table;
    }

    /** The position of scalar field {@code slot}, or -1 when it is left at its default. */
    long field(int slot) {
      int offset = __offset(slot);
      return offset == 0 ? -1 : bb_pos + offset;
    }

    Positions table(int slot) {
      int offset = __offset(slot);
      if (offset == 0) {
        return null;
      }
      Positions table = new Positions();
      table.__reset(__indirect(bb_pos + offset), bb);
      return table;
    }

    int vector(int slot) {
      int offset = __offset(slot);
      return offset == 0 ? -1 : __vector(offset);
    }

    int vectorLength(int slot) {
      int offset = __offset(slot);
      return offset == 0 ? 0 : __vector_len(offset);
    }
  }
}

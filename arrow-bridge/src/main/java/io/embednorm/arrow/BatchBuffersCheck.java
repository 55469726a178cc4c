package io.embednorm.arrow;

import java.util.Iterator;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Checks a record batch that Arrow Java has read, before it loads it into vectors: every buffer is
 * as large as its field node's length asks, list and string offsets start at or above 0 and end
 * within their values, and children are as long as their parents need. Arrow Java's loader sets
 * value counts from these numbers and grows any buffer that is too small, failing half way and
 * leaking what it allocated. Reads the first and last offset of each offsets buffer, nothing per
 * row; Arrow's full validation after the load checks the rest.
 */
final class BatchBuffersCheck {
  private final Iterator<ArrowFieldNode> nodes;
  private final Iterator<ArrowBuf> buffers;

  private BatchBuffersCheck(ArrowRecordBatch batch) {
    this.nodes = batch.getNodes().iterator();
    this.buffers = batch.getBuffers().iterator();
  }

  /** Thrown for a damaged batch; the message says what is wrong. */
  static final class DamagedBatch extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DamagedBatch(String message) {
      super(message);
    }
  }

  /** Checks {@code batch} against {@code fields}, as loaded into vectors of those fields. */
  static void check(List<Field> fields, ArrowRecordBatch batch) {
    if (batch.getBodyCompression().getCodec()
        != CompressionUtil.CodecType.NO_COMPRESSION.getType()) {
      return;
    }
    BatchBuffersCheck check = new BatchBuffersCheck(batch);
    for (Field field : fields) {
      check.field(field, batch.getLength());
    }
  }

  /** Checks {@code field} and its children; its node must hold at least {@code needed} values. */
  private void field(Field field, long needed) {
    if (!nodes.hasNext()) {
      throw new DamagedBatch("it has fewer field nodes than its schema has fields");
    }
    ArrowFieldNode node = nodes.next();
    long length = node.getLength();
    if (length < needed) {
      throw new DamagedBatch(
          "column '"
              + field.getName()
              + "' has "
              + length
              + " values where "
              + needed
              + " are needed");
    }
    ArrowType type = field.getType();
    TypeLayout layout = TypeLayout.getTypeLayout(type);
    if (!layout.isFixedBufferCount()) {
      throw new DamagedBatch(
          "column '" + field.getName() + "' has a type this reader does not check");
    }
    long lastOffset = 0;
    for (BufferLayout buffer : layout.getBufferLayouts()) {
      if (!buffers.hasNext()) {
        throw new DamagedBatch("it has fewer buffers than its schema asks for");
      }
      ArrowBuf bytes = buffers.next();
      switch (buffer.getType()) {
        case VALIDITY:
          if (bytes.capacity() != 0) {
            need(field, "validity", bytes, (length + 7) / 8);
          }
          break;
        case OFFSET:
          lastOffset = offsets(field, bytes, length, buffer.getTypeBitWidth() / 8);
          break;
        case DATA:
          if (layout.getBufferLayouts().stream()
              .anyMatch(other -> other.getType() == BufferLayout.BufferType.OFFSET)) {
            need(field, "data", bytes, lastOffset);
          } else {
            need(field, "data", bytes, (length * buffer.getTypeBitWidth() + 7) / 8);
          }
          break;
        default:
          need(
              field,
              buffer.getType().getName(),
              bytes,
              (length * buffer.getTypeBitWidth() + 7) / 8);
          break;
      }
    }
    long childNeeds;
    if (type instanceof ArrowType.FixedSizeList) {
      childNeeds = length * ((ArrowType.FixedSizeList) type).getListSize();
    } else if (type instanceof ArrowType.Struct) {
      childNeeds = length;
    } else {
      childNeeds = lastOffset;
    }
    for (Field child : field.getChildren()) {
      field(child, childNeeds);
    }
  }

  /** Checks an offsets buffer of {@code width}-byte offsets; returns its last offset. */
  private static long offsets(Field field, ArrowBuf bytes, long length, int width) {
    if (length == 0) {
      return 0;
    }
    need(field, "offsets", bytes, (length + 1) * width);
    long first = width == 8 ? bytes.getLong(0) : bytes.getInt(0);
    long last = width == 8 ? bytes.getLong(length * 8) : bytes.getInt(length * 4);
    if (first < 0 || last < first) {
      throw new DamagedBatch(
          "column '"
              + field.getName()
              + "' has offsets from "
              + first
              + " to "
              + last
              + " (they must not be negative or decrease)");
    }
    return last;
  }

  private static void need(Field field, String what, ArrowBuf bytes, long needed) {
    if (bytes.capacity() < needed) {
      throw new DamagedBatch(
          "column '"
              + field.getName()
              + "' has a "
              + what
              + " buffer of "
              + bytes.capacity()
              + " bytes where "
              + needed
              + " are needed");
    }
  }
}

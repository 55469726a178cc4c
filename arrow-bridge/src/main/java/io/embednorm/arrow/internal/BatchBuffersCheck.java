package io.embednorm.arrow.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.List;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Checks the buffers of a record batch against its field nodes, before Arrow Java loads it into
 * vectors or the mapped path copies it: every buffer is as large as its node's length asks, list
 * and string offsets start at or above 0 and end within their values, a node with some nulls (not
 * none, not all) has validity bits, every column is as long as the batch and children are as long
 * as their parents need. Arrow Java's loader sets value counts from these numbers and grows any
 * buffer that is too small, failing half way and leaking what it allocated. Reads the first and
 * last offset of each offsets buffer, nothing per row.
 */
public final class BatchBuffersCheck {
  /** The buffers of one batch, read where they lie. */
  private interface Buffers {
    int count();

    long length(int index);

    /** Offset {@code position} of {@code width} bytes of buffer {@code index}. */
    long offset(int index, long position, int width) throws IOException;
  }

  private final List<long[]> nodes;
  private final Buffers buffers;
  private int node;
  private int buffer;

  private BatchBuffersCheck(List<long[]> nodes, Buffers buffers) {
    this.nodes = nodes;
    this.buffers = buffers;
  }

  /** Thrown for a damaged batch; the message says what is wrong. */
  public static final class DamagedBatch extends EmbedNormException {
    private static final long serialVersionUID = 1L;

    DamagedBatch(String message) {
      super(message);
    }
  }

  /** Checks {@code batch}, read by Arrow Java, against {@code fields} (as vectors hold them). */
  public static void check(List<Field> fields, ArrowRecordBatch batch) {
    if (batch.getBodyCompression().getCodec()
        != CompressionUtil.CodecType.NO_COMPRESSION.getType()) {
      return;
    }
    List<long[]> nodes =
        batch.getNodes().stream()
            .map((ArrowFieldNode node) -> new long[] {node.getLength(), node.getNullCount()})
            .toList();
    List<ArrowBuf> buffers = batch.getBuffers();
    check(
        fields,
        batch.getLength(),
        nodes,
        new Buffers() {
          @Override
          public int count() {
            return buffers.size();
          }

          @Override
          public long length(int index) {
            return buffers.get(index).capacity();
          }

          @Override
          public long offset(int index, long position, int width) {
            ArrowBuf bytes = buffers.get(index);
            return width == 8 ? bytes.getLong(position * 8) : bytes.getInt(position * 4);
          }
        });
  }

  /**
   * Checks {@code batch} of a file open in {@code channel}, whose body starts at {@code body},
   * against {@code fields} (dictionary-encoded ones holding their indices); its metadata has passed
   * {@link RecordBatchCheck}.
   */
  public static void check(List<Field> fields, RecordBatch batch, FileChannel channel, long body)
      throws IOException {
    List<long[]> nodes = new java.util.ArrayList<>();
    FieldNode fieldNode = new FieldNode();
    for (int index = 0; index < batch.nodesLength(); index++) {
      batch.nodes(fieldNode, index);
      nodes.add(new long[] {fieldNode.length(), fieldNode.nullCount()});
    }
    Buffer described = new Buffer();
    check(
        fields,
        batch.length(),
        nodes,
        new Buffers() {
          @Override
          public int count() {
            return batch.buffersLength();
          }

          @Override
          public long length(int index) {
            return batch.buffers(described, index).length();
          }

          @Override
          public long offset(int index, long position, int width) throws IOException {
            long at = body + batch.buffers(described, index).offset() + position * width;
            ByteBuffer bytes = ByteBuffer.allocate(width).order(ByteOrder.LITTLE_ENDIAN);
            while (bytes.hasRemaining()) {
              if (channel.read(bytes, at + bytes.position()) < 0) {
                throw new DamagedBatch("an offsets buffer lies past the file's end");
              }
            }
            return width == 8 ? bytes.getLong(0) : bytes.getInt(0);
          }
        });
  }

  private static void check(List<Field> fields, long rows, List<long[]> nodes, Buffers buffers) {
    BatchBuffersCheck check = new BatchBuffersCheck(nodes, buffers);
    try {
      for (Field field : fields) {
        check.column(field, rows);
      }
    } catch (IOException failure) {
      throw new DamagedBatch("its offsets cannot be read: " + failure.getMessage());
    }
  }

  /**
   * Checks top-level field {@code field}, whose node must hold no more values than the batch has
   * rows: the columns of a record batch are as long as the batch, and Arrow Java's loader cuts each
   * one to the batch's length, dropping the values past it without a word.
   */
  private void column(Field field, long rows) throws IOException {
    if (node < nodes.size() && nodes.get(node)[0] > rows) {
      throw damaged(field, "has " + nodes.get(node)[0] + " values in a batch of " + rows + " rows");
    }
    field(field, rows);
  }

  /** Checks {@code field} and its children; its node must hold at least {@code needed} values. */
  private void field(Field field, long needed) throws IOException {
    if (node >= nodes.size()) {
      throw new DamagedBatch("it has fewer field nodes than its schema has fields");
    }
    long length = nodes.get(node)[0];
    long nulls = nodes.get(node++)[1];
    if (length < needed) {
      throw damaged(field, "has " + length + " values where " + needed + " are needed");
    }
    ArrowType type =
        field.getDictionary() != null ? field.getDictionary().getIndexType() : field.getType();
    TypeLayout layout = TypeLayout.getTypeLayout(type);
    if (!layout.isFixedBufferCount()) {
      throw damaged(field, "has a type whose buffers this reader does not check");
    }
    boolean variable =
        layout.getBufferTypes().contains(BufferLayout.BufferType.OFFSET)
            && !(type instanceof ArrowType.List || type instanceof ArrowType.LargeList);
    long lastOffset = 0;
    for (BufferLayout layoutOfBuffer : layout.getBufferLayouts()) {
      if (buffer >= buffers.count()) {
        throw new DamagedBatch("it has fewer buffers than its schema asks for");
      }
      int index = buffer++;
      long bytes = buffers.length(index);
      long bits = length * layoutOfBuffer.getTypeBitWidth();
      switch (layoutOfBuffer.getType()) {
        case VALIDITY:
          if (bytes != 0) {
            need(field, "validity", bytes, (length + 7) / 8);
          } else if (nulls != 0 && nulls != length) {
            // Without bits only "none" and "all" can be told apart; Arrow Java would read the
            // absent bits past their end.
            throw damaged(
                field, "has " + nulls + " nulls among " + length + " values but no validity bits");
          }
          break;
        case OFFSET:
          lastOffset = offsets(field, index, length, layoutOfBuffer.getTypeBitWidth() / 8);
          break;
        case DATA:
          need(field, "data", bytes, variable ? lastOffset : (bits + 7) / 8);
          break;
        default:
          need(field, layoutOfBuffer.getType().getName(), bytes, (bits + 7) / 8);
          break;
      }
    }
    long childNeeds = lastOffset;
    if (type instanceof ArrowType.FixedSizeList) {
      childNeeds = length * ((ArrowType.FixedSizeList) type).getListSize();
    } else if (type instanceof ArrowType.Struct) {
      childNeeds = length;
    }
    if (field.getDictionary() == null) {
      for (Field child : field.getChildren()) {
        field(child, childNeeds);
      }
    }
  }

  /** Checks an offsets buffer of {@code width}-byte offsets; returns its last offset. */
  private long offsets(Field field, int index, long length, int width) throws IOException {
    if (length == 0) {
      return 0;
    }
    need(field, "offsets", buffers.length(index), (length + 1) * width);
    long first = buffers.offset(index, 0, width);
    long last = buffers.offset(index, length, width);
    if (first < 0 || last < first) {
      throw damaged(field, "has offsets from " + first + " to " + last);
    }
    return last;
  }

  private static void need(Field field, String what, long bytes, long needed) {
    if (bytes < needed) {
      throw damaged(
          field,
          "has a " + what + " buffer of " + bytes + " bytes where " + needed + " are needed");
    }
  }

  private static DamagedBatch damaged(Field field, String what) {
    return new DamagedBatch("its field '" + field.getName() + "' " + what);
  }
}

package io.embednorm.arrow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The raw buffers of every column of every record batch of an Arrow IPC file or stream, read from
 * the IPC layout itself (the file's footer blocks, or the stream's messages in order, then each
 * batch's field nodes and buffer descriptors) and copied out as bytes, with no Arrow vector or
 * allocator involved: a damaged column that Arrow Java cannot load still reads here. Reads the
 * layout as Arrow Java's readers do (the footer's schema and blocks for a file, a body where its
 * block's metadata ends); throws {@link IllegalStateException} where that layout is itself
 * unreadable.
 */
final class IpcBuffers {
  private static final byte[] FILE_MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);
  private static final int CONTINUATION = 0xFFFFFFFF;

  /** A field node as written: its length and null count. */
  record Node(long length, long nullCount) {}

  /** One top-level column of one batch: its nodes and buffers depth first, as in the batch. */
  record Column(Field field, List<Node> nodes, List<byte[]> buffers) {}

  final Schema schema;

  /** Each record batch's columns, in the order Arrow Java reads the batches. */
  final List<List<Column>> batches = new ArrayList<>();

  /** The values of each dictionary, by id, from its last dictionary batch. */
  final Map<Long, Column> dictionaries = new LinkedHashMap<>();

  private final byte[] bytes;
  private final ByteBuffer all;

  private IpcBuffers(byte[] bytes) {
    this.bytes = bytes;
    this.all = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    this.schema = isFile() ? readFile() : readStream();
  }

  /** Reads the file or stream at {@code path}. */
  static IpcBuffers read(Path path) throws IOException {
    return new IpcBuffers(Files.readAllBytes(path));
  }

  private boolean isFile() {
    return bytes.length >= FILE_MAGIC.length
        && Arrays.equals(bytes, 0, FILE_MAGIC.length, FILE_MAGIC, 0, FILE_MAGIC.length);
  }

  private Schema readFile() {
    int footerLength = all.getInt(bytes.length - 10);
    Footer footer = Footer.getRootAsFooter(slice(bytes.length - 10L - footerLength, footerLength));
    Schema fileSchema = Schema.convertSchema(footer.schema());
    Block block = new Block();
    for (int index = 0; index < footer.dictionariesLength(); index++) {
      footer.dictionaries(block, index);
      Message message = message(block.offset(), block.metaDataLength());
      dictionary(fileSchema, message, block.offset() + block.metaDataLength(), block.bodyLength());
    }
    for (int index = 0; index < footer.recordBatchesLength(); index++) {
      footer.recordBatches(block, index);
      Message message = message(block.offset(), block.metaDataLength());
      if (message.headerType() != MessageHeader.RecordBatch) {
        throw new IllegalStateException("block " + index + " holds no record batch");
      }
      batches.add(
          columns(
              fileSchema.getFields(),
              (RecordBatch) message.header(new RecordBatch()),
              block.offset() + block.metaDataLength(),
              block.bodyLength()));
    }
    return fileSchema;
  }

  /** Reads messages as Arrow Java's stream reader does: fewer than 4 bytes left is the end. */
  private Schema readStream() {
    Schema streamSchema = null;
    long position = 0;
    while (position + Integer.BYTES <= bytes.length) {
      int length = all.getInt((int) position);
      long prefix = Integer.BYTES;
      if (length == CONTINUATION) {
        length = all.getInt((int) position + Integer.BYTES);
        prefix += Integer.BYTES;
      }
      if (length == 0) {
        break;
      }
      Message message = Message.getRootAsMessage(slice(position + prefix, length));
      long body = position + prefix + length;
      if (streamSchema == null) {
        if (message.headerType() != MessageHeader.Schema) {
          throw new IllegalStateException("the stream starts with no schema");
        }
        streamSchema =
            Schema.convertSchema(
                (org.apache.arrow.flatbuf.Schema)
                    message.header(new org.apache.arrow.flatbuf.Schema()));
      } else if (message.headerType() == MessageHeader.DictionaryBatch) {
        dictionary(streamSchema, message, body, message.bodyLength());
      } else if (message.headerType() == MessageHeader.RecordBatch) {
        batches.add(
            columns(
                streamSchema.getFields(),
                (RecordBatch) message.header(new RecordBatch()),
                body,
                message.bodyLength()));
      } else {
        throw new IllegalStateException("a message of type " + message.headerType());
      }
      position = body + message.bodyLength();
    }
    if (streamSchema == null) {
      throw new IllegalStateException("the stream has no schema");
    }
    return streamSchema;
  }

  /** The message of a file block: its metadata after the length prefix. */
  private Message message(long offset, int metadataLength) {
    int prefix = all.getInt((int) offset) == CONTINUATION ? 8 : 4;
    return Message.getRootAsMessage(slice(offset + prefix, metadataLength - prefix));
  }

  private void dictionary(Schema fileSchema, Message message, long body, long bodyLength) {
    if (message.headerType() != MessageHeader.DictionaryBatch) {
      throw new IllegalStateException("a dictionary block holds no dictionary batch");
    }
    DictionaryBatch batch = (DictionaryBatch) message.header(new DictionaryBatch());
    if (batch.isDelta()) {
      throw new IllegalStateException("dictionary " + batch.id() + " has a delta batch");
    }
    Field values = dictionaryValues(fileSchema.getFields(), batch.id());
    if (values == null) {
      throw new IllegalStateException("dictionary " + batch.id() + " is not in the schema");
    }
    dictionaries.put(batch.id(), columns(List.of(values), batch.data(), body, bodyLength).get(0));
  }

  /** The field of dictionary {@code id}'s values, or null. */
  private static Field dictionaryValues(List<Field> fields, long id) {
    for (Field field : fields) {
      if (field.getDictionary() != null && field.getDictionary().getId() == id) {
        return new Field(
            field.getName(),
            new org.apache.arrow.vector.types.pojo.FieldType(true, field.getType(), null),
            field.getChildren());
      }
      Field child = dictionaryValues(field.getChildren(), id);
      if (child != null) {
        return child;
      }
    }
    return null;
  }

  /** The columns of {@code batch}, its body at {@code body}. */
  private List<Column> columns(List<Field> fields, RecordBatch batch, long body, long bodyLength) {
    int[] cursor = new int[2];
    List<Column> columns = new ArrayList<>();
    for (Field field : fields) {
      Column column = new Column(field, new ArrayList<>(), new ArrayList<>());
      walk(field, batch, body, bodyLength, cursor, column);
      columns.add(column);
    }
    return columns;
  }

  /** Reads the node and buffers of {@code field}, then its children's; advances the cursor. */
  private void walk(
      Field field, RecordBatch batch, long body, long bodyLength, int[] cursor, Column into) {
    if (cursor[0] >= batch.nodesLength()) {
      throw new IllegalStateException("a batch has too few field nodes");
    }
    FieldNode node = batch.nodes(cursor[0]++);
    into.nodes().add(new Node(node.length(), node.nullCount()));
    ArrowType type =
        field.getDictionary() != null ? field.getDictionary().getIndexType() : field.getType();
    int count = TypeLayout.getTypeLayout(type).getBufferLayouts().size();
    for (int index = 0; index < count; index++) {
      if (cursor[1] >= batch.buffersLength()) {
        throw new IllegalStateException("a batch has too few buffers");
      }
      Buffer buffer = batch.buffers(cursor[1]++);
      if (buffer.offset() < 0
          || buffer.length() < 0
          || buffer.offset() + buffer.length() > bodyLength
          || body + buffer.offset() + buffer.length() > bytes.length) {
        throw new IllegalStateException("a buffer lies outside its body");
      }
      int start = (int) (body + buffer.offset());
      into.buffers().add(Arrays.copyOfRange(bytes, start, start + (int) buffer.length()));
    }
    if (field.getDictionary() == null) {
      for (Field child : field.getChildren()) {
        walk(child, batch, body, bodyLength, cursor, into);
      }
    }
  }

  private ByteBuffer slice(long position, long length) {
    if (position < 0 || length < 0 || position + length > bytes.length) {
      throw new IllegalStateException(
          length + " bytes at " + position + " lie outside the " + bytes.length + " bytes");
    }
    return all.duplicate()
        .position((int) position)
        .limit((int) (position + length))
        .slice()
        .order(ByteOrder.LITTLE_ENDIAN);
  }
}

package io.embednorm.arrow.internal;

import io.embednorm.engine.ElementType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.Field;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.FixedSizeList;
import org.apache.arrow.flatbuf.FloatingPoint;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;
import org.apache.arrow.flatbuf.Precision;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flatbuf.Schema;
import org.apache.arrow.flatbuf.Type;
import org.apache.arrow.vector.ipc.message.ArrowFooter;
import org.apache.arrow.vector.types.Types;

/**
 * The layout of one column of an Arrow IPC file (the random-access format), read from the footer
 * and the record batches' metadata with Arrow's flatbuffer classes: no allocator, no data read.
 * Throws {@link MappedPathUnavailable} for anything the mapped path does not handle, including
 * files that are damaged (the record-batch path then reports those).
 */
final class IpcFileLayout {
  private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

  /** The magic and its padding at the start; the footer length and the magic at the end. */
  private static final int HEAD_BYTES = 8;

  private static final int TAIL_BYTES = Integer.BYTES + 6;
  private static final int CONTINUATION = 0xFFFFFFFF;

  private final long size;
  private final String column;
  private final ElementType type;
  private final int width;
  private final List<ColumnBatch> batches;

  private IpcFileLayout(
      long size, String column, ElementType type, int width, List<ColumnBatch> batches) {
    this.size = size;
    this.column = column;
    this.type = type;
    this.width = width;
    this.batches = batches;
  }

  /** Reads the layout of {@code column} of the file open in {@code channel}. */
  static IpcFileLayout read(FileChannel channel, String column) throws IOException {
    long size = channel.size();
    if (size < HEAD_BYTES + TAIL_BYTES
        || !isMagic(read(channel, 0, MAGIC.length))
        || !isMagic(read(channel, size - MAGIC.length, MAGIC.length))) {
      throw new MappedPathUnavailable("the input is not in the Arrow IPC file format");
    }
    int footerLength = read(channel, size - TAIL_BYTES, Integer.BYTES).getInt(0);
    if (footerLength <= 0 || footerLength > size - HEAD_BYTES - TAIL_BYTES) {
      throw new MappedPathUnavailable("the file's footer length " + footerLength + " is invalid");
    }
    Footer footer =
        Footer.getRootAsFooter(read(channel, size - TAIL_BYTES - footerLength, footerLength));
    Schema schema = footer.schema();
    if (schema == null || footer.version() < MetadataVersion.V4) {
      throw new MappedPathUnavailable("the file's metadata is older than version 4");
    }
    // The path copies the footer as it is: Arrow must be able to read all of it (schema and
    // metadata included), as it does in the record-batch path's reader.
    List<org.apache.arrow.vector.types.pojo.Field> fields =
        new ArrowFooter(footer).getSchema().getFields();
    checkVectorTypes(fields);
    if (schema.endianness() != Endianness.Little) {
      throw new MappedPathUnavailable("the file is big-endian");
    }
    int columnIndex = columnIndex(schema, column);
    Field field = schema.fields(columnIndex);
    ElementType type = elementType(field, column);
    int width =
        field.typeType() == Type.FixedSizeList
            ? ((FixedSizeList) field.type(new FixedSizeList())).listSize()
            : -1;
    if (width == 0) {
      throw new MappedPathUnavailable("column '" + column + "' holds lists of width 0");
    }
    FieldPositions positions = FieldPositions.of(schema, columnIndex);
    List<ColumnBatch> batches = new ArrayList<>(footer.recordBatchesLength());
    long firstRow = 0;
    List<Region> blocks = new ArrayList<>();
    blocks.add(new Region(0, HEAD_BYTES));
    blocks.add(new Region(size - TAIL_BYTES - footerLength, TAIL_BYTES + (long) footerLength));
    Block block = new Block();
    for (int index = 0; index < footer.dictionariesLength(); index++) {
      new BatchReader(channel, size, index, footer.dictionaries(block, index))
          .checkDictionary(fields);
      blocks.add(region(block));
    }
    for (int index = 0; index < footer.recordBatchesLength(); index++) {
      ColumnBatch batch =
          new BatchReader(channel, size, index, footer.recordBatches(block, index))
              .read(fields, positions, width, firstRow);
      blocks.add(region(block));
      batches.add(batch);
      firstRow += batch.rows();
    }
    checkApart(blocks);
    return new IpcFileLayout(size, column, type, width, batches);
  }

  /** The bytes of a block, metadata and body, once {@link BatchReader} has checked it. */
  private static Region region(Block block) {
    return new Region(block.offset(), (long) block.metaDataLength() + block.bodyLength());
  }

  /**
   * Checks that no two blocks (nor a block and the magic or the footer) share a byte: a batch's
   * values are written in place, so another block holding those bytes would come out changed, while
   * the record-batch path reads each block on its own and writes them apart.
   */
  private static void checkApart(List<Region> blocks) {
    blocks.sort(Comparator.comparingLong(Region::position));
    long end = 0;
    for (Region block : blocks) {
      if (block.position() < end) {
        throw new MappedPathUnavailable(
            "the file has blocks that overlap one another or its footer");
      }
      end = Math.max(end, block.end());
    }
  }

  long size() {
    return size;
  }

  String column() {
    return column;
  }

  ElementType type() {
    return type;
  }

  /** The width of every row, or -1 for a List column (rows given by offsets). */
  int width() {
    return width;
  }

  List<ColumnBatch> batches() {
    return batches;
  }

  /** E.g. {@code FixedSizeList<float32>(768)} or {@code List<float16>}. */
  String describeColumn() {
    String element = type.name().toLowerCase(java.util.Locale.ROOT);
    return width >= 0 ? "FixedSizeList<" + element + ">(" + width + ")" : "List<" + element + ">";
  }

  /**
   * Refuses fields that Arrow reads as a schema but cannot make vectors of (a dictionary's index of
   * 174 bits, say): the record-batch path's reader makes a vector of every field and fails there,
   * and an output copied on this path would fail for whoever reads it.
   */
  private static void checkVectorTypes(List<org.apache.arrow.vector.types.pojo.Field> fields) {
    for (org.apache.arrow.vector.types.pojo.Field field : fields) {
      try {
        Types.getMinorTypeForArrowType(field.getType());
        if (field.getDictionary() != null) {
          Types.getMinorTypeForArrowType(field.getDictionary().getIndexType());
        }
      } catch (RuntimeException unreadable) {
        throw new MappedPathUnavailable(
            "column '" + field.getName() + "' has a type Arrow cannot read", unreadable);
      }
      checkVectorTypes(field.getChildren());
    }
  }

  private static int columnIndex(Schema schema, String column) {
    for (int index = 0; index < schema.fieldsLength(); index++) {
      if (column.equals(schema.fields(index).name())) {
        return index;
      }
    }
    throw new MappedPathUnavailable("the file has no column '" + column + "'");
  }

  private static ElementType elementType(Field field, String column) {
    byte list = field.typeType();
    Field child = field.childrenLength() == 1 ? field.children(0) : null;
    if (field.dictionary() == null
        && (list == Type.FixedSizeList || list == Type.List)
        && child != null
        && child.dictionary() == null
        && child.typeType() == Type.FloatingPoint) {
      switch (((FloatingPoint) child.type(new FloatingPoint())).precision()) {
        case Precision.HALF:
          return ElementType.FLOAT16;
        case Precision.SINGLE:
          return ElementType.FLOAT32;
        case Precision.DOUBLE:
          return ElementType.FLOAT64;
        default:
          break;
      }
    }
    throw new MappedPathUnavailable(
        "column '" + column + "' is not a FixedSizeList or List of floating point numbers");
  }

  /** The values of dictionary {@code id} as a field, or null when no field uses it. */
  private static org.apache.arrow.vector.types.pojo.Field dictionaryField(
      List<org.apache.arrow.vector.types.pojo.Field> fields, long id) {
    for (org.apache.arrow.vector.types.pojo.Field field : fields) {
      if (field.getDictionary() != null && field.getDictionary().getId() == id) {
        return new org.apache.arrow.vector.types.pojo.Field(
            field.getName(),
            org.apache.arrow.vector.types.pojo.FieldType.nullable(field.getType()),
            field.getChildren());
      }
      org.apache.arrow.vector.types.pojo.Field child = dictionaryField(field.getChildren(), id);
      if (child != null) {
        return child;
      }
    }
    return null;
  }

  private static boolean isMagic(ByteBuffer bytes) {
    return bytes.equals(ByteBuffer.wrap(MAGIC));
  }

  /** {@code length} bytes at {@code position}, little-endian, in a heap buffer. */
  static ByteBuffer read(FileChannel channel, long position, int length) throws IOException {
    ByteBuffer bytes = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    while (bytes.hasRemaining()) {
      if (channel.read(bytes, position + bytes.position()) < 0) {
        throw new MappedPathUnavailable("the file ends within its metadata");
      }
    }
    return bytes.flip();
  }

  /** Reads one record batch's metadata: the column's nodes and buffers. */
  private static final class BatchReader {
    private final FileChannel channel;
    private final long size;
    private final int index;
    private final Block block;

    BatchReader(FileChannel channel, long size, int index, Block block) {
      this.channel = channel;
      this.size = size;
      this.index = index;
      this.block = block;
    }

    /** The message of this block, its metadata checked as Arrow Java reads it. */
    private Message message() throws IOException {
      long body = block.offset() + block.metaDataLength();
      if (block.offset() < HEAD_BYTES
          || block.metaDataLength() < HEAD_BYTES
          || block.bodyLength() < 0
          || body + block.bodyLength() > size) {
        throw unavailable("lies outside the file");
      }
      ByteBuffer metadata = IpcFileLayout.read(channel, block.offset(), block.metaDataLength());
      int start = metadata.getInt(0) == CONTINUATION ? HEAD_BYTES : Integer.BYTES;
      int length = metadata.getInt(start - Integer.BYTES);
      if (length <= 0 || start + length > metadata.limit()) {
        throw unavailable("has a damaged metadata length");
      }
      Message message = Message.getRootAsMessage(metadata.position(start));
      RecordBatchCheck.readFields(message);
      if (message.bodyLength() != block.bodyLength()) {
        throw unavailable(
            "says its body has " + message.bodyLength() + " bytes, not " + block.bodyLength());
      }
      return message;
    }

    /**
     * Checks a dictionary batch, which the path copies as it is, as the record-batch path's reader
     * would.
     */
    void checkDictionary(List<org.apache.arrow.vector.types.pojo.Field> fields) throws IOException {
      Message message = message();
      DictionaryBatch dictionary =
          message.headerType() == MessageHeader.DictionaryBatch
              ? (DictionaryBatch) message.header(new DictionaryBatch())
              : null;
      RecordBatch data = dictionary == null ? null : dictionary.data();
      org.apache.arrow.vector.types.pojo.Field field =
          dictionary == null ? null : dictionaryField(fields, dictionary.id());
      if (data == null || field == null) {
        throw new MappedPathUnavailable("dictionary batch " + index + " is damaged");
      }
      String problem = RecordBatchCheck.problem(data, block.bodyLength());
      if (problem != null) {
        throw new MappedPathUnavailable("dictionary batch " + index + " is damaged: " + problem);
      }
      BatchBuffersCheck.check(
          List.of(field), data, channel, block.offset() + block.metaDataLength());
    }

    ColumnBatch read(
        List<org.apache.arrow.vector.types.pojo.Field> fields,
        FieldPositions positions,
        int width,
        long firstRow)
        throws IOException {
      long body = block.offset() + block.metaDataLength();
      Message message = message();
      if (message.headerType() != MessageHeader.RecordBatch) {
        throw unavailable("is not a record batch message");
      }
      RecordBatch batch = (RecordBatch) message.header(new RecordBatch());
      if (batch.compression() != null) {
        throw unavailable("is compressed");
      }
      // The path copies the other columns as they are: they must be as whole as the record-batch
      // path's reader requires.
      String problem = RecordBatchCheck.problem(batch, block.bodyLength());
      if (problem != null) {
        throw unavailable("is damaged: " + problem);
      }
      BatchBuffersCheck.check(fields, batch, channel, body);
      int extraBuffers = width >= 0 ? 0 : 1;
      if (batch.nodesLength() < positions.node() + 2
          || batch.buffersLength() < positions.buffer() + 3 + extraBuffers) {
        throw unavailable("has fewer field nodes or buffers than the schema asks for");
      }
      if (batch.length() > Integer.MAX_VALUE) {
        throw unavailable("has " + batch.length() + " rows, more than a vector holds");
      }
      int rows = (int) batch.length();
      FieldNode list = batch.nodes(positions.node());
      FieldNode elements = batch.nodes(positions.node() + 1);
      if (list.length() != rows || (width >= 0 && elements.length() != (long) rows * width)) {
        throw unavailable("has column lengths that do not match its rows");
      }
      int nullCountPosition =
          ((NodePositions) message.header(new NodePositions()))
              .nullCountPosition(positions.node() + 1);
      int buffer = positions.buffer();
      checkWrittenApart(batch, body, buffer + 1 + extraBuffers, buffer + 2 + extraBuffers);
      return new ColumnBatch(
          index,
          firstRow,
          rows,
          region(batch, buffer, body),
          list.nullCount(),
          width >= 0 ? null : region(batch, buffer + 1, body),
          region(batch, buffer + 1 + extraBuffers, body),
          elements.nullCount(),
          block.offset() + nullCountPosition,
          elements.length(),
          region(batch, buffer + 2 + extraBuffers, body),
          block.offset());
    }

    /**
     * Checks that the buffers the mapped path may write, the column's element validity and values,
     * share no byte with each other or with any other buffer of the batch: they are written in
     * place in a copy of the file, so a shared byte would change the other buffer too (the rows'
     * validity, another column), while the record-batch path writes every buffer apart.
     */
    private void checkWrittenApart(RecordBatch batch, long body, int elementValidity, int values) {
      for (int written : new int[] {values, elementValidity}) {
        Region region = region(batch, written, body);
        for (int other = 0; other < batch.buffersLength(); other++) {
          if (other != written && region.overlaps(region(batch, other, body))) {
            throw unavailable(
                "has buffers "
                    + Math.min(written, other)
                    + " and "
                    + Math.max(written, other)
                    + " sharing bytes, where the column's "
                    + (written == values ? "values are" : "element validity is")
                    + " written");
          }
        }
      }
    }

    private Region region(RecordBatch batch, int buffer, long body) {
      Buffer described = batch.buffers(buffer);
      if (described.offset() < 0
          || described.length() < 0
          || described.offset() + described.length() > block.bodyLength()) {
        throw unavailable("has a buffer outside its body");
      }
      return new Region(body + described.offset(), described.length());
    }

    private MappedPathUnavailable unavailable(String what) {
      return new MappedPathUnavailable("record batch " + index + " " + what);
    }
  }
}

package io.embednorm.arrow.internal;

import org.apache.arrow.flatbuf.Field;
import org.apache.arrow.flatbuf.Schema;
import org.apache.arrow.flatbuf.Type;

/**
 * Finds a top-level column's first field node and first buffer in a record batch: nodes and buffers
 * follow the schema's fields depth first, a node per field and a type's fixed number of buffers
 * each (Arrow columnar format, metadata version 4 and 5).
 *
 * @param node the index of the column's field node
 * @param buffer the index of the column's first buffer
 */
record FieldPositions(int node, int buffer) {

  /** The positions of top-level field {@code column} of {@code schema}. */
  static FieldPositions of(Schema schema, int column) {
    FieldPositions before = new FieldPositions(0, 0);
    for (int index = 0; index < column; index++) {
      before = before.after(schema.fields(index), schema.fields(column).name());
    }
    return before;
  }

  /** The positions of the field that follows {@code field} (and its children), depth first. */
  private FieldPositions after(Field field, String column) {
    if (field.dictionary() != null) {
      // Validity and indices; the dictionary's own fields are not in the record batch.
      return new FieldPositions(node + 1, buffer + 2);
    }
    FieldPositions next = new FieldPositions(node + 1, buffer + buffers(field.typeType(), column));
    for (int child = 0; child < field.childrenLength(); child++) {
      next = next.after(field.children(child), column);
    }
    return next;
  }

  private static int buffers(byte type, String column) {
    switch (type) {
      case Type.Null:
        return 0;
      case Type.FixedSizeList:
      case Type.Struct_:
        return 1;
      case Type.Int:
      case Type.FloatingPoint:
      case Type.Bool:
      case Type.Decimal:
      case Type.Date:
      case Type.Time:
      case Type.Timestamp:
      case Type.Interval:
      case Type.Duration:
      case Type.FixedSizeBinary:
      case Type.List:
      case Type.LargeList:
      case Type.Map:
        return 2;
      case Type.Binary:
      case Type.Utf8:
      case Type.LargeBinary:
      case Type.LargeUtf8:
        return 3;
      default:
        throw new MappedPathUnavailable(
            "a column before '"
                + column
                + "' holds the type "
                + (type >= 0 && type < Type.names.length ? Type.name(type) : "#" + type)
                + ", whose buffers this path does not count");
    }
  }
}

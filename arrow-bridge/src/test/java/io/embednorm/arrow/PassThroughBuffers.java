package io.embednorm.arrow;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Compares the columns a normalization passes through (every top-level column but the normalized
 * one, and the dictionaries they use) of an input and its output, buffer by buffer ({@link
 * IpcBuffers}). {@link #exact} asks every node and every buffer's bytes to be the input's, as a
 * copy of the file gives them; {@link #asArrowJavaReadsThem} asks for the bytes the column's rows
 * are made of, as Arrow Java's reader loads them and its writer writes them back: each node's
 * length, the validity bits of its rows (read from the bitmap whenever the bitmap has bytes, all
 * valid or all null by the null count when it has none), all of its offsets, and the data the rows
 * span (from byte 0, as Arrow Java writes it).
 */
final class PassThroughBuffers {
  private final List<String> differences = new ArrayList<>();
  private final boolean exact;

  private PassThroughBuffers(boolean exact) {
    this.exact = exact;
  }

  /** What differs between the pass-through buffers, byte for byte; empty when nothing does. */
  static List<String> exact(IpcBuffers input, IpcBuffers output, String normalized) {
    return new PassThroughBuffers(true).compare(input, output, normalized);
  }

  /** What differs between the rows the pass-through buffers hold; empty when nothing does. */
  static List<String> asArrowJavaReadsThem(IpcBuffers input, IpcBuffers output, String normalized) {
    return new PassThroughBuffers(false).compare(input, output, normalized);
  }

  private List<String> compare(IpcBuffers input, IpcBuffers output, String normalized) {
    List<Field> fields = input.schema.getFields();
    if (!fields.equals(output.schema.getFields())) {
      differences.add("the schema is " + output.schema + ", not " + input.schema);
      return differences;
    }
    if (input.batches.size() != output.batches.size()) {
      differences.add(
          output.batches.size() + " record batches where the input has " + input.batches.size());
      return differences;
    }
    int skipped = normalizedIndex(fields, normalized);
    for (int batch = 0; batch < input.batches.size(); batch++) {
      for (int column = 0; column < fields.size(); column++) {
        if (column != skipped) {
          column(
              input.batches.get(batch).get(column),
              output.batches.get(batch).get(column),
              "record batch " + batch + " column '" + fields.get(column).getName() + "'");
        }
      }
    }
    // Arrow Java's writer writes the dictionaries with the first record batch: an output of no
    // batches has none, and no row that needs one.
    for (int column = 0; column < fields.size() && !input.batches.isEmpty(); column++) {
      Field field = fields.get(column);
      if (column != skipped && field.getDictionary() != null) {
        long id = field.getDictionary().getId();
        IpcBuffers.Column in = input.dictionaries.get(id);
        IpcBuffers.Column out = output.dictionaries.get(id);
        if (in == null && out == null) {
          continue;
        }
        if (in == null || out == null) {
          differences.add(
              "dictionary " + id + " is in " + (in == null ? "the output" : "the input") + " only");
        } else {
          column(in, out, "dictionary " + id);
        }
      }
    }
    return differences;
  }

  /** The index Arrow Java and the mapped path normalize: the first column of that name. */
  private static int normalizedIndex(List<Field> fields, String normalized) {
    for (int index = 0; index < fields.size(); index++) {
      if (fields.get(index).getName().equals(normalized)) {
        return index;
      }
    }
    return -1;
  }

  private void column(IpcBuffers.Column in, IpcBuffers.Column out, String where) {
    if (exact) {
      if (!in.nodes().equals(out.nodes())) {
        differences.add(where + ": field nodes " + out.nodes() + ", not " + in.nodes());
      }
      for (int buffer = 0; buffer < in.buffers().size(); buffer++) {
        if (!Arrays.equals(in.buffers().get(buffer), out.buffers().get(buffer))) {
          differences.add(where + ": buffer " + buffer + " " + firstDifference(in, out, buffer));
        }
      }
      return;
    }
    new Walk(in, out, where).field(in.field());
  }

  private static String firstDifference(IpcBuffers.Column in, IpcBuffers.Column out, int buffer) {
    byte[] a = in.buffers().get(buffer);
    byte[] b = out.buffers().get(buffer);
    int at = Arrays.mismatch(a, b);
    return "has "
        + b.length
        + " bytes where the input has "
        + a.length
        + (at < Math.min(a.length, b.length) ? ", first differing at byte " + at : "");
  }

  /** Walks one column's nodes and buffers, depth first, comparing what its rows are made of. */
  private final class Walk {
    private final IpcBuffers.Column in;
    private final IpcBuffers.Column out;
    private final String where;
    private int node;
    private int buffer;

    Walk(IpcBuffers.Column in, IpcBuffers.Column out, String where) {
      this.in = in;
      this.out = out;
      this.where = where;
    }

    void field(Field field) {
      IpcBuffers.Node a = in.nodes().get(node);
      IpcBuffers.Node b = out.nodes().get(node);
      String at = where + " node " + node++;
      if (a.length() != b.length()) {
        differences.add(at + ": length " + b.length() + ", not " + a.length());
        return;
      }
      int rows = (int) a.length();
      ArrowType type =
          field.getDictionary() != null ? field.getDictionary().getIndexType() : field.getType();
      boolean variable =
          type instanceof ArrowType.Utf8
              || type instanceof ArrowType.Binary
              || type instanceof ArrowType.LargeUtf8
              || type instanceof ArrowType.LargeBinary;
      long lastOffset = 0;
      for (BufferLayout layout : TypeLayout.getTypeLayout(type).getBufferLayouts()) {
        byte[] x = in.buffers().get(buffer);
        byte[] y = out.buffers().get(buffer);
        String what = at + " buffer " + buffer++ + " (" + layout.getType().getName() + ")";
        int width = layout.getTypeBitWidth();
        switch (layout.getType()) {
          case VALIDITY:
            BitSet expected = validity(a, x, rows);
            BitSet actual = validity(b, y, rows);
            if (expected == null) {
              differences.add(what + ": the input's bits cannot be read, yet it was copied");
            } else if (!expected.equals(actual)) {
              differences.add(what + ": valid rows " + actual + ", not " + expected);
            }
            break;
          case OFFSET:
            int bytes = rows == 0 ? 0 : (rows + 1) * width / 8;
            prefix(what, x, y, bytes);
            if (rows > 0 && x.length >= bytes) {
              ByteBuffer offsets = ByteBuffer.wrap(x).order(ByteOrder.LITTLE_ENDIAN);
              lastOffset = width == 64 ? offsets.getLong(bytes - 8) : offsets.getInt(bytes - 4);
            }
            break;
          case DATA:
            if (width == 1) {
              bits(what, x, y, rows);
            } else {
              prefix(what, x, y, variable ? lastOffset : (long) rows * width / 8);
            }
            break;
          default:
            prefix(what, x, y, (long) rows * width / 8);
            break;
        }
      }
      if (field.getDictionary() == null) {
        for (Field child : field.getChildren()) {
          field(child);
        }
      }
    }

    /** The valid rows as Arrow Java loads them, or null where it cannot. */
    private BitSet validity(IpcBuffers.Node node, byte[] bitmap, int rows) {
      BitSet valid = new BitSet(rows);
      if (bitmap.length == 0) {
        if (node.nullCount() == 0) {
          valid.set(0, rows);
        } else if (node.nullCount() != rows) {
          return null;
        }
        return valid;
      }
      if (bitmap.length < (rows + 7) / 8) {
        return null;
      }
      for (int row = 0; row < rows; row++) {
        if ((bitmap[row / 8] >> (row % 8) & 1) != 0) {
          valid.set(row);
        }
      }
      return valid;
    }

    private void bits(String what, byte[] x, byte[] y, int count) {
      if (x.length * 8L < count || y.length * 8L < count) {
        differences.add(what + ": shorter than its " + count + " bits");
        return;
      }
      for (int bit = 0; bit < count; bit++) {
        if ((x[bit / 8] >> (bit % 8) & 1) != (y[bit / 8] >> (bit % 8) & 1)) {
          differences.add(what + ": bit " + bit + " differs");
          return;
        }
      }
    }

    private void prefix(String what, byte[] x, byte[] y, long count) {
      if (count > x.length || count > y.length) {
        differences.add(
            what
                + ": "
                + y.length
                + " bytes (input "
                + x.length
                + ") where the rows span "
                + count);
        return;
      }
      int at = Arrays.mismatch(x, 0, (int) count, y, 0, (int) count);
      if (at >= 0) {
        differences.add(what + ": byte " + at + " of " + count + " differs");
      }
    }
  }
}

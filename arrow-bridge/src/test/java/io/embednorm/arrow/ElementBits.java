package io.embednorm.arrow;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;

/** The bits of a list column's elements, for tests that compare outputs bit for bit. */
final class ElementBits {
  private ElementBits() {}

  static byte[] elementBytes(FieldVector vector) {
    FieldVector elements = ListColumn.elementsOf(vector);
    ArrowBuf data = elements.getDataBuffer();
    byte[] bytes = new byte[elements.getValueCount() * ListColumn.of(vector).type().byteWidth()];
    data.getBytes(0, bytes);
    return bytes;
  }

  /**
   * The element bytes with the lowest bit of every element of every valid row flipped: what the
   * tests' GPU engines give where the CPU engine gives {@code vector}.
   */
  static byte[] lowestBitsFlipped(FieldVector vector) {
    byte[] bytes = elementBytes(vector);
    int byteWidth = ListColumn.of(vector).type().byteWidth();
    for (int row = 0; row < vector.getValueCount(); row++) {
      if (vector.isNull(row)) {
        continue;
      }
      int start;
      int end;
      if (vector instanceof FixedSizeListVector fixed) {
        start = row * fixed.getListSize();
        end = start + fixed.getListSize();
      } else {
        start = ((ListVector) vector).getElementStartIndex(row);
        end = ((ListVector) vector).getElementEndIndex(row);
      }
      for (int element = start; element < end; element++) {
        bytes[element * byteWidth] ^= 1;
      }
    }
    return bytes;
  }

  static List<Integer> nullRows(FieldVector vector) {
    List<Integer> rows = new ArrayList<>();
    for (int row = 0; row < vector.getValueCount(); row++) {
      if (vector.isNull(row)) {
        rows.add(row);
      }
    }
    return rows;
  }
}

package io.embednorm.arrow;

import io.embednorm.engine.ElementType;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.function.IntUnaryOperator;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.Float16;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.FloatingPointVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Builds and reads embedding columns for tests, element by element. Rows are {@code Double[]}: a
 * null row is a null array, a null element a null entry.
 */
final class TestColumns {
  /** What the elements under a null row of a FixedSizeList hold: never part of any result. */
  static final double NULL_ROW_FILLER = 12345.0;

  enum Layout {
    FIXED_SIZE_LIST,
    LIST
  }

  private TestColumns() {}

  static Field field(String name, Layout layout, ElementType type, int width) {
    Field element =
        new Field("item", FieldType.nullable(new ArrowType.FloatingPoint(precision(type))), null);
    ArrowType listType =
        layout == Layout.FIXED_SIZE_LIST
            ? new ArrowType.FixedSizeList(width)
            : ArrowType.List.INSTANCE;
    return new Field(name, FieldType.nullable(listType), List.of(element));
  }

  static FieldVector build(
      BufferAllocator allocator, String name, Layout layout, ElementType type, Double[][] rows) {
    int width = 0;
    for (Double[] row : rows) {
      if (row != null) {
        width = row.length;
      }
    }
    Field field = field(name, layout, type, width);
    return layout == Layout.FIXED_SIZE_LIST
        ? fixedSizeList(allocator, field, rows)
        : list(allocator, field, rows, 0, 0);
  }

  static FieldVector fixedSizeList(BufferAllocator allocator, Field field, Double[][] rows) {
    FixedSizeListVector vector = (FixedSizeListVector) field.createVector(allocator);
    try {
      int width = vector.getListSize();
      vector.setInitialCapacity(rows.length);
      vector.allocateNew();
      FloatingPointVector elements = (FloatingPointVector) vector.getDataVector();
      for (int row = 0; row < rows.length; row++) {
        if (rows[row] == null) {
          vector.setNull(row);
        } else {
          vector.setNotNull(row);
        }
        for (int column = 0; column < width; column++) {
          Double value = rows[row] == null ? Double.valueOf(NULL_ROW_FILLER) : rows[row][column];
          set(elements, row * width + column, value);
        }
      }
      vector.setValueCount(rows.length);
      return vector;
    } catch (RuntimeException | Error failure) {
      vector.close();
      throw failure;
    }
  }

  /**
   * A ListVector whose element vector starts with {@code leadingElements} unused elements (so that
   * offsets start there) and whose null rows span {@code nullRowWidth} filler elements.
   */
  static ListVector list(
      BufferAllocator allocator,
      Field field,
      Double[][] rows,
      int leadingElements,
      int nullRowWidth) {
    ListVector vector = (ListVector) field.createVector(allocator);
    try {
      vector.setInitialCapacity(rows.length);
      vector.allocateNew();
      while (vector.getValueCapacity() < rows.length) {
        vector.reAlloc();
      }
      FloatingPointVector elements = (FloatingPointVector) vector.getDataVector();
      int position = 0;
      for (; position < leadingElements; position++) {
        set(elements, position, -777.0);
      }
      ArrowBuf offsets = vector.getOffsetBuffer();
      offsets.setInt(0, position);
      for (int row = 0; row < rows.length; row++) {
        if (rows[row] == null) {
          for (int filler = 0; filler < nullRowWidth; filler++) {
            set(elements, position++, NULL_ROW_FILLER);
          }
        } else {
          BitVectorHelper.setBit(vector.getValidityBuffer(), row);
          for (Double value : rows[row]) {
            set(elements, position++, value);
          }
        }
        offsets.setInt((long) (row + 1) * ListVector.OFFSET_WIDTH, position);
      }
      vector.setLastSet(rows.length - 1);
      vector.setValueCount(rows.length);
      return vector;
    } catch (RuntimeException | Error failure) {
      vector.close();
      throw failure;
    }
  }

  private static void set(FloatingPointVector elements, int index, Double value) {
    if (value == null) {
      ((BaseFixedWidthVector) elements).setNull(index);
    } else if (elements instanceof Float2Vector) {
      ((Float2Vector) elements).setSafe(index, Float16.toFloat16(value.floatValue()));
    } else {
      elements.setSafeWithPossibleTruncate(index, value);
    }
  }

  private static double get(FloatingPointVector elements, int index) {
    if (elements instanceof Float2Vector) {
      return Float16.toFloat(((Float2Vector) elements).get(index));
    }
    return elements.getValueAsDouble(index);
  }

  /** The rows of a FixedSizeList or List vector. */
  static Double[][] read(FieldVector vector) {
    Double[][] rows = new Double[vector.getValueCount()][];
    FloatingPointVector elements = (FloatingPointVector) vector.getChildrenFromFields().get(0);
    for (int row = 0; row < rows.length; row++) {
      if (vector.isNull(row)) {
        continue;
      }
      int start;
      int end;
      if (vector instanceof FixedSizeListVector) {
        int width = ((FixedSizeListVector) vector).getListSize();
        start = row * width;
        end = start + width;
      } else {
        start = ((ListVector) vector).getElementStartIndex(row);
        end = ((ListVector) vector).getElementEndIndex(row);
      }
      rows[row] = new Double[end - start];
      for (int index = start; index < end; index++) {
        rows[row][index - start] = elements.isNull(index) ? null : get(elements, index);
      }
    }
    return rows;
  }

  /** Gaussian rows, rounded to {@code type}, with a scale and shift drawn per row. */
  static Double[][] gaussianRows(
      Random random, ElementType type, int rows, IntUnaryOperator widthOfRow) {
    Double[][] result = new Double[rows][];
    for (int row = 0; row < rows; row++) {
      double scale = 0.5 + 3.5 * random.nextDouble();
      double shift = 4 * random.nextDouble() - 2;
      result[row] = new Double[widthOfRow.applyAsInt(row)];
      for (int column = 0; column < result[row].length; column++) {
        result[row][column] = round(type, shift + scale * random.nextGaussian());
      }
    }
    return result;
  }

  /** {@code value} rounded to the nearest value of {@code type}. */
  static double round(ElementType type, double value) {
    switch (type) {
      case FLOAT16:
        return Float16.toFloat(Float16.toFloat16((float) value));
      case FLOAT32:
        return (float) value;
      default:
        return value;
    }
  }

  static FloatingPointPrecision precision(ElementType type) {
    switch (type) {
      case FLOAT16:
        return FloatingPointPrecision.HALF;
      case FLOAT32:
        return FloatingPointPrecision.SINGLE;
      default:
        return FloatingPointPrecision.DOUBLE;
    }
  }

  /** A VarChar vector of {@code values}; the caller closes it. */
  static VarCharVector varChars(BufferAllocator allocator, String name, String... values) {
    VarCharVector vector = new VarCharVector(name, allocator);
    vector.allocateNew(values.length);
    for (int row = 0; row < values.length; row++) {
      vector.setSafe(row, values[row].getBytes(StandardCharsets.UTF_8));
    }
    vector.setValueCount(values.length);
    return vector;
  }
}

package io.embednorm.spark.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.spark.internal.SparkArrays.ElementWidth;
import java.util.Random;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link SparkArrays#toSpark}: ragged random rows with null and empty rows come out of Arrow into a
 * reused on-heap vector bit for bit, batch after batch, and the general copy path does the same.
 */
class SparkArraysToSparkTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());

  private BufferAllocator allocator;

  @BeforeAll
  static void printSeed() {
    System.out.println("SparkArraysToSparkTest seed " + SEED);
  }

  @BeforeEach
  void openAllocator() {
    allocator = new RootAllocator();
  }

  /** Closing the allocator fails the test where a vector was left allocated. */
  @AfterEach
  void closeAllocator() {
    allocator.close();
  }

  @ParameterizedTest
  @EnumSource(ElementWidth.class)
  void copiesRaggedRowsNullRowsAndEmptyRowsBitForBitIntoAReusedVector(ElementWidth width) {
    Random random = new Random(SEED + width.ordinal());
    try (OnHeapColumnVector target = new OnHeapColumnVector(1, arrayOf(width))) {
      // A batch, then a smaller one (the first one's nulls must not stay), then a larger one.
      for (int rows : new int[] {200, 37, 1500}) {
        long[][] values = randomRows(random, rows, width);
        try (ListVector list = list(values, width, random.nextInt(3) * 5)) {
          assertThat(SparkArrays.toSpark(list, width, target)).isSameAs(target);
        }
        assertEqual(target, values, width, "seed " + SEED + ", batch of " + rows + " rows");
      }
    }
  }

  @Test
  void anEmptyBatchAfterANullRowLeavesNoNulls() {
    try (OnHeapColumnVector target = new OnHeapColumnVector(4, arrayOf(ElementWidth.FLOAT));
        ListVector list = list(new long[][] {null, {}}, ElementWidth.FLOAT, 0);
        ListVector empty = list(new long[0][], ElementWidth.FLOAT, 0)) {
      SparkArrays.toSpark(list, ElementWidth.FLOAT, target);
      SparkArrays.toSpark(empty, ElementWidth.FLOAT, target);
      assertThat(target.hasNull()).isFalse();
    }
  }

  @ParameterizedTest
  @EnumSource(ElementWidth.class)
  void theGeneralCopyPathCopiesBitForBitAcrossPieces(ElementWidth width) {
    Random random = new Random(SEED + 2 + width.ordinal());
    // More than one piece of the temporary array (2^17 elements), and a partial last one.
    long[][] values = {randomElements(random, 300_001, width)};
    try (ListVector list = list(values, width, 0);
        OnHeapColumnVector target = new OnHeapColumnVector(1, arrayOf(width))) {
      target.putArray(0, 0, values[0].length);
      target.arrayData().reserve(values[0].length);
      long address = list.getDataVector().getDataBuffer().memoryAddress();
      SparkArrays.copyThroughArrays(address, target.arrayData(), values[0].length, width);
      assertEqual(target, values, width, "seed " + SEED + ", general path");
    }
  }

  @Test
  void elementsOfAnotherWidthAreRefusedNamingTheColumn() {
    try (ListVector list = list(new long[][] {{1, 2}}, ElementWidth.FLOAT, 0);
        OnHeapColumnVector target = new OnHeapColumnVector(1, arrayOf(ElementWidth.DOUBLE))) {
      assertThatThrownBy(() -> SparkArrays.toSpark(list, ElementWidth.DOUBLE, target))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("Cannot copy column 'x' into Spark: its elements are 4 bytes wide, not 8");
    }
  }

  @Test
  void offsetsBeyondTheElementsAreRefused() {
    try (ListVector list = list(new long[][] {{1, 2, 3}}, ElementWidth.FLOAT, 0);
        OnHeapColumnVector target = new OnHeapColumnVector(1, arrayOf(ElementWidth.FLOAT))) {
      list.getDataVector().setValueCount(2);
      assertThatThrownBy(() -> SparkArrays.toSpark(list, ElementWidth.FLOAT, target))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "Cannot copy column 'x' into Spark: its rows end at element 3 but its element vector"
                  + " holds 2");
    }
  }

  /**
   * Rows of 0 to 40 elements, one in eight null, as raw bits: any bit pattern, so NaNs with
   * payloads among them.
   */
  private static long[][] randomRows(Random random, int rows, ElementWidth width) {
    long[][] values = new long[rows][];
    for (int row = 0; row < rows; row++) {
      values[row] =
          random.nextInt(8) == 0 ? null : randomElements(random, random.nextInt(41), width);
    }
    return values;
  }

  /**
   * Random bit patterns; NaNs quiet, since a signalling NaN may come back quiet from a float read,
   * which is not the copy's doing.
   */
  private static long[] randomElements(Random random, int count, ElementWidth width) {
    long[] bits = new long[count];
    for (int i = 0; i < count; i++) {
      if (width == ElementWidth.FLOAT) {
        int value = random.nextInt();
        bits[i] =
            (Float.isNaN(Float.intBitsToFloat(value)) ? value | 0x0040_0000 : value) & 0xFFFF_FFFFL;
      } else {
        long value = random.nextLong();
        bits[i] =
            Double.isNaN(Double.longBitsToDouble(value)) ? value | 0x0008_0000_0000_0000L : value;
      }
    }
    return bits;
  }

  /**
   * A list vector of {@code values} (null rows null, of no elements) whose offsets start at {@code
   * base}, after that many unused elements, as a slice of a larger vector would.
   */
  private ListVector list(long[][] values, ElementWidth width, int base) {
    ListVector list = ListVector.empty("x", allocator);
    try {
      list.addOrGetVector(
          FieldType.nullable(
              new ArrowType.FloatingPoint(
                  width == ElementWidth.FLOAT
                      ? FloatingPointPrecision.SINGLE
                      : FloatingPointPrecision.DOUBLE)));
      list.setInitialCapacity(Math.max(values.length, 1));
      list.allocateNew();
      int total = base;
      for (long[] row : values) {
        total += row == null ? 0 : row.length;
      }
      BaseFixedWidthVector elements = (BaseFixedWidthVector) list.getDataVector();
      elements.allocateNew(Math.max(total, 1));
      ArrowBuf offsets = list.getOffsetBuffer();
      ArrowBuf data = elements.getDataBuffer();
      int at = base;
      offsets.setInt(0, at);
      for (int row = 0; row < values.length; row++) {
        if (values[row] != null) {
          BitVectorHelper.setBit(list.getValidityBuffer(), row);
          for (long bits : values[row]) {
            BitVectorHelper.setBit(elements.getValidityBuffer(), at);
            if (width == ElementWidth.FLOAT) {
              data.setInt((long) at * Float.BYTES, (int) bits);
            } else {
              data.setLong((long) at * Double.BYTES, bits);
            }
            at++;
          }
        }
        offsets.setInt((long) (row + 1) * ListVector.OFFSET_WIDTH, at);
      }
      list.setLastSet(values.length - 1);
      list.setValueCount(values.length);
      elements.setValueCount(total);
      return list;
    } catch (RuntimeException | Error failure) {
      list.close();
      throw failure;
    }
  }

  private static void assertEqual(
      WritableColumnVector target, long[][] values, ElementWidth width, String description) {
    for (int row = 0; row < values.length; row++) {
      assertThat(target.isNullAt(row))
          .as("%s, row %d is null", description, row)
          .isEqualTo(values[row] == null);
      if (values[row] == null) {
        continue;
      }
      ColumnarArray array = target.getArray(row);
      long[] actual = new long[array.numElements()];
      for (int i = 0; i < actual.length; i++) {
        actual[i] =
            width == ElementWidth.FLOAT
                ? Float.floatToRawIntBits(array.getFloat(i)) & 0xFFFFFFFFL
                : Double.doubleToRawLongBits(array.getDouble(i));
        assertThat(array.isNullAt(i))
            .as("%s, row %d, element %d is null", description, row, i)
            .isFalse();
      }
      assertThat(actual).as("%s, row %d", description, row).isEqualTo(values[row]);
    }
  }

  private static DataType arrayOf(ElementWidth width) {
    return DataTypes.createArrayType(
        width == ElementWidth.FLOAT ? DataTypes.FloatType : DataTypes.DoubleType, true);
  }
}

package io.embednorm.spark.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.arrow.NormalizationMetrics;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.spark.internal.SparkArrays.ElementWidth;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The Arrow memory a task reuses between batches ({@link SparkArrays#toArrow(
 * org.apache.spark.sql.vectorized.ColumnVector, int, ElementWidth, ListVector, BatchTimes)} into
 * one input vector, {@link ResultBlocks} for the results): batches of varying sizes, ragged, with
 * null rows and null elements, give bit for bit the output of fresh vectors per batch, within the
 * float64 reference's bound; the memory is reused once the largest batch has passed, and is all
 * freed when closed.
 */
class ReusedBatchMemoryTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());

  /** Grows, shrinks (stale rows of the larger batch must not show), grows past, empties. */
  private static final int[] BATCH_ROWS = {300, 41, 1200, 7, 0, 1200, 1500, 2, 900};

  private static final Normalization RMS_NORM = Normalization.of(Op.RMS_NORM);

  private BufferAllocator allocator;

  @BeforeAll
  static void printSeed() {
    System.out.println("ReusedBatchMemoryTest seed " + SEED);
  }

  @BeforeEach
  void openAllocator() {
    allocator = new RootAllocator();
  }

  /** Closing the allocator fails the test where anything was left allocated. */
  @AfterEach
  void closeAllocator() {
    allocator.close();
  }

  @ParameterizedTest
  @EnumSource(ElementWidth.class)
  void batchesOfVaryingSizesMatchFreshVectorsAndTheReferenceAndFreeEverything(ElementWidth width) {
    Random random = new Random(SEED + width.ordinal());
    long heldAfterLargest = -1;
    long resultAddress = 0;
    try (ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
        ResultBlocks results = new ResultBlocks(allocator);
        ListVector input = SparkArrays.newList("x", width, allocator)) {
      for (int batch = 0; batch < BATCH_ROWS.length; batch++) {
        int rows = BATCH_ROWS[batch];
        String context = "seed " + SEED + ", batch " + batch + " of " + rows + " rows";
        Double[][] values = randomRows(random, rows);
        try (OnHeapColumnVector column = column(values, width);
            ListVector fresh =
                SparkArrays.toArrow(column, rows, width, "x", allocator, new BatchTimes());
            FieldVector expected = normalizer.normalize(fresh, RMS_NORM);
            FieldVector actual =
                normalizer.normalize(
                    SparkArrays.toArrow(column, rows, width, input, new BatchTimes()),
                    List.of(RMS_NORM),
                    new NormalizationMetrics(),
                    results)) {
          assertSameBits((ListVector) actual, (ListVector) expected, width, context);
          assertMatchesReference((ListVector) actual, values, width, context);
          // a batch whose rows are all null or empty has no elements, nor a block under them
          boolean hasElements = ((ListVector) actual).getDataVector().getValueCount() > 0;
          if (batch > BATCH_ROWS.length - 3 && hasElements && resultAddress != 0) {
            assertThat(elementAddress(actual))
                .as(context + ": the result's elements are in the block of the largest batch")
                .isEqualTo(resultAddress);
          }
          if (hasElements) {
            resultAddress = elementAddress(actual);
          }
        }
        if (batch == BATCH_ROWS.length - 3) {
          heldAfterLargest = allocator.getAllocatedMemory();
        } else if (heldAfterLargest >= 0) {
          assertThat(allocator.getAllocatedMemory())
              .as(context + ": Arrow memory held between batches after the largest")
              .isEqualTo(heldAfterLargest);
        }
      }
    }
    assertThat(allocator.getAllocatedMemory()).as("Arrow memory once closed").isZero();
  }

  @ParameterizedTest
  @EnumSource(ElementWidth.class)
  void aResultOpenWhenTheBlocksCloseFreesItsBlockWhenItCloses(ElementWidth width) {
    Random random = new Random(SEED + 2 + width.ordinal());
    Double[][] values = randomRows(random, 100);
    try (ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
        OnHeapColumnVector column = column(values, width);
        ListVector input = SparkArrays.newList("x", width, allocator)) {
      ResultBlocks results = new ResultBlocks(allocator);
      FieldVector result =
          normalizer.normalize(
              SparkArrays.toArrow(column, 100, width, input, new BatchTimes()),
              List.of(RMS_NORM),
              new NormalizationMetrics(),
              results);
      results.close();
      assertMatchesReference((ListVector) result, values, width, "seed " + SEED);
      long elementBytes =
          (long) result.getChildrenFromFields().get(0).getValueCount() * width.bytes();
      long held = allocator.getAllocatedMemory();
      result.close();
      assertThat(held - allocator.getAllocatedMemory())
          .as("bytes freed with the result: its elements' accounting and the block")
          .isGreaterThanOrEqualTo(2 * elementBytes);
    }
    assertThat(allocator.getAllocatedMemory()).isZero();
  }

  private static long elementAddress(FieldVector result) {
    return ((ListVector) result).getDataVector().getDataBuffer().memoryAddress();
  }

  /** Rows of 0 to 60 elements: one in ten null, one in twelve with a null element. */
  private static Double[][] randomRows(Random random, int rows) {
    Double[][] values = new Double[rows][];
    for (int row = 0; row < rows; row++) {
      if (random.nextInt(10) == 0) {
        continue;
      }
      values[row] = new Double[random.nextInt(61)];
      double scale = Math.pow(10, random.nextDouble() * 4 - 2);
      for (int i = 0; i < values[row].length; i++) {
        values[row][i] = (double) (float) (scale * random.nextGaussian());
      }
      if (values[row].length > 0 && random.nextInt(12) == 0) {
        values[row][random.nextInt(values[row].length)] = null;
      }
    }
    return values;
  }

  /** The rows as a Spark vector, the way the Parquet reader lays them out. */
  private static OnHeapColumnVector column(Double[][] values, ElementWidth width) {
    OnHeapColumnVector column =
        new OnHeapColumnVector(
            Math.max(values.length, 1),
            DataTypes.createArrayType(
                width == ElementWidth.FLOAT ? DataTypes.FloatType : DataTypes.DoubleType, true));
    WritableColumnVector elements = column.arrayData();
    int total = 0;
    for (Double[] row : values) {
      total += row == null ? 0 : row.length;
    }
    elements.reserve(Math.max(total, 1));
    int at = 0;
    for (int row = 0; row < values.length; row++) {
      if (values[row] == null) {
        column.putNull(row);
        continue;
      }
      column.putArray(row, at, values[row].length);
      for (Double value : values[row]) {
        if (value == null) {
          elements.putNull(at);
        } else if (width == ElementWidth.FLOAT) {
          elements.putFloat(at, (float) (double) value);
        } else {
          elements.putDouble(at, value);
        }
        at++;
      }
    }
    return column;
  }

  private static void assertSameBits(
      ListVector actual, ListVector expected, ElementWidth width, String context) {
    assertThat(actual.getValueCount()).as(context + ": rows").isEqualTo(expected.getValueCount());
    BaseFixedWidthVector actualElements = (BaseFixedWidthVector) actual.getDataVector();
    BaseFixedWidthVector expectedElements = (BaseFixedWidthVector) expected.getDataVector();
    for (int row = 0; row < expected.getValueCount(); row++) {
      assertThat(actual.isNull(row))
          .as(context + ": row %d null", row)
          .isEqualTo(expected.isNull(row));
      assertThat(actual.getElementEndIndex(row))
          .as(context + ": row %d end", row)
          .isEqualTo(expected.getElementEndIndex(row));
    }
    int elements =
        expected.getValueCount() == 0
            ? 0
            : expected.getElementEndIndex(expected.getValueCount() - 1);
    for (int i = 0; i < elements; i++) {
      if (width == ElementWidth.FLOAT) {
        assertThat(actualElements.getDataBuffer().getInt((long) i * 4))
            .as(context + ": element %d", i)
            .isEqualTo(expectedElements.getDataBuffer().getInt((long) i * 4));
      } else {
        assertThat(actualElements.getDataBuffer().getLong((long) i * 8))
            .as(context + ": element %d", i)
            .isEqualTo(expectedElements.getDataBuffer().getLong((long) i * 8));
      }
      assertThat(actualElements.isNull(i))
          .as(context + ": element %d null", i)
          .isEqualTo(expectedElements.isNull(i));
    }
  }

  /**
   * Each row against RMSNorm in float64, x / sqrt(mean(x²) + ε): null where the row or one of its
   * elements is; within docs/SEMANTICS.md's bound for float32 results (1e-5 relative, 1e-6 of the
   * row's largest), and 1e-12 and 1e-13 for float64 ones.
   */
  private static void assertMatchesReference(
      ListVector actual, Double[][] values, ElementWidth width, String context) {
    double relative = width == ElementWidth.FLOAT ? 1e-5 : 1e-12;
    double absolute = width == ElementWidth.FLOAT ? 1e-6 : 1e-13;
    for (int row = 0; row < values.length; row++) {
      boolean nullRow = values[row] == null || Arrays.asList(values[row]).contains(null);
      assertThat(actual.isNull(row)).as(context + ": row %d null", row).isEqualTo(nullRow);
      if (nullRow) {
        continue;
      }
      List<?> result = actual.getObject(row);
      assertThat(result).as(context + ": row %d width", row).hasSize(values[row].length);
      double sumOfSquares = 0;
      for (Double value : values[row]) {
        sumOfSquares += value * value;
      }
      double divisor = Math.sqrt(sumOfSquares / values[row].length + RMS_NORM.epsilon());
      double largest = 0;
      for (Double value : values[row]) {
        largest = Math.max(largest, Math.abs(value / divisor));
      }
      for (int i = 0; i < values[row].length; i++) {
        double reference = values[row][i] / divisor;
        double value = ((Number) result.get(i)).doubleValue();
        assertThat(Math.abs(value - reference))
            .as(context + ": row %d element %d is %s, reference %s", row, i, value, reference)
            .isLessThanOrEqualTo(relative * Math.abs(reference) + absolute * largest);
      }
    }
  }
}

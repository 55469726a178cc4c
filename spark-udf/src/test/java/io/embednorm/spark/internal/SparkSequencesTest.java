package io.embednorm.spark.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link SparkSequences}: sequences with nulls at every level, empty and ragged ones, from Spark's
 * own vectors (bulk copies) and from an {@link ArrowColumnVector} (the general path), into one
 * reused Arrow vector batch after batch and back into a reused Spark vector, every row as the row
 * path reads it; a step of another width and a sequence longer than the kernel fail with the row
 * path's line on both paths.
 */
class SparkSequencesTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());
  private static final int CHANNELS = 3;
  private static final ConvolutionKernel KERNEL =
      ConvolutionKernel.ofChannelMajor(3, 9, new float[27]);

  private BufferAllocator allocator;

  @BeforeAll
  static void printSeed() {
    System.out.println("SparkSequencesTest seed " + SEED);
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

  @Test
  void bothPathsCopyEveryRowAsTheRowPathReadsItIntoReusedVectors() {
    Random random = new Random(SEED);
    try (ListVector fromSpark = SparkSequences.newList("s", CHANNELS, allocator);
        ListVector fromArrow = SparkSequences.newList("s", CHANNELS, allocator);
        OnHeapColumnVector back = new OnHeapColumnVector(1, CausalConvolutions.RESULT_TYPE)) {
      // A batch, then a smaller one (the first one's rows must not show), then a larger one.
      for (int rows : new int[] {150, 23, 600}) {
        List<Float[][]> sequences = randomSequences(random, rows);
        String context = "seed " + SEED + ", " + rows + " rows";
        try (RowBatcher batcher = sparkVectors(sequences);
            ListVector arrow = arrowList(sequences);
            ArrowColumnVector arrowColumn = new ArrowColumnVector(arrow)) {
          SparkSequences.toArrow(
              batcher.next().column(0), rows, KERNEL, fromSpark, new BatchTimes());
          SparkSequences.toArrow(arrowColumn, rows, KERNEL, fromArrow, new BatchTimes());
        }
        assertHolds(context + ", Spark's vectors", fromSpark, sequences);
        assertHolds(context + ", an Arrow vector", fromArrow, sequences);
        SparkSequences.toSpark(fromSpark, CHANNELS, back);
        assertHolds(context + ", back in Spark", back, sequences);
      }
    }
  }

  @Test
  void aStepOfAnotherWidthOrALongSequenceFailsWithTheRowPathsLineOnBothPaths() {
    Float[] step = {1f, 2f, 3f};
    List<Float[][]> narrow = List.of(new Float[][] {step}, new Float[][] {step, {1f, 2f}});
    Float[][] tooLong = new Float[KERNEL.steps() + 1][];
    java.util.Arrays.fill(tooLong, step);
    List<Float[][]> longSequence = List.of(new Float[][] {step}, tooLong);
    String narrowLine =
        "Cannot convolve a sequence with causal_conv: step 1 has 2 channels where the kernel has 3";
    String longLine = "Cannot convolve a sequence of 10 steps with causal_conv: the kernel has 9";
    try (ListVector target = SparkSequences.newList("s", CHANNELS, allocator)) {
      for (Object[] bad : new Object[][] {{narrow, narrowLine}, {longSequence, longLine}}) {
        @SuppressWarnings("unchecked")
        List<Float[][]> sequences = (List<Float[][]>) bad[0];
        try (RowBatcher batcher = sparkVectors(sequences);
            ListVector arrow = arrowList(sequences);
            ArrowColumnVector arrowColumn = new ArrowColumnVector(arrow)) {
          ColumnVector spark = batcher.next().column(0);
          assertThatThrownBy(
                  () -> SparkSequences.toArrow(spark, 2, KERNEL, target, new BatchTimes()))
              .isInstanceOf(EmbedNormException.class)
              .hasMessageStartingWith((String) bad[1]);
          assertThatThrownBy(
                  () -> SparkSequences.toArrow(arrowColumn, 2, KERNEL, target, new BatchTimes()))
              .isInstanceOf(EmbedNormException.class)
              .hasMessageStartingWith((String) bad[1]);
        }
      }
    }
  }

  /**
   * Sequences of 0 to 9 steps; one in eight null, one in ten with a null step, one in ten with a
   * null element.
   */
  private static List<Float[][]> randomSequences(Random random, int rows) {
    List<Float[][]> result = new ArrayList<>();
    for (int row = 0; row < rows; row++) {
      if (random.nextInt(8) == 0) {
        result.add(null);
        continue;
      }
      Float[][] sequence = new Float[random.nextInt(KERNEL.steps() + 1)][CHANNELS];
      for (Float[] step : sequence) {
        for (int c = 0; c < CHANNELS; c++) {
          step[c] = (float) random.nextGaussian();
        }
      }
      if (sequence.length > 0 && random.nextInt(10) == 0) {
        sequence[random.nextInt(sequence.length)] = null;
      } else if (sequence.length > 0 && random.nextInt(10) == 0) {
        sequence[random.nextInt(sequence.length)][random.nextInt(CHANNELS)] = null;
      }
      result.add(sequence);
    }
    return result;
  }

  /** Whether the row path gives null: a null sequence, step or element. */
  private static boolean isNull(Float[][] sequence) {
    if (sequence == null) {
      return true;
    }
    for (Float[] step : sequence) {
      if (step == null || java.util.Arrays.asList(step).contains(null)) {
        return true;
      }
    }
    return false;
  }

  private static void assertHolds(String context, ListVector list, List<Float[][]> sequences) {
    assertThat(list.getValueCount()).as(context).isEqualTo(sequences.size());
    FixedSizeListVector steps = (FixedSizeListVector) list.getDataVector();
    Float4Vector values = (Float4Vector) steps.getDataVector();
    for (int row = 0; row < sequences.size(); row++) {
      Float[][] sequence = sequences.get(row);
      String where = context + ", row " + row;
      assertThat(list.isNull(row)).as(where).isEqualTo(isNull(sequence));
      if (isNull(sequence)) {
        assertThat(list.getElementEndIndex(row))
            .as(where)
            .isEqualTo(list.getElementStartIndex(row));
        continue;
      }
      int first = list.getElementStartIndex(row);
      assertThat(list.getElementEndIndex(row) - first).as(where).isEqualTo(sequence.length);
      for (int t = 0; t < sequence.length; t++) {
        assertThat(steps.isNull(first + t)).as(where).isFalse();
        for (int c = 0; c < CHANNELS; c++) {
          int index = (first + t) * CHANNELS + c;
          assertThat(values.isNull(index)).as(where).isFalse();
          assertThat(Float.floatToRawIntBits(values.get(index)))
              .as("%s, step %d, channel %d", where, t, c)
              .isEqualTo(Float.floatToRawIntBits(sequence[t][c]));
        }
      }
    }
  }

  private static void assertHolds(
      String context, OnHeapColumnVector column, List<Float[][]> sequences) {
    for (int row = 0; row < sequences.size(); row++) {
      Float[][] sequence = sequences.get(row);
      String where = context + ", row " + row;
      assertThat(column.isNullAt(row)).as(where).isEqualTo(isNull(sequence));
      if (isNull(sequence)) {
        continue;
      }
      ColumnarArray steps = column.getArray(row);
      assertThat(steps.numElements()).as(where).isEqualTo(sequence.length);
      for (int t = 0; t < sequence.length; t++) {
        float[] step = steps.getArray(t).toFloatArray();
        assertThat(step).as("%s, step %d", where, t).containsExactly(unboxed(sequence[t]));
      }
    }
  }

  private static float[] unboxed(Float[] values) {
    float[] result = new float[values.length];
    for (int i = 0; i < values.length; i++) {
      result[i] = values[i];
    }
    return result;
  }

  /**
   * The sequences in Spark's on-heap vectors, written as the operator's row batching writes them.
   */
  private static RowBatcher sparkVectors(List<Float[][]> sequences) {
    StructType schema =
        new StructType()
            .add(
                "s",
                DataTypes.createArrayType(DataTypes.createArrayType(DataTypes.FloatType, true)),
                true);
    List<InternalRow> rows = new ArrayList<>();
    for (Float[][] sequence : sequences) {
      Object value = null;
      if (sequence != null) {
        Object[] steps = new Object[sequence.length];
        for (int t = 0; t < steps.length; t++) {
          steps[t] = sequence[t] == null ? null : new GenericArrayData((Object[]) sequence[t]);
        }
        value = new GenericArrayData(steps);
      }
      rows.add(new GenericInternalRow(new Object[] {value}));
    }
    return new RowBatcher(rows.iterator(), schema, Math.max(sequences.size(), 1));
  }

  /**
   * The sequences as an Arrow {@code List<List<float>>}, which Spark reads through its accessors.
   */
  private ListVector arrowList(List<Float[][]> sequences) {
    ListVector outer = ListVector.empty("s", allocator);
    ListVector inner =
        (ListVector) outer.addOrGetVector(FieldType.nullable(ArrowType.List.INSTANCE)).getVector();
    Float4Vector floats =
        (Float4Vector)
            inner
                .addOrGetVector(
                    FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))
                .getVector();
    outer.allocateNew();
    int step = 0;
    int value = 0;
    for (int row = 0; row < sequences.size(); row++) {
      Float[][] sequence = sequences.get(row);
      if (sequence == null) {
        outer.setNull(row);
        continue;
      }
      outer.startNewValue(row);
      for (Float[] values : sequence) {
        if (values == null) {
          inner.setNull(step++);
          continue;
        }
        inner.startNewValue(step);
        for (Float v : values) {
          if (v == null) {
            floats.setNull(value++);
          } else {
            floats.setSafe(value++, v);
          }
        }
        inner.endValue(step++, values.length);
      }
      outer.endValue(row, sequence.length);
    }
    outer.setValueCount(sequences.size());
    return outer;
  }
}

package io.embednorm.arrow;

import static io.embednorm.engine.CausalConvolutionReference.firstOutsideBound;
import static io.embednorm.engine.CausalConvolutionReference.randomKernel;
import static io.embednorm.engine.CausalConvolutionReference.randomSequence;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.TestSeeds;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;

/** {@code ArrowConvolution} on real vectors and a real allocator, against the float64 reference. */
class ArrowConvolutionTest {
  private static final int CHANNELS = 6;
  private static final int KERNEL_STEPS = 9;

  @Test
  void listColumnMatchesTheReferenceRowByRowWithNullsAndEmptyRows() {
    long seed = TestSeeds.seeds()[TestSeeds.seeds().length - 1];
    Random random = new Random(seed);
    float[][] w = randomKernel(random, CHANNELS, KERNEL_STEPS);
    int[] lengths = {3, 0, -1, 9, 1, -2}; // -1: a null row, -2: a row with a null element
    float[][] rows = new float[lengths.length][];
    try (BufferAllocator allocator = new RootAllocator();
        ListVector input = ListVector.empty("sequence", allocator)) {
      FixedSizeListVector steps = addSteps(input);
      Float4Vector values = (Float4Vector) steps.getDataVector();
      int written = 0;
      for (int row = 0; row < lengths.length; row++) {
        if (lengths[row] == -1) {
          input.setNull(row);
          continue;
        }
        int count = Math.max(lengths[row], 2);
        rows[row] = randomSequence(random, count, CHANNELS);
        input.startNewValue(row);
        for (int i = 0; i < rows[row].length; i++) {
          if (i % CHANNELS == 0) {
            steps.setNotNull(written + i / CHANNELS);
          }
          values.setSafe(written * CHANNELS + i, rows[row][i]);
        }
        if (lengths[row] == -2) {
          values.setNull(written * CHANNELS + 4);
        }
        if (lengths[row] == 0) {
          rows[row] = new float[0];
          input.endValue(row, 0);
          continue;
        }
        written += count;
        input.endValue(row, count);
      }
      values.setValueCount(written * CHANNELS);
      steps.setValueCount(written);
      input.setValueCount(lengths.length);

      try (FieldVector output =
          ArrowConvolution.causalConv(input, ConvolutionKernel.of(w), 0.5f, allocator)) {
        ListVector list = (ListVector) output;
        Float4Vector out =
            (Float4Vector) ((FixedSizeListVector) list.getDataVector()).getDataVector();
        assertThat(list.getField().getType()).isEqualTo(input.getField().getType());
        for (int row = 0; row < lengths.length; row++) {
          if (lengths[row] < 0) {
            assertThat(list.isNull(row)).as("row %d", row).isTrue();
            continue;
          }
          int first = list.getElementStartIndex(row);
          int count = list.getElementEndIndex(row) - first;
          assertThat(count * CHANNELS).as("row %d", row).isEqualTo(rows[row].length);
          float[] got = new float[count * CHANNELS];
          for (int i = 0; i < got.length; i++) {
            got[i] = out.get(first * CHANNELS + i);
          }
          assertThat(firstOutsideBound(w, 0.5f, rows[row], count, got))
              .as("seed %d, row %d", seed, row)
              .isEqualTo(-1);
        }
      }
      input.close();
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void fixedSizeColumnKeepsItsShapeAndNullRows() {
    Random random = new Random(5);
    float[][] w = randomKernel(random, CHANNELS, KERNEL_STEPS);
    int steps = 4;
    try (BufferAllocator allocator = new RootAllocator();
        FixedSizeListVector input = FixedSizeListVector.empty("sequence", steps, allocator)) {
      FixedSizeListVector stepVector = addSteps(input);
      Float4Vector values = (Float4Vector) stepVector.getDataVector();
      float[][] rows = {
        randomSequence(random, steps, CHANNELS), null, randomSequence(random, steps, CHANNELS)
      };
      for (int row = 0; row < rows.length; row++) {
        for (int t = 0; t < steps; t++) {
          stepVector.setNotNull(row * steps + t);
          for (int c = 0; c < CHANNELS; c++) {
            values.setSafe(
                (row * steps + t) * CHANNELS + c,
                rows[row] == null ? 0f : rows[row][t * CHANNELS + c]);
          }
        }
        if (rows[row] == null) {
          input.setNull(row);
        } else {
          input.setNotNull(row);
        }
      }
      values.setValueCount(rows.length * steps * CHANNELS);
      stepVector.setValueCount(rows.length * steps);
      input.setValueCount(rows.length);
      try (FieldVector output =
          ArrowConvolution.causalConv(input, ConvolutionKernel.of(w), 0f, allocator)) {
        FixedSizeListVector fixed = (FixedSizeListVector) output;
        assertThat(fixed.getListSize()).isEqualTo(steps);
        assertThat(fixed.isNull(1)).isTrue();
        Float4Vector out =
            (Float4Vector) ((FixedSizeListVector) fixed.getDataVector()).getDataVector();
        float[] got = new float[steps * CHANNELS];
        for (int i = 0; i < got.length; i++) {
          got[i] = out.get(2 * steps * CHANNELS + i);
        }
        assertThat(firstOutsideBound(w, 0f, rows[2], steps, got)).isEqualTo(-1);
      }
      input.close();
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void stepsOfAnotherWidthFailNamingTheColumn() {
    try (BufferAllocator allocator = new RootAllocator();
        ListVector input = ListVector.empty("tokens", allocator)) {
      addSteps(input);
      input.setValueCount(0);
      ConvolutionKernel kernel = ConvolutionKernel.of(randomKernel(new Random(1), 5, 3));
      assertThatThrownBy(() -> ArrowConvolution.causalConv(input, kernel, 0f, allocator))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage(
              "Cannot convolve column 'tokens' with causal_conv: its steps have 6 channels where"
                  + " the kernel has 5");
    }
  }

  private static FixedSizeListVector addSteps(FieldVector sequences) {
    FieldType stepType = FieldType.nullable(new ArrowType.FixedSizeList(CHANNELS));
    FixedSizeListVector steps =
        (FixedSizeListVector)
            (sequences instanceof ListVector list
                    ? list.addOrGetVector(stepType)
                    : ((FixedSizeListVector) sequences).addOrGetVector(stepType))
                .getVector();
    steps.addOrGetVector(
        FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    return steps;
  }
}

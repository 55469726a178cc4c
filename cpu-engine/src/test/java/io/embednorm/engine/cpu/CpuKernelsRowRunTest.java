package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Runs of rows go through each pass side by side ({@link FloatRowKernels}): every row must still
 * get exactly the bits it gets alone, whatever its neighbours, including rows that take the float64
 * fallback, NaN rows and rows of −inf, in place and out of place, across group boundaries.
 */
class CpuKernelsRowRunTest {
  private static final int ROWS = 150;

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("implementationsAndOps")
  void everyRowOfARunGetsTheBitsItGetsAlone(RowPasses passes, Op op) {
    long seed = 4242L + op.ordinal();
    System.out.println("CpuKernelsRowRunTest seed " + seed);
    Random random = new Random(seed);
    // 32, 64, 96 and 128: the SIMD passes' flat loops; 129 and 256: rows of several blocks; 768:
    // eight equal blocks, four at a time.
    for (int width : new int[] {1, 3, 8, 16, 31, 32, 33, 48, 64, 96, 128, 129, 256, 768}) {
      float[] values = mixedRows(random, width);
      for (Normalization normalization : NormalizationVariants.of(op, width, random)) {
        float[] expected = new float[values.length];
        for (int row = 0; row < ROWS; row++) {
          CpuKernels.normalizeRow(
              passes, normalization, values, row * width, expected, row * width, width);
        }
        float[] separate = new float[values.length + 5];
        CpuKernels.normalizeRows(passes, normalization, values, 0, separate, 5, width, ROWS);
        assertThat(Arrays.copyOfRange(separate, 5, separate.length))
            .as("%s width %d, out of place", normalization, width)
            .isEqualTo(expected);
        float[] inPlace = new float[values.length + 3];
        System.arraycopy(values, 0, inPlace, 3, values.length);
        CpuKernels.normalizeRows(passes, normalization, inPlace, 3, inPlace, 3, width, ROWS);
        assertThat(Arrays.copyOfRange(inPlace, 3, inPlace.length))
            .as("%s width %d, in place", normalization, width)
            .isEqualTo(expected);
      }
    }
  }

  /**
   * Rows of every distribution in turn, with a NaN row, a row of −inf and a zero row among them.
   */
  private static float[] mixedRows(Random random, int width) {
    RowDistribution[] distributions = RowDistribution.values();
    float[] values = new float[ROWS * width];
    for (int row = 0; row < ROWS; row++) {
      float[] rowValues = distributions[row % distributions.length].floats(random, width);
      System.arraycopy(rowValues, 0, values, row * width, width);
    }
    values[7 * width + width / 2] = Float.NaN;
    Arrays.fill(values, 11 * width, 12 * width, Float.NEGATIVE_INFINITY);
    values[70 * width] = Float.NEGATIVE_INFINITY;
    Arrays.fill(values, 13 * width, 14 * width, 0f);
    return values;
  }

  static Stream<Arguments> implementationsAndOps() {
    return RowPassesImplementations.crossedWith((Object[]) Op.values());
  }
}

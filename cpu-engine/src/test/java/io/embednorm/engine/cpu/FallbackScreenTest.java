package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link RowPasses#anyUnsafe}, the screen in front of the float64 fallback: it may say yes for a
 * group the exact check then clears, but it must never say no for a group with a row that needs the
 * fallback, whichever row that is and however many rows the group has.
 */
class FallbackScreenTest {
  private static final float LARGEST = 0x1p100f;
  private static final float SMALLEST = 0x1p-100f;
  private static final int ROWS = FloatRowKernels.GROUP_ROWS;

  private static final float SAFE_SUM = 3.5f;
  private static final float SAFE_SCALE = 0.25f;

  private static final float[] UNSAFE_SUMS = {
    Math.nextUp(LARGEST),
    Float.MAX_VALUE,
    Float.POSITIVE_INFINITY,
    Math.nextDown(SMALLEST),
    0f,
    Float.MIN_VALUE
  };
  private static final float[] SAFE_SUMS = {LARGEST, SMALLEST, 1f};
  private static final float[] UNSAFE_SCALES = {
    Math.nextDown(Float.MIN_NORMAL), Float.MIN_VALUE, 0f, Float.POSITIVE_INFINITY
  };
  private static final float[] SAFE_SCALES = {Float.MIN_NORMAL, Float.MAX_VALUE, 1f};

  static Iterable<RowPasses> implementations() {
    return RowPassesImplementations.all();
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void saysYesForEveryUnsafeSumAtEveryRowAndGroupSize(RowPasses passes) {
    for (int count = 1; count <= ROWS; count++) {
      for (int row = 0; row < count; row++) {
        for (float sum : UNSAFE_SUMS) {
          float[] sums = filled(SAFE_SUM);
          sums[row] = sum;
          assertThat(passes.anyUnsafe(sums, filled(SAFE_SCALE), count, SMALLEST, LARGEST))
              .as("%s: sum %s at row %d of %d", passes.description(), sum, row, count)
              .isTrue();
        }
        for (float scale : UNSAFE_SCALES) {
          float[] scales = filled(SAFE_SCALE);
          scales[row] = scale;
          assertThat(passes.anyUnsafe(filled(SAFE_SUM), scales, count, SMALLEST, LARGEST))
              .as("%s: scale %s at row %d of %d", passes.description(), scale, row, count)
              .isTrue();
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void saysNoForSafeRowsAndWithoutALowerBound(RowPasses passes) {
    for (int count = 1; count <= ROWS; count++) {
      assertThat(passes.anyUnsafe(filled(SAFE_SUM), filled(SAFE_SCALE), count, SMALLEST, LARGEST))
          .isFalse();
      for (float sum : SAFE_SUMS) {
        float[] sums = filled(SAFE_SUM);
        sums[count - 1] = sum;
        assertThat(passes.anyUnsafe(sums, filled(SAFE_SCALE), count, SMALLEST, LARGEST))
            .as("%s: sum %s", passes.description(), sum)
            .isFalse();
      }
      for (float scale : SAFE_SCALES) {
        float[] scales = filled(SAFE_SCALE);
        scales[count - 1] = scale;
        assertThat(passes.anyUnsafe(filled(SAFE_SUM), scales, count, SMALLEST, LARGEST))
            .as("%s: scale %s", passes.description(), scale)
            .isFalse();
      }
      // With eps dominating (no lower bound), tiny and zero sums are safe.
      float[] tiny = filled(0f);
      assertThat(
              passes.anyUnsafe(tiny, filled(SAFE_SCALE), count, Float.NEGATIVE_INFINITY, LARGEST))
          .isFalse();
    }
  }

  private static float[] filled(float value) {
    float[] values = new float[ROWS];
    Arrays.fill(values, value);
    return values;
  }
}

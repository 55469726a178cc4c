package io.embednorm.kernels.cpu;

/**
 * The float32 reductions of a row. Inside a block of at most {@link #BLOCK} elements, element
 * {@code i} goes to lane {@code i % 8} and the eight lanes are combined pairwise (the shape of a
 * SIMD register or a GPU warp); blocks are combined by recursive halving. Each sum therefore sees
 * at most 16 sequential additions per lane plus about log2(width / 128) levels of pairs, so its
 * rounding error stays near ε·(19 + log2 width) even for constant rows, where the errors of a long
 * sequential sum would all point the same way.
 *
 * <p>The split points depend only on the row width, so a row's result bits never depend on the
 * batch around it. These are the scalar reductions; {@code VectorRowPasses} repeats them lane for
 * lane (one 8-lane register per block), so both give the same bits.
 */
final class FloatSums {
  /** Elements summed lane-wise before blocks are combined in pairs; a multiple of 8. */
  static final int BLOCK = 128;

  private FloatSums() {}

  /** The maximum of the row; NaN as soon as any element is NaN. */
  static float maximum(float[] values, int offset, int count) {
    float maximum = values[offset];
    for (int i = 1; i < count; i++) {
      maximum = Math.max(maximum, values[offset + i]);
    }
    return maximum;
  }

  /** Σ x². */
  static float sumOfSquares(float[] values, int offset, int count) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfSquares(values, offset, half) + sumOfSquares(values, offset + half, count - half);
    }
    float lane0 = 0f;
    float lane1 = 0f;
    float lane2 = 0f;
    float lane3 = 0f;
    float lane4 = 0f;
    float lane5 = 0f;
    float lane6 = 0f;
    float lane7 = 0f;
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      lane0 += values[index] * values[index];
      lane1 += values[index + 1] * values[index + 1];
      lane2 += values[index + 2] * values[index + 2];
      lane3 += values[index + 3] * values[index + 3];
      lane4 += values[index + 4] * values[index + 4];
      lane5 += values[index + 5] * values[index + 5];
      lane6 += values[index + 6] * values[index + 6];
      lane7 += values[index + 7] * values[index + 7];
    }
    int rest = count - full;
    if (rest > 0) {
      lane0 += values[index] * values[index];
    }
    if (rest > 1) {
      lane1 += values[index + 1] * values[index + 1];
    }
    if (rest > 2) {
      lane2 += values[index + 2] * values[index + 2];
    }
    if (rest > 3) {
      lane3 += values[index + 3] * values[index + 3];
    }
    if (rest > 4) {
      lane4 += values[index + 4] * values[index + 4];
    }
    if (rest > 5) {
      lane5 += values[index + 5] * values[index + 5];
    }
    if (rest > 6) {
      lane6 += values[index + 6] * values[index + 6];
    }
    return ((lane0 + lane1) + (lane2 + lane3)) + ((lane4 + lane5) + (lane6 + lane7));
  }

  /** Σ (x − shift). */
  static float sumOfDifferences(float[] values, int offset, int count, float shift) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfDifferences(values, offset, half, shift)
          + sumOfDifferences(values, offset + half, count - half, shift);
    }
    float lane0 = 0f;
    float lane1 = 0f;
    float lane2 = 0f;
    float lane3 = 0f;
    float lane4 = 0f;
    float lane5 = 0f;
    float lane6 = 0f;
    float lane7 = 0f;
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      lane0 += values[index] - shift;
      lane1 += values[index + 1] - shift;
      lane2 += values[index + 2] - shift;
      lane3 += values[index + 3] - shift;
      lane4 += values[index + 4] - shift;
      lane5 += values[index + 5] - shift;
      lane6 += values[index + 6] - shift;
      lane7 += values[index + 7] - shift;
    }
    int rest = count - full;
    if (rest > 0) {
      lane0 += values[index] - shift;
    }
    if (rest > 1) {
      lane1 += values[index + 1] - shift;
    }
    if (rest > 2) {
      lane2 += values[index + 2] - shift;
    }
    if (rest > 3) {
      lane3 += values[index + 3] - shift;
    }
    if (rest > 4) {
      lane4 += values[index + 4] - shift;
    }
    if (rest > 5) {
      lane5 += values[index + 5] - shift;
    }
    if (rest > 6) {
      lane6 += values[index + 6] - shift;
    }
    return ((lane0 + lane1) + (lane2 + lane3)) + ((lane4 + lane5) + (lane6 + lane7));
  }

  /** Σ ((x − shift) − center)², the second pass of LayerNorm. */
  static float sumOfSquaredDeviations(
      float[] values, int offset, int count, float shift, float center) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfSquaredDeviations(values, offset, half, shift, center)
          + sumOfSquaredDeviations(values, offset + half, count - half, shift, center);
    }
    float lane0 = 0f;
    float lane1 = 0f;
    float lane2 = 0f;
    float lane3 = 0f;
    float lane4 = 0f;
    float lane5 = 0f;
    float lane6 = 0f;
    float lane7 = 0f;
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      lane0 += square(values[index] - shift - center);
      lane1 += square(values[index + 1] - shift - center);
      lane2 += square(values[index + 2] - shift - center);
      lane3 += square(values[index + 3] - shift - center);
      lane4 += square(values[index + 4] - shift - center);
      lane5 += square(values[index + 5] - shift - center);
      lane6 += square(values[index + 6] - shift - center);
      lane7 += square(values[index + 7] - shift - center);
    }
    int rest = count - full;
    if (rest > 0) {
      lane0 += square(values[index] - shift - center);
    }
    if (rest > 1) {
      lane1 += square(values[index + 1] - shift - center);
    }
    if (rest > 2) {
      lane2 += square(values[index + 2] - shift - center);
    }
    if (rest > 3) {
      lane3 += square(values[index + 3] - shift - center);
    }
    if (rest > 4) {
      lane4 += square(values[index + 4] - shift - center);
    }
    if (rest > 5) {
      lane5 += square(values[index + 5] - shift - center);
    }
    if (rest > 6) {
      lane6 += square(values[index + 6] - shift - center);
    }
    return ((lane0 + lane1) + (lane2 + lane3)) + ((lane4 + lane5) + (lane6 + lane7));
  }

  /** Where a row longer than one block is split: about half, a multiple of 8. */
  static int firstHalf(int count) {
    return (count >>> 1) & ~7;
  }

  private static float square(float value) {
    return value * value;
  }
}

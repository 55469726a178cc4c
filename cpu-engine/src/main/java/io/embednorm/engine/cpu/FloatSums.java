package io.embednorm.engine.cpu;

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

  /**
   * The maximum of the row, by {@code Math.max} (NaN if the row holds one; +0 over −0): one
   * accumulator, which C2 turns into a vector reduction. Eight chains of comparisons measured
   * faster only on rows the branch predictor had seen before: on rows it had not (a file's), their
   * mispredicted branches made it about half as fast as this loop.
   */
  static float maximum(float[] values, int offset, int count) {
    float maximum = values[offset];
    for (int index = offset, end = offset + count; index < end; index++) {
      maximum = Math.max(maximum, values[index]);
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

  /** max |x| by {@code Math.max} (NaN if the row holds one): l_inf normalization's norm. */
  static float maximumMagnitude(float[] values, int offset, int count) {
    float maximum = 0f;
    for (int index = offset, end = offset + count; index < end; index++) {
      maximum = Math.max(maximum, Math.abs(values[index]));
    }
    return maximum;
  }

  /** Σ |x|, in the lanes and blocks of {@link #sumOfSquares}: l1 normalization's norm. */
  static float sumOfMagnitudes(float[] values, int offset, int count) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfMagnitudes(values, offset, half)
          + sumOfMagnitudes(values, offset + half, count - half);
    }
    float lane0 = 0f;
    float lane1 = 0f;
    float lane2 = 0f;
    float lane3 = 0f;
    float lane4 = 0f;
    float lane5 = 0f;
    float lane6 = 0f;
    float lane7 = 0f;
    int index = offset;
    int end = offset + count;
    for (; index + 8 <= end; index += 8) {
      lane0 += Math.abs(values[index]);
      lane1 += Math.abs(values[index + 1]);
      lane2 += Math.abs(values[index + 2]);
      lane3 += Math.abs(values[index + 3]);
      lane4 += Math.abs(values[index + 4]);
      lane5 += Math.abs(values[index + 5]);
      lane6 += Math.abs(values[index + 6]);
      lane7 += Math.abs(values[index + 7]);
    }
    // The tail, element j to lane j.
    lane0 += index < end ? Math.abs(values[index]) : 0f;
    lane1 += index + 1 < end ? Math.abs(values[index + 1]) : 0f;
    lane2 += index + 2 < end ? Math.abs(values[index + 2]) : 0f;
    lane3 += index + 3 < end ? Math.abs(values[index + 3]) : 0f;
    lane4 += index + 4 < end ? Math.abs(values[index + 4]) : 0f;
    lane5 += index + 5 < end ? Math.abs(values[index + 5]) : 0f;
    lane6 += index + 6 < end ? Math.abs(values[index + 6]) : 0f;
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

  /**
   * LayerNorm's shift of a row: the mean of its first eight elements (each scaled by 1/8 before the
   * additions, so that no sum overflows), or its first element when the row is shorter. Near the
   * row's mean for ordinary rows, so that Σ (x − shift) is small against Σ (x − shift)² and one
   * pass gives the variance (see {@link LayerNormStatistics}); inside the range of the row's
   * values, so that x − shift is exact for rows whose mean is large against their spread.
   */
  static float layerNormShift(float[] values, int offset, int width) {
    if (width < 8) {
      return values[offset];
    }
    float eighth = 0.125f;
    return ((values[offset] * eighth + values[offset + 1] * eighth)
            + (values[offset + 2] * eighth + values[offset + 3] * eighth))
        + ((values[offset + 4] * eighth + values[offset + 5] * eighth)
            + (values[offset + 6] * eighth + values[offset + 7] * eighth));
  }

  /**
   * One block of at most {@link #BLOCK} elements, starting at a multiple of 8 from its row's start:
   * the eight lanes of Σ (x − shift) into {@code sumLanes} and of Σ (x − shift)² into {@code
   * squareLanes}, from {@code at}. Lane k takes elements k, k + 8, … in order, as {@link
   * #sumOfDifferences} adds them; {@link SumTree#sums} then combines lanes and blocks as it does.
   */
  static void differencesAndSquares(
      float[] values,
      int offset,
      int count,
      float shift,
      float[] sumLanes,
      float[] squareLanes,
      int at) {
    float sum0 = 0f;
    float sum1 = 0f;
    float sum2 = 0f;
    float sum3 = 0f;
    float sum4 = 0f;
    float sum5 = 0f;
    float sum6 = 0f;
    float sum7 = 0f;
    float square0 = 0f;
    float square1 = 0f;
    float square2 = 0f;
    float square3 = 0f;
    float square4 = 0f;
    float square5 = 0f;
    float square6 = 0f;
    float square7 = 0f;
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      float d0 = values[index] - shift;
      float d1 = values[index + 1] - shift;
      float d2 = values[index + 2] - shift;
      float d3 = values[index + 3] - shift;
      float d4 = values[index + 4] - shift;
      float d5 = values[index + 5] - shift;
      float d6 = values[index + 6] - shift;
      float d7 = values[index + 7] - shift;
      sum0 += d0;
      sum1 += d1;
      sum2 += d2;
      sum3 += d3;
      sum4 += d4;
      sum5 += d5;
      sum6 += d6;
      sum7 += d7;
      square0 += d0 * d0;
      square1 += d1 * d1;
      square2 += d2 * d2;
      square3 += d3 * d3;
      square4 += d4 * d4;
      square5 += d5 * d5;
      square6 += d6 * d6;
      square7 += d7 * d7;
    }
    sumLanes[at] = sum0;
    sumLanes[at + 1] = sum1;
    sumLanes[at + 2] = sum2;
    sumLanes[at + 3] = sum3;
    sumLanes[at + 4] = sum4;
    sumLanes[at + 5] = sum5;
    sumLanes[at + 6] = sum6;
    sumLanes[at + 7] = sum7;
    squareLanes[at] = square0;
    squareLanes[at + 1] = square1;
    squareLanes[at + 2] = square2;
    squareLanes[at + 3] = square3;
    squareLanes[at + 4] = square4;
    squareLanes[at + 5] = square5;
    squareLanes[at + 6] = square6;
    squareLanes[at + 7] = square7;
    for (int lane = at, end = offset + count; index < end; index++, lane++) {
      float difference = values[index] - shift;
      sumLanes[lane] += difference;
      squareLanes[lane] += difference * difference;
    }
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

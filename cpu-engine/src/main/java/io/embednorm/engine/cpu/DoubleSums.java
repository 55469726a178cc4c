package io.embednorm.engine.cpu;

/**
 * The float64 reductions of a row, with the same lanes, blocks and split points as {@link
 * FloatSums} (see there for why).
 */
final class DoubleSums {
  private static final int BLOCK = FloatSums.BLOCK;

  private DoubleSums() {}

  /** The maximum of the row; NaN as soon as any element is NaN. */
  static double maximum(double[] values, int offset, int count) {
    double maximum = values[offset];
    for (int i = 1; i < count; i++) {
      maximum = Math.max(maximum, values[offset + i]);
    }
    return maximum;
  }

  /** max |x|; NaN as soon as any element is NaN. */
  static double maximumMagnitude(double[] values, int offset, int count) {
    double maximum = 0.0;
    for (int i = 0; i < count; i++) {
      maximum = Math.max(maximum, Math.abs(values[offset + i]));
    }
    return maximum;
  }

  /** Σ |x|, in the lanes and blocks of {@link #sumOfSquares}. */
  static double sumOfMagnitudes(double[] values, int offset, int count) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfMagnitudes(values, offset, half)
          + sumOfMagnitudes(values, offset + half, count - half);
    }
    double lane0 = 0.0;
    double lane1 = 0.0;
    double lane2 = 0.0;
    double lane3 = 0.0;
    double lane4 = 0.0;
    double lane5 = 0.0;
    double lane6 = 0.0;
    double lane7 = 0.0;
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
    lane0 += index < end ? Math.abs(values[index]) : 0.0;
    lane1 += index + 1 < end ? Math.abs(values[index + 1]) : 0.0;
    lane2 += index + 2 < end ? Math.abs(values[index + 2]) : 0.0;
    lane3 += index + 3 < end ? Math.abs(values[index + 3]) : 0.0;
    lane4 += index + 4 < end ? Math.abs(values[index + 4]) : 0.0;
    lane5 += index + 5 < end ? Math.abs(values[index + 5]) : 0.0;
    lane6 += index + 6 < end ? Math.abs(values[index + 6]) : 0.0;
    return ((lane0 + lane1) + (lane2 + lane3)) + ((lane4 + lane5) + (lane6 + lane7));
  }

  /** Σ x². */
  static double sumOfSquares(double[] values, int offset, int count) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfSquares(values, offset, half) + sumOfSquares(values, offset + half, count - half);
    }
    double lane0 = 0.0;
    double lane1 = 0.0;
    double lane2 = 0.0;
    double lane3 = 0.0;
    double lane4 = 0.0;
    double lane5 = 0.0;
    double lane6 = 0.0;
    double lane7 = 0.0;
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
  static double sumOfDifferences(double[] values, int offset, int count, double shift) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfDifferences(values, offset, half, shift)
          + sumOfDifferences(values, offset + half, count - half, shift);
    }
    double lane0 = 0.0;
    double lane1 = 0.0;
    double lane2 = 0.0;
    double lane3 = 0.0;
    double lane4 = 0.0;
    double lane5 = 0.0;
    double lane6 = 0.0;
    double lane7 = 0.0;
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
  static double sumOfSquaredDeviations(
      double[] values, int offset, int count, double shift, double center) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfSquaredDeviations(values, offset, half, shift, center)
          + sumOfSquaredDeviations(values, offset + half, count - half, shift, center);
    }
    double lane0 = 0.0;
    double lane1 = 0.0;
    double lane2 = 0.0;
    double lane3 = 0.0;
    double lane4 = 0.0;
    double lane5 = 0.0;
    double lane6 = 0.0;
    double lane7 = 0.0;
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

  /** Σ exp(x − maximum). */
  static double sumOfExponentials(double[] values, int offset, int count, double maximum) {
    if (count > BLOCK) {
      int half = firstHalf(count);
      return sumOfExponentials(values, offset, half, maximum)
          + sumOfExponentials(values, offset + half, count - half, maximum);
    }
    double lane0 = 0.0;
    double lane1 = 0.0;
    double lane2 = 0.0;
    double lane3 = 0.0;
    double lane4 = 0.0;
    double lane5 = 0.0;
    double lane6 = 0.0;
    double lane7 = 0.0;
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      lane0 += Math.exp(values[index] - maximum);
      lane1 += Math.exp(values[index + 1] - maximum);
      lane2 += Math.exp(values[index + 2] - maximum);
      lane3 += Math.exp(values[index + 3] - maximum);
      lane4 += Math.exp(values[index + 4] - maximum);
      lane5 += Math.exp(values[index + 5] - maximum);
      lane6 += Math.exp(values[index + 6] - maximum);
      lane7 += Math.exp(values[index + 7] - maximum);
    }
    int rest = count - full;
    if (rest > 0) {
      lane0 += Math.exp(values[index] - maximum);
    }
    if (rest > 1) {
      lane1 += Math.exp(values[index + 1] - maximum);
    }
    if (rest > 2) {
      lane2 += Math.exp(values[index + 2] - maximum);
    }
    if (rest > 3) {
      lane3 += Math.exp(values[index + 3] - maximum);
    }
    if (rest > 4) {
      lane4 += Math.exp(values[index + 4] - maximum);
    }
    if (rest > 5) {
      lane5 += Math.exp(values[index + 5] - maximum);
    }
    if (rest > 6) {
      lane6 += Math.exp(values[index + 6] - maximum);
    }
    return ((lane0 + lane1) + (lane2 + lane3)) + ((lane4 + lane5) + (lane6 + lane7));
  }

  private static int firstHalf(int count) {
    return FloatSums.firstHalf(count);
  }

  private static double square(double value) {
    return value * value;
  }
}

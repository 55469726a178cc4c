package io.embednorm.engine.cpu;

/**
 * LayerNorm's statistics of a group of rows in one pass over the values where that is accurate, in
 * two where it is not. With d = x − s for a shift s near the row's mean ({@link
 * FloatSums#layerNormShift}), one pass gives Σd and Σd², and Σ(x − μ)² = Σd² − (Σd)²/D. That
 * difference loses nothing worth counting while (Σd)²/D is at most half of Σd²: its relative error
 * is then within a few times that of the sums themselves. Where the shift is further from the mean
 * (the first eight elements far from the rest), the row takes a second pass over (d − mean)², as
 * every row did before. Never E[x²] − E[x]² on the raw values: a float32 row with mean 1e6 and
 * spread 0.5 is exact in d.
 */
final class LayerNormStatistics {
  /** Marks a row that needs the second pass: no sum of squares is negative. */
  private static final float SECOND_PASS = -1f;

  private LayerNormStatistics() {}

  /**
   * Σ (x − mean)² = Σd² − (Σd)²/D of a row from its one pass ({@code squares} = Σd², {@code sum} =
   * Σd), or a mark for {@link #needsSecondPass} where that difference would lose accuracy. An
   * infinite or NaN Σd² stays as it is: the kernel's range check or NaN propagation.
   */
  static float onePassDeviations(float squares, float sum, int width) {
    if (!(squares < Float.POSITIVE_INFINITY)) {
      return squares;
    }
    double wideSum = sum;
    double deviations = squares - wideSum * wideSum / width;
    return deviations + deviations < squares ? SECOND_PASS : (float) deviations;
  }

  /** Whether {@link #onePassDeviations} marked the row for the second pass. */
  static boolean needsSecondPass(float deviations) {
    return deviations == SECOND_PASS;
  }

  /**
   * For each of the {@code count} rows of {@code width} from {@code offset}: its shift into {@code
   * shifts}, its mean into {@code means} and as the float32 pair {@code high[row] + low[row]} (see
   * {@link RowPasses#centers}), and Σ (x − mean)² into {@code sums}. The same bits whichever passes
   * run.
   */
  static void compute(
      RowPasses passes,
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] means,
      float[] high,
      float[] low,
      float[] sums) {
    passes.layerNormShifts(values, offset, width, count, shifts);
    passes.sumsAndSquaresOfDifferences(values, offset, width, count, shifts, high, sums);
    boolean secondPass = false;
    for (int row = 0; row < count; row++) {
      sums[row] = onePassDeviations(sums[row], high[row], width);
      secondPass |= needsSecondPass(sums[row]);
    }
    passes.centers(shifts, high, count, width, means, high, low);
    for (int row = 0; secondPass && row < count; row++) {
      if (needsSecondPass(sums[row])) {
        sums[row] =
            passes.sumOfSquaredDeviations(
                values, offset + row * width, width, shifts[row], means[row]);
      }
    }
  }
}

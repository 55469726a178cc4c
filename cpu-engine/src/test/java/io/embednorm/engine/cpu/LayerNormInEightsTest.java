package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The SIMD passes' LayerNorm of rows of 32 eight at a time ({@code layerNormInEights}), with and
 * without γ and β: it must take every block of eight plain rows, stop before a block holding a row
 * that needs another path, and give each row it writes the bits the row gets alone on the scalar
 * passes. The row-run test mixes distributions row by row, so nearly every block there holds a row
 * for the fallback; here whole runs are plain but for the rows placed in them.
 */
class LayerNormInEightsTest {
  private static final int WIDTH = 32;
  private static final int[] COUNTS = {7, 8, 9, 16, 23, 24, 64, 71, 72, 150};

  @Test
  void plainRowsGoEightAtATimeWithTheBitsOfTheScalarPasses() {
    List<RowPasses> vectors = RowPassesImplementations.vectorVariants();
    assertThat(vectors).isNotEmpty();
    for (long seed : TestSeeds.seeds()) {
      System.out.println("LayerNormInEightsTest seed " + seed);
      for (int count : COUNTS) {
        Random random = new Random(TestSeeds.mix(seed, count));
        float[] values = plainRows(random, count);
        for (double epsilon : new double[] {1e-5, 0.0, 0.1}) {
          for (Normalization normalization : affineVariants(random, epsilon)) {
            String what = String.format("seed %d, %d rows, %s", seed, count, normalization);
            for (RowPasses vector : vectors) {
              assertThat(rowsWritten(vector, values, count, normalization))
                  .as("rows written, %s", what)
                  .isEqualTo(count / 8 * 8);
              assertMatchesTheScalarPasses(vector, values, count, normalization, what);
            }
          }
        }
      }
    }
  }

  /**
   * Random rows of the test distributions, each row's own: mostly plain (a row of NORMAL takes the
   * second pass when its first eight elements' mean strays more than σ from the row's), so only the
   * bits and the eights are asserted.
   */
  @Test
  void rowsOfTheTestDistributionsGetTheBitsOfTheScalarPasses() {
    for (long seed : TestSeeds.seeds()) {
      System.out.println("LayerNormInEightsTest seed " + seed);
      for (RowDistribution distribution : RowDistribution.values()) {
        for (int count : COUNTS) {
          Random random = new Random(TestSeeds.mix(seed, distribution.ordinal(), count));
          float[] values = new float[count * WIDTH];
          for (int row = 0; row < count; row++) {
            System.arraycopy(distribution.floats(random, WIDTH), 0, values, row * WIDTH, WIDTH);
          }
          String what = String.format("seed %d, %s, %d rows", seed, distribution, count);
          for (Normalization normalization : affineVariants(random, 1e-5)) {
            for (RowPasses vector : RowPassesImplementations.vectorVariants()) {
              int written = rowsWritten(vector, values, count, normalization);
              assertThat(written)
                  .as("rows written, %s, %s", what, normalization)
                  .isBetween(0, count);
              assertThat(written % 8).as("rows written, %s, %s", what, normalization).isZero();
              assertMatchesTheScalarPasses(
                  vector, values, count, normalization, what + ", " + normalization);
            }
          }
        }
      }
    }
  }

  @Test
  void aBlockWithARowForAnotherPathEndsTheRun() {
    for (long seed : TestSeeds.seeds()) {
      System.out.println("LayerNormInEightsTest seed " + seed);
      Random random = new Random(TestSeeds.mix(seed, 99));
      for (Placed placed : Placed.values()) {
        for (int at : new int[] {0, 5, 8, 15, 23, 40, 63}) {
          float[] values = plainRows(random, 64);
          placed.put(random, values, at * WIDTH);
          String what = String.format("seed %d, %s at row %d", seed, placed, at);
          Normalization normalization = Normalization.of(Op.LAYER_NORM).withEpsilon(placed.epsilon);
          for (RowPasses vector : RowPassesImplementations.vectorVariants()) {
            assertThat(rowsWritten(vector, values, 64, normalization))
                .as("rows written, %s", what)
                .isEqualTo(at / 8 * 8);
            assertMatchesTheScalarPasses(vector, values, 64, normalization, what);
          }
        }
      }
    }
  }

  /**
   * γ without β: the pass adds −0 for the missing β, which must leave an output of −0 as it is
   * (rows of mean exactly 0 with zeros in them and γ = −1 give −0 there).
   */
  @Test
  void aMissingBiasKeepsNegativeZeros() {
    float[] eight = {0f, 1f, -1f, 0f, 2f, -2f, 0.5f, -0.5f};
    float[] values = new float[16 * WIDTH];
    for (int i = 0; i < values.length; i++) {
      values[i] = eight[i % 8];
    }
    double[] gamma = new double[WIDTH];
    Arrays.fill(gamma, -1.0);
    Normalization normalization = Normalization.of(Op.LAYER_NORM).withWeight(gamma);
    for (RowPasses vector : RowPassesImplementations.vectorVariants()) {
      assertThat(rowsWritten(vector, values, 16, normalization)).isEqualTo(16);
      assertMatchesTheScalarPasses(vector, values, 16, normalization, "γ = −1, zero-mean rows");
      float[] output = new float[values.length];
      CpuKernels.normalizeRows(vector, normalization, values, 0, output, 0, WIDTH, 16);
      assertThat(Float.floatToRawIntBits(output[0])).isEqualTo(Float.floatToRawIntBits(-0f));
    }
  }

  /** Rows that LayerNorm's plain float32 path does not take alone. */
  private enum Placed {
    HUGE(1e-5) {
      @Override
      void put(Random random, float[] values, int at) {
        copy(RowDistribution.HUGE.floats(random, WIDTH), values, at);
      }
    },
    /** Without eps, a variance under 2^-100 takes the float64 fallback. */
    TINY(0.0) {
      @Override
      void put(Random random, float[] values, int at) {
        copy(RowDistribution.TINY.floats(random, WIDTH), values, at);
      }
    },
    FAR_FIRST_ELEMENTS(1e-5) {
      @Override
      void put(Random random, float[] values, int at) {
        copy(RowDistribution.FAR_FIRST_ELEMENTS.floats(random, WIDTH), values, at);
      }
    },
    NAN(1e-5) {
      @Override
      void put(Random random, float[] values, int at) {
        values[at + random.nextInt(WIDTH)] = Float.NaN;
      }
    },
    INFINITE(1e-5) {
      @Override
      void put(Random random, float[] values, int at) {
        values[at + random.nextInt(WIDTH)] = Float.NEGATIVE_INFINITY;
      }
    },
    /** A constant row without eps: variance 0, so an infinite inverse deviation. */
    CONSTANT_WITHOUT_EPSILON(0.0) {
      @Override
      void put(Random random, float[] values, int at) {
        Arrays.fill(values, at, at + WIDTH, 3.5f);
      }
    };

    final double epsilon;

    Placed(double epsilon) {
      this.epsilon = epsilon;
    }

    abstract void put(Random random, float[] values, int at);

    private static void copy(float[] row, float[] values, int at) {
      System.arraycopy(row, 0, values, at, WIDTH);
    }
  }

  /**
   * Rows that are plain by construction: eight random values, repeated four times with noise of 1
   * %, scaled by 10^-3 to 10^3 and moved by up to ±1000. The shift (the mean of the first eight) is
   * then within a few hundredths of σ of the mean, and the variance far inside the safe range.
   */
  private static float[] plainRows(Random random, int count) {
    float[] values = new float[count * WIDTH];
    double[] eight = new double[8];
    for (int row = 0; row < count; row++) {
      double scale = Math.pow(10, random.nextDouble() * 6 - 3);
      double center = (random.nextDouble() * 2 - 1) * 1000;
      for (int i = 0; i < 8; i++) {
        eight[i] = random.nextGaussian();
      }
      for (int i = 0; i < WIDTH; i++) {
        values[row * WIDTH + i] =
            (float) (center + scale * (eight[i % 8] + 0.01 * random.nextGaussian()));
      }
    }
    return values;
  }

  /** Calls the pass itself, out of place, with FloatRowKernels' bounds: how many rows it took. */
  private static int rowsWritten(
      RowPasses vector, float[] values, int count, Normalization normalization) {
    float[] output = new float[values.length];
    double epsilon = normalization.epsilon();
    return vector.layerNormInEights(
        values,
        0,
        output,
        0,
        WIDTH,
        count,
        epsilon,
        FloatRowKernels.smallestSafeSum(
            epsilon, FloatRowKernels.SMALLEST_DOMINATING_VARIANCE_EPSILON),
        FloatRowKernels.LARGEST_SAFE_SUM,
        normalization.floatWeight(),
        normalization.floatBias());
  }

  /**
   * LayerNorm with {@code epsilon}: without γ and β, with γ, with β (as −0 or +0 where the random
   * bias rounds so, which the pass must add, not skip), and with both.
   */
  private static List<Normalization> affineVariants(Random random, double epsilon) {
    Normalization plain = Normalization.of(Op.LAYER_NORM).withEpsilon(epsilon);
    double[] gamma = new double[WIDTH];
    double[] beta = new double[WIDTH];
    for (int i = 0; i < WIDTH; i++) {
      gamma[i] = 1 + 0.5 * random.nextGaussian();
      beta[i] = random.nextGaussian();
    }
    beta[0] = -0.0;
    beta[1] = 0.0;
    return List.of(
        plain,
        plain.withWeight(gamma),
        plain.withBias(beta),
        plain.withWeight(gamma).withBias(beta));
  }

  /** Every row of the run, in place and out of place, against the row alone on scalar passes. */
  private static void assertMatchesTheScalarPasses(
      RowPasses vector, float[] values, int count, Normalization normalization, String what) {
    float[] expected = new float[values.length];
    for (int row = 0; row < count; row++) {
      CpuKernels.normalizeRow(
          ScalarRowPasses.INSTANCE,
          normalization,
          values,
          row * WIDTH,
          expected,
          row * WIDTH,
          WIDTH);
    }
    float[] separate = new float[values.length + 3];
    CpuKernels.normalizeRows(vector, normalization, values, 0, separate, 3, WIDTH, count);
    assertThat(Arrays.copyOfRange(separate, 3, separate.length))
        .as("%s: %s, out of place", vector.description(), what)
        .isEqualTo(expected);
    float[] inPlace = new float[values.length + 5];
    System.arraycopy(values, 0, inPlace, 5, values.length);
    CpuKernels.normalizeRows(vector, normalization, inPlace, 5, inPlace, 5, WIDTH, count);
    assertThat(Arrays.copyOfRange(inPlace, 5, inPlace.length))
        .as("%s: %s, in place", vector.description(), what)
        .isEqualTo(expected);
  }
}

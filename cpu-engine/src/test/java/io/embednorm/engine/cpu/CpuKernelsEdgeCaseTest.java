package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The edge cases of docs/SEMANTICS.md (NaN and infinities; Empty, null and ragged rows; Element
 * types and accumulation; Errors), in float32 and float64, with values that follow from the
 * formulas, on the scalar and the SIMD loops (argument and width checks go through the public entry
 * once).
 */
class CpuKernelsEdgeCaseTest {
  private static final float NEGATIVE_INFINITY = Float.NEGATIVE_INFINITY;
  private static final float POSITIVE_INFINITY = Float.POSITIVE_INFINITY;

  @ParameterizedTest
  @MethodSource("implementationsAndOps")
  void aNaNAnywhereMakesTheWholeRowNaN(RowPasses passes, Op op) {
    for (int position : new int[] {0, 1, 4}) {
      float[] row = {1f, -2f, 3f, 0.5f, 7f};
      row[position] = Float.NaN;
      assertThat(float32(passes, Normalization.of(op), row))
          .as("NaN at %d", position)
          .containsOnly(Float.NaN);
      assertThat(float64(passes, Normalization.of(op), row))
          .as("NaN at %d", position)
          .containsOnly(Double.NaN);
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void softmaxOfAllNegativeInfinityIsNaN(RowPasses passes) {
    float[] row = {NEGATIVE_INFINITY, NEGATIVE_INFINITY, NEGATIVE_INFINITY};
    for (Op op : new Op[] {Op.SOFTMAX, Op.LOG_SOFTMAX}) {
      assertThat(float32(passes, Normalization.of(op), row)).as("%s", op).containsOnly(Float.NaN);
      assertThat(float64(passes, Normalization.of(op), row)).as("%s", op).containsOnly(Double.NaN);
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void softmaxWithPositiveInfinityIsNaN(RowPasses passes) {
    float[] row = {1f, POSITIVE_INFINITY, -3f};
    for (Op op : new Op[] {Op.SOFTMAX, Op.LOG_SOFTMAX, Op.LAYER_NORM}) {
      assertThat(float32(passes, Normalization.of(op), row)).as("%s", op).containsOnly(Float.NaN);
      assertThat(float64(passes, Normalization.of(op), row)).as("%s", op).containsOnly(Double.NaN);
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void anInfinityInRmsNormAndTheNormsIsNaNWhereItIsAndZeroElsewhere(RowPasses passes) {
    // x / sqrt(inf) = 0 for finite x, inf / inf = NaN: as the reference and PyTorch.
    float[] row = {1f, POSITIVE_INFINITY, -3f};
    for (Op op : new Op[] {Op.RMS_NORM, Op.L2_NORMALIZE, Op.L1_NORMALIZE, Op.LINF_NORMALIZE}) {
      assertThat(float32(passes, Normalization.of(op), row))
          .as("%s", op)
          .containsExactly(0f, Float.NaN, -0f);
      assertThat(float64(passes, Normalization.of(op), row))
          .as("%s", op)
          .containsExactly(0.0, Double.NaN, -0.0);
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void anIsolatedNegativeInfinityGetsNoProbability(RowPasses passes) {
    float[] row = {0f, NEGATIVE_INFINITY, 0f};
    assertThat(float32(passes, Normalization.of(Op.SOFTMAX), row)).containsExactly(0.5f, 0f, 0.5f);
    assertThat(float64(passes, Normalization.of(Op.SOFTMAX), row)).containsExactly(0.5, 0.0, 0.5);
    float[] logarithms = float32(passes, Normalization.of(Op.LOG_SOFTMAX), row);
    assertThat(logarithms[0]).isCloseTo((float) -Math.log(2), within(1e-7f));
    assertThat(logarithms[1]).isEqualTo(NEGATIVE_INFINITY);
    assertThat(logarithms[2]).isCloseTo((float) -Math.log(2), within(1e-7f));
    assertThat(float64(passes, Normalization.of(Op.LOG_SOFTMAX), row))
        .containsExactly(-Math.log(2), Double.NEGATIVE_INFINITY, -Math.log(2));
  }

  @ParameterizedTest
  @EnumSource(Op.class)
  void anEmptyRowWritesNothingEvenWithAWeight(Op op) {
    Normalization normalization = Normalization.of(op);
    if (op.takesWeight()) {
      normalization = normalization.withWeight(new double[] {1, 2, 3});
    }
    float[] floats = {42f, 43f};
    CpuKernels.normalizeRow(normalization, floats, 1, floats, 1, 0);
    assertThat(floats).containsExactly(42f, 43f);
    double[] doubles = {42, 43};
    CpuKernels.normalizeRow(normalization, doubles, 2, doubles, 0, 0);
    assertThat(doubles).containsExactly(42, 43);
  }

  @Test
  void aWeightOfAnotherLengthIsAnErrorNamingOpAndLengths() {
    Normalization normalization = Normalization.of(Op.RMS_NORM).withWeight(new double[] {1, 2, 3});
    float[] row = new float[4];
    assertThatThrownBy(() -> CpuKernels.normalizeRow(normalization, row, 0, row, 0, 4))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot apply rms_norm to a row: weight has 3 elements but the row has 4");
    double[] wide = new double[2];
    assertThatThrownBy(() -> CpuKernels.normalizeRow(normalization, wide, 0, wide, 0, 2))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot apply rms_norm to a row: weight has 3 elements but the row has 2");
  }

  @Test
  void aBiasOfAnotherLengthIsAnErrorNamingOpAndLengths() {
    Normalization normalization =
        Normalization.of(Op.LAYER_NORM)
            .withWeight(new double[] {1, 1, 1, 1})
            .withBias(new double[] {0, 0, 0, 0, 0});
    float[] row = new float[4];
    assertThatThrownBy(() -> CpuKernels.normalizeRow(normalization, row, 0, row, 0, 4))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot apply layer_norm to a row: bias has 5 elements but the row has 4");
  }

  @Test
  void rangesOutsideTheArraysAreRejected() {
    float[] row = new float[4];
    Normalization normalization = Normalization.of(Op.SOFTMAX);
    assertThatThrownBy(() -> CpuKernels.normalizeRow(normalization, row, 1, new float[8], 0, 4))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> CpuKernels.normalizeRow(normalization, row, 0, row, 2, 4))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void zeroRowsStayZeroWithTheDefaultEpsilonAndAreNaNWithoutOne(RowPasses passes) {
    float[] zeros = new float[5];
    for (Op op :
        new Op[] {
          Op.RMS_NORM, Op.LAYER_NORM, Op.L2_NORMALIZE, Op.L1_NORMALIZE, Op.LINF_NORMALIZE
        }) {
      assertThat(float32(passes, Normalization.of(op), zeros)).as("%s", op).containsOnly(0f);
      assertThat(float64(passes, Normalization.of(op), zeros)).as("%s", op).containsOnly(0.0);
      // 0 / sqrt(0) = 0 / 0.
      Normalization noEpsilon = Normalization.of(op).withEpsilon(0);
      assertThat(float32(passes, noEpsilon, zeros)).as("%s eps 0", op).containsOnly(Float.NaN);
      assertThat(float64(passes, noEpsilon, zeros)).as("%s eps 0", op).containsOnly(Double.NaN);
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void aConstantRowLayerNormalizesToItsBias(RowPasses passes) {
    float[] row = {1e6f, 1e6f, 1e6f};
    Normalization normalization =
        Normalization.of(Op.LAYER_NORM)
            .withWeight(new double[] {2, 2, 2})
            .withBias(new double[] {1, -1, 0.5});
    assertThat(float32(passes, normalization, row)).containsExactly(1f, -1f, 0.5f);
    assertThat(float64(passes, normalization, row)).containsExactly(1.0, -1.0, 0.5);
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void extremeMagnitudesWithoutEpsilonNormalizeLikeOrdinaryOnes(RowPasses passes) {
    // With eps = 0 the ops are scale invariant: [1, 2]·s must give what [1, 2] gives, although
    // s² over- or underflows float32.
    for (float scale : new float[] {1e30f, 3e38f / 2, 1e-30f, 1e-40f, 1}) {
      float[] row = {scale, 2 * scale};
      String what = "scale " + scale;
      float[] rms = float32(passes, Normalization.of(Op.RMS_NORM).withEpsilon(0), row);
      assertThat(rms[0]).as(what).isCloseTo((float) (1 / Math.sqrt(2.5)), within(1e-7f));
      assertThat(rms[1]).as(what).isCloseTo((float) (2 / Math.sqrt(2.5)), within(1e-7f));
      float[] l2 = float32(passes, Normalization.of(Op.L2_NORMALIZE).withEpsilon(0), row);
      assertThat(l2[0]).as(what).isCloseTo((float) (1 / Math.sqrt(5)), within(1e-7f));
      assertThat(l2[1]).as(what).isCloseTo((float) (2 / Math.sqrt(5)), within(1e-7f));
      float[] layer = float32(passes, Normalization.of(Op.LAYER_NORM).withEpsilon(0), row);
      assertThat(layer[0]).as(what).isCloseTo(-1f, within(1e-6f));
      assertThat(layer[1]).as(what).isCloseTo(1f, within(1e-6f));
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void pNormsOfExtremeMagnitudesNormalizeLikeOrdinaryOnes(RowPasses passes) {
    // [1, -2, 4]·s over ‖·‖₁ = 7s and ‖·‖∞ = 4s, with eps = 0: Σ|x| overflows float32 at 3e38,
    // 1 / ‖x‖ is no normal float from 1e38 up and below 1e-38; the float64 fallback keeps them.
    for (float scale : new float[] {1e35f, 3e38f / 4, 1e-35f, 1e-40f, 1e-44f, 1}) {
      float[] row = {scale, -2 * scale, 4 * scale};
      String what = "scale " + scale;
      double[] l1 = {1 / 7.0, -2 / 7.0, 4 / 7.0};
      double[] linf = {0.25, -0.5, 1};
      float[] got = float32(passes, Normalization.of(Op.L1_NORMALIZE).withEpsilon(0), row);
      float[] gotInf = float32(passes, Normalization.of(Op.LINF_NORMALIZE).withEpsilon(0), row);
      for (int i = 0; i < 3; i++) {
        // 1e-44 is a subnormal float32 held to 2 bits: only its own multiples are exact.
        float tolerance = scale < 1e-40f ? 0.2f : 1e-7f;
        assertThat(got[i]).as(what).isCloseTo((float) l1[i], within(tolerance));
        assertThat(gotInf[i]).as(what).isCloseTo((float) linf[i], within(tolerance));
      }
    }
    for (double scale : new double[] {1e300, 1e-300}) {
      double[] wide = {scale, -2 * scale, 4 * scale};
      double[] l1 = new double[3];
      CpuKernels.normalizeRow(
          passes, Normalization.of(Op.L1_NORMALIZE).withEpsilon(0), wide, 0, l1, 0, 3);
      assertThat(l1[2]).as("scale %s", scale).isCloseTo(4 / 7.0, within(1e-15));
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void tinyRowsAreDominatedByTheDefaultEpsilon(RowPasses passes) {
    // mean(x²) = 2.5e-40 is nothing against eps = 1e-6: y = x / 1e-3.
    float[] rms = float32(passes, Normalization.of(Op.RMS_NORM), new float[] {1e-20f, 2e-20f});
    assertThat(rms[0]).isCloseTo(1e-17f, within(1e-23f));
    assertThat(rms[1]).isCloseTo(2e-17f, within(1e-23f));
    // ‖x‖ ≈ 2.2e-20 is below eps = 1e-12: y = x / 1e-12.
    float[] l2 = float32(passes, Normalization.of(Op.L2_NORMALIZE), new float[] {1e-20f, 2e-20f});
    assertThat(l2[0]).isCloseTo(1e-8f, within(1e-14f));
    assertThat(l2[1]).isCloseTo(2e-8f, within(1e-14f));
    for (Op op : new Op[] {Op.L1_NORMALIZE, Op.LINF_NORMALIZE}) {
      float[] norm = float32(passes, Normalization.of(op), new float[] {1e-20f, -2e-20f});
      assertThat(norm[0]).as("%s", op).isCloseTo(1e-8f, within(1e-14f));
      assertThat(norm[1]).as("%s", op).isCloseTo(-2e-8f, within(1e-14f));
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void layerNormStaysAccurateForALargeMeanWhereTheNaiveFormulaFails(RowPasses passes) {
    Random random = new Random(7);
    float[] row = new float[768];
    for (int i = 0; i < row.length; i++) {
      row[i] = (float) (1e6 + random.nextDouble() - 0.5);
    }
    Normalization normalization = Normalization.of(Op.LAYER_NORM);
    double[] reference =
        ReferenceNormalization.apply(
            Op.LAYER_NORM, ReferenceNormalization.widen(row), normalization.epsilon(), null, null);
    assertThat(RowComparison.firstViolation(reference, float32(passes, normalization, row)))
        .isNull();
    // The tolerance is tight enough to catch float32 E[x²] − E[x]², which docs/SEMANTICS.md,
    // Element types and accumulation, rules out.
    float sum = 0;
    float sumOfSquares = 0;
    for (float value : row) {
      sum += value;
      sumOfSquares += value * value;
    }
    float mean = sum / row.length;
    float variance = Math.max(sumOfSquares / row.length - mean * mean, 0f);
    float[] naive = new float[row.length];
    for (int i = 0; i < row.length; i++) {
      naive[i] = (float) ((row[i] - mean) / Math.sqrt(variance + 1e-5));
    }
    assertThat(RowComparison.firstViolation(reference, naive)).isNotNull();
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void layerNormIsAccurateOnBothSidesOfTheSecondPass(RowPasses passes) {
    // LayerNormStatistics takes Σd² − (Σd)²/D from one pass while (Σd)²/D is at most half of Σd²,
    // and a second pass beyond: rows whose first eight elements (the shift) sit t spreads from the
    // rest, t on both sides of that line, around 0 and around 1e6 (spread 0.5).
    int[] sides = new int[2];
    for (long seed : TestSeeds.seeds()) {
      for (int width : new int[] {16, 32, 100, 128, 768, 4096}) {
        for (double center : new double[] {0, 1e6}) {
          double spread = center == 0 ? 1 : 0.1;
          for (double distance : new double[] {0.3, 0.8, 1.2, 2, 3, 6, 20, 1000}) {
            Random random = new Random(TestSeeds.mix(seed, width, (long) center, (long) distance));
            float[] row = new float[width];
            for (int i = 0; i < width; i++) {
              double offset = i < 8 ? distance * Math.sqrt(width / 8.0) : 0;
              row[i] = (float) (center + spread * (random.nextGaussian() + offset));
            }
            double[] wide = ReferenceNormalization.widen(row);
            double shift = Arrays.stream(wide, 0, 8).average().orElseThrow();
            double mean = Arrays.stream(wide).average().orElseThrow();
            double squares = Arrays.stream(wide).map(x -> (x - shift) * (x - shift)).sum();
            sides[width * (shift - mean) * (shift - mean) > squares / 2 ? 1 : 0]++;
            Normalization normalization = Normalization.of(Op.LAYER_NORM);
            double[] reference =
                ReferenceNormalization.apply(
                    Op.LAYER_NORM, wide, normalization.epsilon(), null, null);
            assertThat(RowComparison.firstViolation(reference, float32(passes, normalization, row)))
                .as("seed %d, width %d, center %s, distance %s", seed, width, center, distance)
                .isNull();
          }
        }
      }
    }
    assertThat(sides).as("rows with one pass, rows with two").doesNotContain(0);
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void longConstantRowsKeepTheirAccuracy(RowPasses passes) {
    // A long sequential float32 sum of a constant drifts, every rounding pointing the same way;
    // the blocked pairwise sums must not.
    int width = (1 << 20) + 3;
    float[] row = new float[width];
    Arrays.fill(row, 0.1f);
    float[] rms = float32(passes, Normalization.of(Op.RMS_NORM).withEpsilon(0), row);
    assertThat(rms[0]).isCloseTo(1f, within(1e-6f));
    assertThat(rms[width - 1]).isCloseTo(1f, within(1e-6f));
    float[] l2 = float32(passes, Normalization.of(Op.L2_NORMALIZE), row);
    assertThat((double) l2[7]).isCloseTo(1 / Math.sqrt(width), within(1e-6 / Math.sqrt(width)));
    float[] softmax = float32(passes, Normalization.of(Op.SOFTMAX), row);
    assertThat((double) softmax[5]).isCloseTo(1.0 / width, within(1e-6 / width));
  }

  @ParameterizedTest
  @MethodSource("implementationsAndOps")
  void theInputMayBeTheOutput(RowPasses passes, Op op) {
    Random random = new Random(op.ordinal());
    for (RowDistribution distribution : RowDistribution.values()) {
      float[] row = distribution.floats(random, 300);
      Normalization normalization = Normalization.of(op);
      if (op.takesEpsilon()) {
        normalization = normalization.withEpsilon(0);
      }
      float[] inPlace = row.clone();
      CpuKernels.normalizeRow(passes, normalization, inPlace, 0, inPlace, 0, row.length);
      assertThat(inPlace).as("%s", distribution).isEqualTo(float32(passes, normalization, row));
      double[] wide = ReferenceNormalization.widen(row);
      double[] expected = float64(passes, normalization, row);
      CpuKernels.normalizeRow(passes, normalization, wide, 0, wide, 0, wide.length);
      assertThat(wide).as("%s", distribution).isEqualTo(expected);
    }
  }

  static Stream<RowPasses> implementations() {
    return RowPassesImplementations.implementations();
  }

  static Stream<Arguments> implementationsAndOps() {
    return RowPassesImplementations.crossedWith((Object[]) Op.values());
  }

  private static float[] float32(RowPasses passes, Normalization normalization, float[] row) {
    float[] output = new float[row.length];
    CpuKernels.normalizeRow(passes, normalization, row.clone(), 0, output, 0, row.length);
    return output;
  }

  private static double[] float64(RowPasses passes, Normalization normalization, float[] row) {
    double[] output = new double[row.length];
    CpuKernels.normalizeRow(
        passes, normalization, ReferenceNormalization.widen(row), 0, output, 0, row.length);
    return output;
  }
}

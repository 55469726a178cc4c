package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random rows of every op, width, distribution and parameter variant against the float64 reference
 * ({@link ReferenceNormalization}), with the float32 and float64 bounds of docs/SEMANTICS.md,
 * Accuracy, on the scalar and the SIMD loops.
 */
class CpuKernelsAccuracyTest {
  static final int[] WIDTHS = {1, 2, 3, 31, 32, 33, 767, 768, 4096, 32769};

  static Stream<Arguments> cases() {
    return RowPassesImplementations.all().stream()
        .flatMap(
            passes ->
                Arrays.stream(Op.values())
                    .flatMap(
                        op ->
                            Arrays.stream(RowDistribution.values())
                                .map(d -> Arguments.of(passes, op, d))));
  }

  @ParameterizedTest(name = "{0}: float32 {1} on {2} rows")
  @MethodSource("cases")
  void float32RowsMatchTheFloat64Reference(RowPasses passes, Op op, RowDistribution distribution) {
    for (long seed : TestSeeds.seeds()) {
      for (int width : WIDTHS) {
        Random random =
            new Random(TestSeeds.mix(seed, op.ordinal(), distribution.ordinal(), width));
        for (Normalization normalization : NormalizationVariants.of(op, width, random)) {
          for (int row = 0; row < rowsFor(width); row++) {
            float[] input = distribution.floats(random, width);
            float[] output = new float[width + 2];
            CpuKernels.normalizeRow(passes, normalization, input, 0, output, 1, width);
            double[] reference =
                ReferenceNormalization.apply(
                    op,
                    ReferenceNormalization.widen(input),
                    normalization.epsilon(),
                    ReferenceNormalization.widen(normalization.floatWeight()),
                    ReferenceNormalization.widen(normalization.floatBias()));
            assertThat(
                    RowComparison.firstViolation(
                        reference, Arrays.copyOfRange(output, 1, width + 1)))
                .as(
                    "seed %d, %s, %s, width %d, row %d",
                    seed, normalization, distribution, width, row)
                .isNull();
            assertThat(output[0]).as("before the row").isZero();
            assertThat(output[width + 1]).as("after the row").isZero();
          }
        }
      }
    }
  }

  @ParameterizedTest(name = "{0}: float64 {1} on {2} rows")
  @MethodSource("cases")
  void float64RowsMatchTheFloat64Reference(RowPasses passes, Op op, RowDistribution distribution) {
    for (long seed : TestSeeds.seeds()) {
      for (int width : WIDTHS) {
        Random random =
            new Random(TestSeeds.mix(seed, op.ordinal(), distribution.ordinal(), width));
        for (Normalization normalization : NormalizationVariants.of(op, width, random)) {
          for (int row = 0; row < rowsFor(width); row++) {
            double[] input = distribution.doubles(random, width);
            double[] output = new double[width];
            CpuKernels.normalizeRow(passes, normalization, input, 0, output, 0, width);
            double[] reference =
                ReferenceNormalization.apply(
                    op,
                    input,
                    normalization.epsilon(),
                    normalization.weight(),
                    normalization.bias());
            assertThat(RowComparison.firstViolation(reference, output))
                .as(
                    "seed %d, %s, %s, width %d, row %d",
                    seed, normalization, distribution, width, row)
                .isNull();
          }
        }
      }
    }
  }

  private static int rowsFor(int width) {
    return width > 1000 ? 1 : 3;
  }
}

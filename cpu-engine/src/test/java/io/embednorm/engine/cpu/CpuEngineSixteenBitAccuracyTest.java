package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.NarrowReference;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * float16 and bfloat16 batches through the engine: every output within 1 ulp (of the narrow type)
 * of the float64 reference correctly rounded to that type (docs/SEMANTICS.md, Accuracy), NaN and
 * ±inf exactly where the reference has them.
 *
 * <p>One allowance: outputs near zero that come from cancellation (LayerNorm's x − μ or + β,
 * log-softmax's x − max − log Σ) carry the float32 accumulation's absolute error of about 1e-7 of
 * the row maximum, which can exceed a float16 ulp there. Those may differ from the reference by the
 * float32 absolute bound (1e-6 · max|ref|) plus one narrow ulp; no other float32 kernel could do
 * better. The test also checks that this allowance is needed rarely on rows of one magnitude. Rows
 * of mixed magnitudes legitimately need it often: most of their outputs lie far below the row's
 * maximum, where the absolute bound governs. Over 300 seeds, one 4096-wide LayerNorm case in about
 * a hundred needed it for more than 1 % of a seed's elements. Every element is still checked
 * against the allowance itself.
 */
class CpuEngineSixteenBitAccuracyTest {
  private static final int[] WIDTHS = {1, 3, 32, 33, 768, 4096};
  private static final int ROWS = 3;

  static Stream<Arguments> cases() {
    return Stream.of(ElementType.FLOAT16, ElementType.BFLOAT16)
        .flatMap(
            type ->
                Arrays.stream(Op.values())
                    .flatMap(
                        op ->
                            Stream.of(RowDistribution.NORMAL, RowDistribution.MIXED_MAGNITUDES)
                                .map(distribution -> Arguments.of(type, op, distribution))));
  }

  @ParameterizedTest(name = "{0} {1} on {2} rows")
  @MethodSource("cases")
  void withinOneUlpOfTheCorrectlyRoundedReference(
      ElementType type, Op op, RowDistribution distribution) {
    NarrowReference narrow =
        type == ElementType.FLOAT16 ? NarrowReference.FLOAT16 : NarrowReference.BFLOAT16;
    CpuEngine engine = new CpuEngine();
    long[] allowances = new long[1];
    long elements = 0;
    for (long seed : TestSeeds.seeds()) {
      for (int width : WIDTHS) {
        Random random =
            new Random(
                TestSeeds.mix(seed, type.ordinal(), op.ordinal(), distribution.ordinal(), width));
        for (Normalization normalization : NormalizationVariants.of(op, width, random)) {
          short[] input = new short[ROWS * width];
          for (int i = 0; i < input.length; i++) {
            input[i] = narrow.round(distribution.next(random));
          }
          ByteBuffer output =
              ByteBuffer.allocateDirect(input.length * 2).order(ByteOrder.LITTLE_ENDIAN);
          engine.normalize(
              normalization, RowBatch.fixedWidth(type, ROWS, width, encode(input), output));
          elements += input.length;
          for (int row = 0; row < ROWS; row++) {
            double[] x = new double[width];
            for (int i = 0; i < width; i++) {
              x[i] = narrow.value(input[row * width + i]);
            }
            double[] reference =
                ReferenceNormalization.apply(
                    op,
                    x,
                    normalization.epsilon(),
                    ReferenceNormalization.widen(normalization.floatWeight()),
                    ReferenceNormalization.widen(normalization.floatBias()));
            String violation =
                NarrowComparison.firstViolation(narrow, reference, output, row * width, allowances);
            assertThat(violation)
                .as(
                    "seed %d, %s, %s, %s, width %d, row %d",
                    seed, type, normalization, distribution, width, row)
                .isNull();
          }
        }
      }
    }
    if (distribution == RowDistribution.NORMAL) {
      assertThat(allowances[0])
          .as("elements that needed the near-zero allowance, of %d", elements)
          .isLessThanOrEqualTo(elements / 1000);
    }
  }

  private static ByteBuffer encode(short[] values) {
    ByteBuffer buffer = ByteBuffer.allocate(values.length * 2).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < values.length; i++) {
      buffer.putShort(i * 2, values[i]);
    }
    return buffer;
  }
}

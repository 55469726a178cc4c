package io.embednorm.engine.cuda;

import static io.embednorm.engine.CausalConvolutionReference.firstOutsideBound;
import static io.embednorm.engine.CausalConvolutionReference.randomKernel;
import static io.embednorm.engine.CausalConvolutionReference.randomSequence;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.TestSeeds;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/** The causal_conv kernel against the float64 reference, sequence by sequence. */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class CudaCausalConvolutionGpuTest {
  private static CudaCausalConvolution convolution;

  static boolean gpuUsable() {
    return CudaEngine.unavailableReason() == null;
  }

  @BeforeAll
  static void requireGpu() {
    String why = CudaEngine.unavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    convolution = new CudaCausalConvolution(CudaContext.of(0));
  }

  @Test
  void matchesTheFloat64ReferenceAcrossShapes() {
    // sequences, steps, channels, kernel steps: partial blocks of every kind, T = 4096, the B32
    // T768
    // of the reference size (on fewer channels, to keep the float64 reference quick)
    int[][] shapes = {
      {1, 1, 1, 1},
      {9, 70, 33, 75},
      {8, 64, 32, 64},
      {3, 129, 40, 200},
      {32, 768, 64, 768},
      {3, 4096, 40, 4096},
      {5, 300, 100, 310}
    };
    for (long seed : TestSeeds.seeds()) {
      for (int[] shape : shapes) {
        int sequences = shape[0];
        int steps = shape[1];
        int channels = shape[2];
        Random random = new Random(TestSeeds.mix(seed, shape[0], shape[1], shape[2], shape[3]));
        float[][] w = randomKernel(random, channels, shape[3]);
        float[] values = randomSequence(random, sequences * steps, channels);
        float eps = 0.125f;
        float[] out = convolution.convolve(ConvolutionKernel.of(w), eps, values, sequences, steps);
        check(
            w,
            eps,
            values,
            out,
            sequences,
            steps,
            channels,
            "seed " + seed + " " + Arrays.toString(shape));
      }
    }
  }

  @Test
  void nanAndInfinityReachOnlyLaterStepsOfTheirChannel() {
    int sequences = 9;
    int steps = 70;
    int channels = 33;
    Random random = new Random(3);
    float[][] w = randomKernel(random, channels, steps);
    float[] values = randomSequence(random, sequences * steps, channels);
    values[(2 * steps + 41) * channels + 5] = Float.NaN;
    values[(8 * steps + 12) * channels + 32] = Float.NEGATIVE_INFINITY;
    float[] out = convolution.convolve(ConvolutionKernel.of(w), 0f, values, sequences, steps);
    assertThat(out[(2 * steps + 40) * channels + 5]).isFinite();
    assertThat(out[(2 * steps + 41) * channels + 5]).isNaN();
    assertThat(out[(8 * steps + 11) * channels + 32]).isFinite();
    check(w, 0f, values, out, sequences, steps, channels, "non-finite inputs");
  }

  @Test
  void infiniteWeightsAndInputsTooLargeToSplitKeepTheirIeeeResults() {
    // the tensor cores take each operand as two tf32 halves, which turns ∞ · k into NaN and
    // overflows on |k| near Float.MAX_VALUE: such operands go through plain multiply-adds
    int sequences = 9;
    int steps = 70;
    int channels = 33;
    Random random = new Random(5);
    float[][] w = randomKernel(random, channels, steps);
    w[6][steps - 1 - 3] = Float.POSITIVE_INFINITY; // channel 6, lag 3
    w[9][steps - 1 - 10] = Float.NaN; // channel 9, lag 10
    float[] values = randomSequence(random, sequences * steps, channels);
    values[(4 * steps + 20) * channels + 7] = Float.MAX_VALUE; // its tf32 half rounds to ∞
    float[] out = convolution.convolve(ConvolutionKernel.of(w), 0f, values, sequences, steps);
    assertThat(out[(2 * steps + 2) * channels + 6]).isFinite();
    assertThat(out[(2 * steps + 3) * channels + 6]).isInfinite();
    assertThat(out[(2 * steps + 10) * channels + 9]).isNaN();
    assertThat(out[(4 * steps + 20) * channels + 7]).isFinite();
    check(w, 0f, values, out, sequences, steps, channels, "non-finite weights, huge input");
  }

  private static void check(
      float[][] w,
      float eps,
      float[] values,
      float[] out,
      int sequences,
      int steps,
      int channels,
      String what) {
    int length = steps * channels;
    for (int s = 0; s < sequences; s++) {
      float[] k = Arrays.copyOfRange(values, s * length, (s + 1) * length);
      float[] o = Arrays.copyOfRange(out, s * length, (s + 1) * length);
      assertThat(firstOutsideBound(w, eps, k, steps, o))
          .as("%s, sequence %d", what, s)
          .isEqualTo(-1);
    }
  }
}

package io.embednorm.engine.cpu;

import static io.embednorm.engine.CausalConvolutionReference.firstOutsideBound;
import static io.embednorm.engine.CausalConvolutionReference.randomKernel;
import static io.embednorm.engine.CausalConvolutionReference.randomSequence;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.CausalConvolution;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.TestSeeds;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CpuCausalConvolutionTest {
  private final CausalConvolution convolution = Engines.causalConvolution();

  @Test
  void matchesTheFloat64ReferenceAcrossShapes() {
    int[][] shapes = { // channels, steps, kernel steps
      {1, 1, 1}, {3, 5, 5}, {64, 17, 17}, {65, 33, 40}, {130, 9, 64}, {2, 4096, 4096}, {7, 300, 301}
    };
    for (long seed : TestSeeds.seeds()) {
      for (int[] shape : shapes) {
        for (float eps : new float[] {0f, 0.25f}) {
          Random random = new Random(TestSeeds.mix(seed, shape[0], shape[1], shape[2]));
          float[][] w = randomKernel(random, shape[0], shape[2]);
          float[] k = randomSequence(random, shape[1], shape[0]);
          float[] out = convolve(w, eps, k, shape[1]);
          assertThat(firstOutsideBound(w, eps, k, shape[1], out))
              .as(
                  "seed %d, C %d, T %d, kernel T %d, eps %s",
                  seed, shape[0], shape[1], shape[2], eps)
              .isEqualTo(-1);
        }
      }
    }
  }

  @Test
  void aShortSequenceUsesTheKernelsLastColumns() {
    float[][] w = {{100f, 10f, 1f}};
    float[] out = convolve(w, 0f, new float[] {1f, 2f}, 2);
    // out[0] = w[2]·k0; out[1] = w[1]·k0 + w[2]·k1
    assertThat(out).containsExactly(1f, 12f);
  }

  @Test
  void nanAndInfinityReachOnlyLaterStepsOfTheirChannel() {
    float[][] w = randomKernel(new Random(7), 2, 4);
    float[] k = randomSequence(new Random(8), 4, 2);
    k[2 * 2] = Float.NaN; // step 2, channel 0
    k[1 * 2 + 1] = Float.POSITIVE_INFINITY; // step 1, channel 1
    float[] out = convolve(w, 0f, k, 4);
    assertThat(out[0]).isFinite();
    assertThat(out[2]).isFinite();
    assertThat(out[4]).isNaN();
    assertThat(out[6]).isNaN();
    assertThat(out[1]).isFinite();
    assertThat(Float.isInfinite(out[3]) || Float.isNaN(out[3])).isTrue();
    assertThat(firstOutsideBound(w, 0f, k, 4, out)).isEqualTo(-1);
  }

  @Test
  void zeroStepsWriteNothing() {
    float[] out = {5f};
    convolution.convolve(
        ConvolutionKernel.of(new float[][] {{1f}}), 0f, new float[0], 0, 0, out, 0);
    assertThat(out).containsExactly(5f);
  }

  @Test
  void aSequenceLongerThanTheKernelFails() {
    ConvolutionKernel kernel = ConvolutionKernel.of(new float[][] {{1f, 2f}});
    assertThatThrownBy(() -> convolution.convolve(kernel, 0f, new float[3], 0, 3, new float[3], 0))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot convolve a sequence of 3 steps with causal_conv: the kernel has 2 steps"
                + " (a sequence may be at most as long as the kernel)");
  }

  @Test
  void raggedKernelRowsFail() {
    assertThatThrownBy(() -> ConvolutionKernel.of(new float[][] {{1f, 2f}, {1f}}))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith("Cannot make a convolution kernel: channel 1 has 1 weights");
  }

  private float[] convolve(float[][] w, float eps, float[] k, int steps) {
    float[] out = new float[k.length + 2];
    Arrays.fill(out, -99f);
    float[] padded = new float[k.length + 3];
    System.arraycopy(k, 0, padded, 3, k.length);
    convolution.convolve(ConvolutionKernel.of(w), eps, padded, 3, steps, out, 2);
    assertThat(out[0]).isEqualTo(-99f);
    return Arrays.copyOfRange(out, 2, out.length);
  }
}

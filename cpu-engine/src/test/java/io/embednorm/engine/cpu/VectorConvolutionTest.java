package io.embednorm.engine.cpu;

import static io.embednorm.engine.CausalConvolutionReference.randomKernel;
import static io.embednorm.engine.CausalConvolutionReference.randomSequence;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.TestSeeds;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The Vector API loops of {@code causal_conv} against the scalar loops, bit for bit (any NaN as any
 * other): whole blocks of 16 channels and 4 steps and the channels and steps past them, channel
 * ranges that start inside a sequence's row, and hostile values (NaN, infinities, -0, subnormals,
 * values whose products overflow) in inputs and weights.
 */
class VectorConvolutionTest {
  private static final float[] HOSTILE = {
    Float.NaN,
    Float.POSITIVE_INFINITY,
    Float.NEGATIVE_INFINITY,
    -0f,
    Float.MIN_VALUE,
    -Float.MIN_NORMAL / 3,
    Float.MAX_VALUE,
    -3e38f
  };

  @Test
  void givesTheBitsOfTheScalarLoops() {
    ConvolutionLoops vector = RowPassSelection.VECTOR_CONVOLUTION;
    assumeTrue(vector != null, "no Vector API or no 256-bit vectors in this JVM");
    int[][] shapes = { // channels, steps, first channel, end channel
      {16, 4, 0, 16},
      {16, 1, 0, 16},
      {17, 7, 0, 17},
      {33, 70, 0, 33},
      {64, 129, 16, 48},
      {100, 300, 3, 97},
      {130, 9, 64, 130},
      {768, 64, 0, 768},
      {5, 11, 0, 5}
    };
    for (long seed : TestSeeds.seeds()) {
      for (int[] shape : shapes) {
        for (boolean hostile : new boolean[] {false, true}) {
          int channels = shape[0];
          int steps = shape[1];
          long mixed = TestSeeds.mix(seed, shape[0], shape[1], shape[2], hostile ? 1 : 0);
          Random random = new Random(mixed);
          float[][] w = randomKernel(random, channels, steps);
          float[] values = randomSequence(random, steps + 3, channels);
          if (hostile) {
            for (int i = 0; i < 12; i++) {
              values[random.nextInt(values.length)] = HOSTILE[random.nextInt(HOSTILE.length)];
              w[random.nextInt(channels)][random.nextInt(steps)] =
                  HOSTILE[random.nextInt(HOSTILE.length)];
            }
          }
          float[] weights = CpuCausalConvolution.lagMajor(ConvolutionKernel.of(w), steps);
          for (float eps : new float[] {0f, -0f, 0.125f}) {
            float[] expected = run(ScalarConvolution.INSTANCE, weights, eps, values, shape);
            float[] actual = run(vector, weights, eps, values, shape);
            for (int i = 0; i < expected.length; i++) {
              // floatToIntBits: a NaN's sign and payload follow the operand order the JIT picks,
              // in the scalar loops too
              assertThat(Float.floatToIntBits(actual[i]))
                  .as(
                      "seed %d, C %d, T %d, channels %d-%d, hostile %s, eps %s: step %d, channel"
                          + " %d (%s against %s)",
                      seed,
                      channels,
                      steps,
                      shape[2],
                      shape[3],
                      hostile,
                      eps,
                      i / channels,
                      i % channels,
                      actual[i],
                      expected[i])
                  .isEqualTo(Float.floatToIntBits(expected[i]));
            }
          }
        }
      }
    }
  }

  /**
   * The loops over the sequence that starts one step into {@code values}, into an output that
   * starts two floats in, untouched outside the range filled with a marker.
   */
  private static float[] run(
      ConvolutionLoops loops, float[] weights, float eps, float[] values, int[] shape) {
    int channels = shape[0];
    int steps = shape[1];
    float[] output = new float[(steps + 1) * channels];
    java.util.Arrays.fill(output, 7f);
    loops.convolveChannels(
        weights, channels, eps, values, channels, steps, output, 2, shape[2], shape[3]);
    return output;
  }
}

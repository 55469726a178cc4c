package io.embednorm.engine.cpu;

import static io.embednorm.engine.CausalConvolutionReference.firstOutsideBound;
import static io.embednorm.engine.CausalConvolutionReference.randomKernel;
import static io.embednorm.engine.CausalConvolutionReference.randomSequence;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@code causal_conv} of a batch on the CPU engine's threads: every sequence within the float64
 * reference's bound and bit for bit what the one-sequence loops give, whatever the split of
 * sequences and channel blocks among threads (more threads than sequences included).
 */
class CpuConvolutionBatchTest {
  @Test
  void aBatchOnManyThreadsGivesTheBitsOfTheLoopsAndStaysWithinTheBound() {
    int[][] shapes = { // sequences, steps, channels, kernel steps
      {1, 1, 1, 1}, {3, 70, 130, 75}, {17, 40, 64, 40}, {2, 600, 200, 600}, {40, 9, 7, 9}
    };
    for (long seed : TestSeeds.seeds()) {
      for (int[] shape : shapes) {
        int sequences = shape[0];
        int steps = shape[1];
        int channels = shape[2];
        Random random = new Random(TestSeeds.mix(seed, shape[0], shape[1], shape[2], shape[3]));
        float[][] w = randomKernel(random, channels, shape[3]);
        ConvolutionKernel kernel = ConvolutionKernel.of(w);
        float[] values = randomSequence(random, sequences * steps, channels);
        float eps = 0.25f;
        float[] expected = new float[values.length];
        int floats = steps * channels;
        for (int s = 0; s < sequences; s++) {
          Engines.causalConvolution()
              .convolve(kernel, eps, values, s * floats, steps, expected, s * floats);
        }
        for (int threads : new int[] {1, 3, 16}) {
          float[] output = new float[values.length];
          Arrays.fill(output, Float.NaN);
          try (CpuEngine engine = new CpuEngine(threads)) {
            engine.causalConvolution(
                kernel, eps, FloatBuffer.wrap(values), sequences, steps, FloatBuffer.wrap(output));
          }
          String where = "seed " + seed + " " + Arrays.toString(shape) + ", threads " + threads;
          assertThat(output).as(where).isEqualTo(expected);
          for (int s = 0; s < sequences; s++) {
            float[] k = Arrays.copyOfRange(values, s * floats, (s + 1) * floats);
            float[] out = Arrays.copyOfRange(output, s * floats, (s + 1) * floats);
            assertThat(firstOutsideBound(w, eps, k, steps, out))
                .as("%s, sequence %d", where, s)
                .isEqualTo(-1);
          }
        }
      }
    }
  }

  @Test
  void arraysOfAnotherSizeAreRefusedWithTheSizes() {
    ConvolutionKernel kernel = ConvolutionKernel.of(randomKernel(new Random(1), 4, 8));
    try (CpuEngine engine = new CpuEngine(2)) {
      assertThatThrownBy(
              () ->
                  engine.causalConvolution(
                      kernel, 0f, FloatBuffer.allocate(95), 3, 8, FloatBuffer.allocate(96)))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage(
              "Cannot convolve 3 sequences of 8 steps of 4 channels: the input holds 95 floats and"
                  + " the output 96, not 96");
      assertThatThrownBy(
              () ->
                  engine.causalConvolution(
                      kernel, 0f, FloatBuffer.allocate(36), 1, 9, FloatBuffer.allocate(36)))
          .isInstanceOf(EmbedNormException.class)
          .hasMessageContaining("the kernel has 8 steps");
      assertThatThrownBy(
              () ->
                  engine.causalConvolution(
                      kernel,
                      0f,
                      FloatBuffer.allocate(32),
                      1,
                      8,
                      FloatBuffer.allocate(32).asReadOnlyBuffer()))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot convolve 1 sequences: the output buffer is read-only");
    }
  }

  /**
   * Slices of direct memory, as the Arrow path passes them: read and written in place, floats
   * outside the slices untouched, the bits of the heap-array call.
   */
  @Test
  void slicesOfDirectMemoryGiveTheBitsOfArrays() {
    Random random = new Random(TestSeeds.seeds()[0]);
    int sequences = 5;
    int steps = 30;
    int channels = 40;
    ConvolutionKernel kernel = ConvolutionKernel.of(randomKernel(random, channels, steps));
    float[] values = randomSequence(random, sequences * steps, channels);
    float[] expected = new float[values.length];
    int floats = values.length;
    try (CpuEngine engine = new CpuEngine(3)) {
      engine.causalConvolution(
          kernel, 0.5f, FloatBuffer.wrap(values), sequences, steps, FloatBuffer.wrap(expected));
      FloatBuffer memory =
          ByteBuffer.allocateDirect((3 * floats) * Float.BYTES)
              .order(ByteOrder.nativeOrder())
              .asFloatBuffer();
      memory.put(floats, values);
      for (int i = 2 * floats; i < 3 * floats; i++) {
        memory.put(i, -7f);
      }
      memory.position(floats / 2);
      engine.causalConvolution(
          kernel,
          0.5f,
          memory.slice(floats, floats),
          sequences,
          steps,
          memory.slice(2 * floats, floats));
      float[] got = new float[floats];
      memory.get(2 * floats, got);
      assertThat(got).isEqualTo(expected);
      float[] before = new float[floats];
      memory.get(0, before);
      assertThat(before).containsOnly(0f);
    }
  }
}

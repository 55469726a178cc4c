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
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The causal_conv kernels against the float64 reference, sequence by sequence, and a sequence's
 * bits against its batch, its place and its prefix. On a compute capability 9.0 device the tests
 * that take a kernel run on both: the wgmma kernel it runs and the mma.sync kernel every other GPU
 * runs (padded batches rely on the invariance on each).
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class CudaCausalConvolutionGpuTest {
  private static final String WGMMA = "embednorm_causal_conv_wgmma_f32";
  private static final String MMA_SYNC = "embednorm_causal_conv_f32";

  private static CudaCausalConvolution convolution;
  private static CudaCausalConvolution mmaSync;
  private static boolean hopper;

  static boolean gpuUsable() {
    return CudaEngine.unavailableReason() == null;
  }

  @BeforeAll
  static void requireGpu() {
    String why = CudaEngine.unavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    CudaContext context = CudaContext.of(0);
    convolution = new CudaCausalConvolution(context);
    hopper = context.computeCapability() == 90;
    mmaSync = hopper ? CudaCausalConvolution.withMmaSyncKernel(context) : null;
  }

  /** The kernel the device runs and, on compute capability 9.0, the mma.sync one too. */
  static Stream<Named<CudaCausalConvolution>> kernels() {
    String why = CudaEngine.unavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    if (convolution == null) {
      requireGpu();
    }
    Stream<CudaCausalConvolution> kernels =
        mmaSync == null ? Stream.of(convolution) : Stream.of(convolution, mmaSync);
    return kernels.map(kernel -> Named.of(kernel.kernelName(), kernel));
  }

  @Test
  void runsTheWgmmaKernelForEveryShapeOnComputeCapability90Only() {
    assertThat(convolution.kernelName()).isEqualTo(hopper ? WGMMA : MMA_SYNC);
    if (hopper) {
      assertThat(mmaSync.kernelName()).isEqualTo(MMA_SYNC);
    }
  }

  @ParameterizedTest
  @MethodSource("kernels")
  void aSequencesBitsDependNeitherOnItsBatchNorOnItsPlaceInIt(CudaCausalConvolution convolution) {
    // whole wgmma blocks and partial ones in every dimension, against chunks of 5 sequences (a
    // sequence lands on another row of another block) and single sequences
    int[][] shapes = {{64, 256, 12}, {33, 300, 766}};
    long seed = TestSeeds.seeds()[0];
    for (int[] shape : shapes) {
      int sequences = shape[0];
      int steps = shape[1];
      int channels = shape[2];
      Random random = new Random(TestSeeds.mix(seed, sequences, steps, channels));
      ConvolutionKernel kernel = ConvolutionKernel.of(randomKernel(random, channels, steps));
      float[] values = randomSequence(random, sequences * steps, channels);
      float[] whole = convolution.convolve(kernel, 0.125f, values, sequences, steps);
      String where =
          "seed " + seed + " " + Arrays.toString(shape) + " on " + convolution.kernelName();
      for (int chunk : new int[] {5, 1}) {
        float[] chunked = chunked(convolution, kernel, values, sequences, steps, chunk);
        assertSameBits(chunked, whole, channels, steps, where + ", chunks of " + chunk);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("kernels")
  void aSequencesFirstStepsHaveTheBitsOfItsPrefix(CudaCausalConvolution convolution) {
    // T = 700 is a partial block of steps, T = 768 whole ones: the same first 700 outputs
    int sequences = 32;
    int channels = 12;
    Random random = new Random(11);
    ConvolutionKernel kernel = ConvolutionKernel.of(randomKernel(random, channels, 768));
    float[] values = randomSequence(random, sequences * 768, channels);
    float[] prefix = new float[sequences * 700 * channels];
    for (int s = 0; s < sequences; s++) {
      System.arraycopy(values, s * 768 * channels, prefix, s * 700 * channels, 700 * channels);
    }
    float[] longer = convolution.convolve(kernel, 0f, values, sequences, 768);
    float[] longerPrefix = new float[prefix.length];
    for (int s = 0; s < sequences; s++) {
      System.arraycopy(
          longer, s * 768 * channels, longerPrefix, s * 700 * channels, 700 * channels);
    }
    float[] shorter = convolution.convolve(kernel, 0f, prefix, sequences, 700);
    assertSameBits(
        shorter, longerPrefix, channels, 700, "T 700 against T 768 on " + convolution.kernelName());
  }

  @ParameterizedTest
  @MethodSource("kernels")
  void aNanInOneSequenceChangesNoBitOfAnother(CudaCausalConvolution convolution) {
    int sequences = 32;
    int steps = 256;
    int channels = 8;
    Random random = new Random(13);
    ConvolutionKernel kernel = ConvolutionKernel.of(randomKernel(random, channels, steps));
    float[] values = randomSequence(random, sequences * steps, channels);
    float[] clean = convolution.convolve(kernel, 0f, values, sequences, steps);
    values[(3 * steps + 10) * channels + 2] = Float.NaN;
    values[(17 * steps + 200) * channels + 5] = Float.POSITIVE_INFINITY;
    float[] out = convolution.convolve(kernel, 0f, values, sequences, steps);
    assertThat(out[(3 * steps + 10) * channels + 2]).isNaN();
    assertThat(out[(17 * steps + 200) * channels + 5]).isInfinite();
    // the channels the NaN and the infinity reach in their own sequences may run another way
    for (int t = 0; t < steps; t++) {
      out[(3 * steps + t) * channels + 2] = clean[(3 * steps + t) * channels + 2];
      out[(17 * steps + t) * channels + 5] = clean[(17 * steps + t) * channels + 5];
    }
    assertSameBits(
        out, clean, channels, steps, "beside a NaN and an infinity on " + convolution.kernelName());
  }

  @Test
  void matchesTheFloat64ReferenceOnTheWgmmaKernelsShapesAndTheirNeighbours() {
    // sequences, steps, channels: whole wgmma blocks (B 32 and 64, T 128, 768 and 4096, C 768 and
    // 8), then partial blocks beside them (B 33, T 700, C 766)
    int[][] shapes = {
      {32, 768, 768},
      {64, 128, 8},
      {64, 768, 12},
      {32, 4096, 8},
      {33, 256, 8},
      {32, 700, 8},
      {32, 768, 766}
    };
    long seed = TestSeeds.seeds()[0];
    for (int[] shape : shapes) {
      int sequences = shape[0];
      int steps = shape[1];
      int channels = shape[2];
      Random random = new Random(TestSeeds.mix(seed, shape[0], shape[1], shape[2]));
      float[][] w = randomKernel(random, channels, steps);
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
          "seed " + seed + " " + Arrays.toString(shape) + " on " + convolution.kernelName());
    }
  }

  @Test
  void wgmmaKernelKeepsNonFiniteAndHugeInputsToLaterStepsOfTheirChannel() {
    int sequences = 32;
    int steps = 256;
    int channels = 8;
    Random random = new Random(7);
    float[][] w = randomKernel(random, channels, steps);
    float[] values = randomSequence(random, sequences * steps, channels);
    values[(2 * steps + 41) * channels + 5] = Float.NaN;
    values[(20 * steps + 200) * channels + 2] = Float.NEGATIVE_INFINITY;
    values[(31 * steps + 130) * channels + 7] = Float.MAX_VALUE; // its tf32 half rounds to ∞
    float[] out = convolution.convolve(ConvolutionKernel.of(w), 0f, values, sequences, steps);
    assertThat(out[(2 * steps + 40) * channels + 5]).isFinite();
    assertThat(out[(2 * steps + 41) * channels + 5]).isNaN();
    assertThat(out[(2 * steps + 41) * channels + 4]).isFinite();
    assertThat(out[(20 * steps + 199) * channels + 2]).isFinite();
    assertThat(out[(20 * steps + 200) * channels + 2]).isInfinite();
    assertThat(out[(21 * steps + 200) * channels + 2]).isFinite();
    assertThat(out[(31 * steps + 130) * channels + 7]).isFinite();
    check(w, 0f, values, out, sequences, steps, channels, "non-finite inputs, whole blocks");
  }

  @Test
  void wgmmaKernelKeepsInfiniteWeightsToTheirLagAndChannel() {
    int sequences = 32;
    int steps = 256;
    int channels = 8;
    Random random = new Random(9);
    float[][] w = randomKernel(random, channels, steps);
    w[6][steps - 1 - 3] = Float.POSITIVE_INFINITY; // channel 6, lag 3
    w[1][steps - 1 - 200] = Float.NaN; // channel 1, lag 200: only the last tile's blocks use it
    float[] values = randomSequence(random, sequences * steps, channels);
    float[] out = convolution.convolve(ConvolutionKernel.of(w), 0f, values, sequences, steps);
    assertThat(out[(2 * steps + 2) * channels + 6]).isFinite();
    assertThat(out[(2 * steps + 3) * channels + 6]).isInfinite();
    assertThat(out[(2 * steps + 199) * channels + 1]).isFinite();
    assertThat(out[(2 * steps + 200) * channels + 1]).isNaN();
    check(w, 0f, values, out, sequences, steps, channels, "non-finite weights, whole blocks");
  }

  @ParameterizedTest
  @MethodSource("kernels")
  void matchesTheFloat64ReferenceAcrossShapes(CudaCausalConvolution convolution) {
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
            "seed " + seed + " " + Arrays.toString(shape) + " on " + convolution.kernelName());
      }
    }
  }

  @ParameterizedTest
  @MethodSource("kernels")
  void nanAndInfinityReachOnlyLaterStepsOfTheirChannel(CudaCausalConvolution convolution) {
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

  @ParameterizedTest
  @MethodSource("kernels")
  void infiniteWeightsAndInputsTooLargeToSplitKeepTheirIeeeResults(
      CudaCausalConvolution convolution) {
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

  /** The batch run as calls of {@code chunk} sequences each (the last one shorter). */
  private static float[] chunked(
      CudaCausalConvolution convolution,
      ConvolutionKernel kernel,
      float[] values,
      int sequences,
      int steps,
      int chunk) {
    int floats = steps * kernel.channels();
    float[] out = new float[values.length];
    for (int first = 0; first < sequences; first += chunk) {
      int count = Math.min(chunk, sequences - first);
      float[] part = Arrays.copyOfRange(values, first * floats, (first + count) * floats);
      float[] result = convolution.convolve(kernel, 0.125f, part, count, steps);
      System.arraycopy(result, 0, out, first * floats, result.length);
    }
    return out;
  }

  /** Fails on the first element whose bits differ, naming its sequence, step and channel. */
  private static void assertSameBits(
      float[] actual, float[] expected, int channels, int steps, String what) {
    int i = 0;
    while (i < expected.length
        && Float.floatToRawIntBits(actual[i]) == Float.floatToRawIntBits(expected[i])) {
      i++;
    }
    if (i < expected.length) {
      assertThat(actual[i])
          .as(
              "%s: sequence %d, step %d, channel %d",
              what, i / (steps * channels), i / channels % steps, i % channels)
          .isEqualTo(expected[i]);
      assertThat(Float.floatToRawIntBits(actual[i]))
          .as("%s: raw bits", what)
          .isEqualTo(Float.floatToRawIntBits(expected[i]));
    }
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
    // the float64 reference is T² C a sequence: the sequences in parallel
    int[] firstOutside =
        IntStream.range(0, sequences)
            .parallel()
            .map(
                s ->
                    firstOutsideBound(
                        w,
                        eps,
                        Arrays.copyOfRange(values, s * length, (s + 1) * length),
                        steps,
                        Arrays.copyOfRange(out, s * length, (s + 1) * length)))
            .toArray();
    for (int s = 0; s < sequences; s++) {
      assertThat(firstOutside[s]).as("%s, sequence %d", what, s).isEqualTo(-1);
    }
  }
}

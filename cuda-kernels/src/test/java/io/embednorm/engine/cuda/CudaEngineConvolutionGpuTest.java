package io.embednorm.engine.cuda;

import static io.embednorm.engine.CausalConvolutionReference.firstOutsideBound;
import static io.embednorm.engine.CausalConvolutionReference.randomKernel;
import static io.embednorm.engine.CausalConvolutionReference.randomSequence;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * {@code causal_conv} through the GPU engine ({@link CudaEngine#causalConvolution}) on batches held
 * in Java arrays and in direct memory: every sequence within the float64 reference's bound, and a
 * batch cut into chunks of a few sequences, or read from and written to slices of direct memory,
 * bit for bit the batch in one chunk from arrays; so are calls from eight threads at once.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class CudaEngineConvolutionGpuTest {
  private static CudaEngine engine;

  static boolean gpuUsable() {
    return CudaEngine.unavailableReason() == null;
  }

  @BeforeAll
  static void requireGpu() {
    String why = CudaEngine.unavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    engine = new CudaEngine(0);
  }

  @AfterAll
  static void closeEngine() {
    if (engine != null) {
      engine.close();
    }
  }

  @Test
  void batchesMatchTheReferenceAndChunksChangeNoBit() {
    int[][] shapes = { // sequences, steps, channels, kernel steps
      {1, 1, 1, 1}, {7, 70, 33, 75}, {32, 256, 96, 256}, {3, 1000, 20, 1000}
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
        float eps = 0.125f;
        float[] whole = new float[values.length];
        engine.causalConvolution(
            kernel, eps, FloatBuffer.wrap(values), sequences, steps, FloatBuffer.wrap(whole));
        String where = "seed " + seed + " " + Arrays.toString(shape);
        int floats = steps * channels;
        for (int s = 0; s < sequences; s++) {
          float[] k = Arrays.copyOfRange(values, s * floats, (s + 1) * floats);
          float[] out = Arrays.copyOfRange(whole, s * floats, (s + 1) * floats);
          assertThat(firstOutsideBound(w, eps, k, steps, out))
              .as("%s, sequence %d", where, s)
              .isEqualTo(-1);
        }
        float[] chunked = new float[values.length];
        Arrays.fill(chunked, Float.NaN);
        try (ConvolutionMemory memory = new ConvolutionMemory()) {
          CudaConvolutionBatch.run(
              engine.convolution(),
              memory,
              kernel,
              eps,
              FloatBuffer.wrap(values),
              sequences,
              steps,
              FloatBuffer.wrap(chunked),
              2L * floats * Float.BYTES);
        }
        assertThat(chunked).as(where + ", chunks of 2 sequences").isEqualTo(whole);
        for (long chunkBytes : new long[] {CudaConvolutionBatch.CHUNK_BYTES, 2L * floats * 4}) {
          assertThat(inDirectMemory(kernel, eps, values, sequences, steps, chunkBytes))
              .as("%s, direct memory in chunks of %d bytes", where, chunkBytes)
              .isEqualTo(whole);
        }
      }
    }
  }

  /**
   * The engine keeps its device memory and the last kernel's weights between calls: calls of one
   * kernel at other lengths (reading the first lags of its weights), then another kernel of the
   * same size, each give the bits of a call through fresh memory.
   */
  @Test
  void keptWeightsAndMemoryGiveTheBitsOfFreshOnes() {
    Random random = new Random(TestSeeds.seeds()[0]);
    ConvolutionKernel first = ConvolutionKernel.of(randomKernel(random, 96, 64));
    ConvolutionKernel second = ConvolutionKernel.of(randomKernel(random, 96, 64));
    int[][] calls = {{5, 64}, {3, 9}, {40, 64}, {2, 33}};
    for (ConvolutionKernel kernel : new ConvolutionKernel[] {first, second, first}) {
      for (int[] call : calls) {
        float[] values = randomSequence(random, call[0] * call[1], 96);
        float[] kept = new float[values.length];
        engine.causalConvolution(
            kernel, 0.5f, FloatBuffer.wrap(values), call[0], call[1], FloatBuffer.wrap(kept));
        float[] fresh = engine.convolution().convolve(kernel, 0.5f, values, call[0], call[1]);
        assertThat(kept)
            .as(
                "%s, %d sequences of %d steps",
                kernel == first ? "first" : "second", call[0], call[1])
            .isEqualTo(fresh);
      }
    }
  }

  /**
   * Eight threads at once, each calling with direct buffers (each call in flight with device memory
   * of its own) and switching between two kernels (the weights uploaded again each time), every
   * result the bits of the same call made alone from arrays.
   */
  @Test
  void eightThreadsAtOnceGiveTheBitsOfCallsMadeAlone() throws Exception {
    long seed = TestSeeds.seeds()[0];
    System.out.println("eightThreadsAtOnce seed " + seed);
    int threads = 8;
    int sequences = 9;
    int steps = 200;
    int channels = 96;
    Random random = new Random(seed);
    ConvolutionKernel[] kernels = new ConvolutionKernel[2 * threads];
    float[][] inputs = new float[threads][];
    float[][][] expected = new float[threads][2][];
    for (int thread = 0; thread < threads; thread++) {
      inputs[thread] = randomSequence(random, sequences * steps, channels);
      for (int which = 0; which < 2; which++) {
        kernels[2 * thread + which] = ConvolutionKernel.of(randomKernel(random, channels, steps));
        expected[thread][which] = new float[inputs[thread].length];
        engine.causalConvolution(
            kernels[2 * thread + which],
            0f,
            FloatBuffer.wrap(inputs[thread]),
            sequences,
            steps,
            FloatBuffer.wrap(expected[thread][which]));
      }
    }
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<String>> results = new ArrayList<>();
      for (int thread = 0; thread < threads; thread++) {
        int index = thread;
        results.add(
            pool.submit(
                () -> {
                  int floats = inputs[index].length;
                  FloatBuffer input = direct(floats);
                  FloatBuffer output = direct(floats);
                  input.put(0, inputs[index]);
                  for (int round = 0; round < 10; round++) {
                    int which = round % 2;
                    engine.causalConvolution(
                        kernels[2 * index + which], 0f, input, sequences, steps, output);
                    float[] got = new float[floats];
                    output.get(0, got);
                    if (!Arrays.equals(got, expected[index][which])) {
                      return "thread " + index + ", round " + round + ": other bits";
                    }
                  }
                  return "";
                }));
      }
      for (Future<String> result : results) {
        assertThat(result.get(5, TimeUnit.MINUTES)).isEmpty();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static FloatBuffer direct(int floats) {
    return ByteBuffer.allocateDirect(floats * Float.BYTES)
        .order(ByteOrder.nativeOrder())
        .asFloatBuffer();
  }

  /**
   * The batch convolved from one slice of direct memory into another, as the Arrow path passes them
   * (no Java array between host and device), with guard floats around the output slice that must
   * stay untouched.
   */
  private static float[] inDirectMemory(
      ConvolutionKernel kernel,
      float eps,
      float[] values,
      int sequences,
      int steps,
      long chunkBytes) {
    int floats = values.length;
    FloatBuffer memory =
        ByteBuffer.allocateDirect((3 * floats + 2) * Float.BYTES)
            .order(ByteOrder.nativeOrder())
            .asFloatBuffer();
    memory.put(0, values);
    for (int i = floats; i < memory.capacity(); i++) {
      memory.put(i, -3f);
    }
    try (ConvolutionMemory device = new ConvolutionMemory()) {
      CudaConvolutionBatch.run(
          engine.convolution(),
          device,
          kernel,
          eps,
          memory.slice(0, floats),
          sequences,
          steps,
          memory.slice(floats + 1, floats),
          chunkBytes);
    }
    assertThat(memory.get(floats)).as("the float before the output").isEqualTo(-3f);
    assertThat(memory.get(2 * floats + 1)).as("the float after the output").isEqualTo(-3f);
    float[] result = new float[floats];
    memory.get(floats + 1, result);
    return result;
  }
}

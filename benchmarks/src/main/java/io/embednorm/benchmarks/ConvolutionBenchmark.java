package io.embednorm.benchmarks;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Engines;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.cuda.CudaCausalConvolution;
import io.embednorm.engine.cuda.CudaContext;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * causal_conv on one GPU at the RWKV article's size (B32 C768 T768 float32 by default): the median
 * of {@code --repeats} launches timed with CUDA events after 5 warm-up launches, in ms and GFLOP/s
 * of the useful work (2 flops per multiply-add of u ≤ t), with the largest difference to the
 * float64 reference on sequences 0 and B − 1 relative to their Σ|w·k|; then the same batch as users
 * run it: the GPU and CPU engines from Java arrays, and the Arrow API on a GPU normalizer.
 * Arguments: {@code --sequences B --channels C --steps T --repeats N}.
 */
public final class ConvolutionBenchmark {
  private ConvolutionBenchmark() {}

  public static void main(String[] args) {
    int sequences = option(args, "--sequences", 32);
    int channels = option(args, "--channels", 768);
    int steps = option(args, "--steps", 768);
    int repeats = option(args, "--repeats", 30);
    Random random = new Random(1);
    float[][] w = new float[channels][steps];
    for (float[] row : w) {
      for (int j = 0; j < steps; j++) {
        row[j] = random.nextFloat() * 0.1f;
      }
    }
    ConvolutionKernel kernel = ConvolutionKernel.of(w);
    float[] values = new float[sequences * steps * channels];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) random.nextGaussian();
    }
    float[] lagWeights = new float[steps * channels];
    kernel.copyLagMajor(steps, lagWeights, 0);
    double flops = 2.0 * CudaCausalConvolution.multiplyAdds(sequences, steps, channels);

    CudaContext context = CudaContext.of(0);
    CudaCausalConvolution convolution = new CudaCausalConvolution(context);
    long bytes = (long) values.length * Sizeof.FLOAT;
    CUdeviceptr input = new CUdeviceptr();
    CUdeviceptr output = new CUdeviceptr();
    CUdeviceptr weights = new CUdeviceptr();
    CUstream stream = new CUstream();
    cuMemAlloc(input, bytes);
    cuMemAlloc(output, bytes);
    cuMemAlloc(weights, (long) lagWeights.length * Sizeof.FLOAT);
    cuStreamCreate(stream, 0);
    float[] gpu = new float[values.length];
    double milliseconds;
    try {
      cuMemcpyHtoD(input, Pointer.to(values), bytes);
      cuMemcpyHtoD(weights, Pointer.to(lagWeights), (long) lagWeights.length * Sizeof.FLOAT);
      Runnable launch =
          () -> convolution.launch(input, output, weights, sequences, steps, channels, 0f, stream);
      milliseconds = EventTimes.median(stream, repeats, launch);
      cuStreamSynchronize(stream);
      cuMemcpyDtoH(Pointer.to(gpu), output, bytes);
    } finally {
      cuStreamDestroy(stream);
      cuMemFree(weights);
      cuMemFree(output);
      cuMemFree(input);
    }

    double error = relativeError(w, values, gpu, 0, steps, channels);
    error = Math.max(error, relativeError(w, values, gpu, sequences - 1, steps, channels));
    System.out.printf(
        Locale.ROOT,
        "causal_conv B%d C%d T%d float32: gpu kernel %.4f ms median of %d, %.0f GFLOP/s (%.2f"
            + " GFLOP); gpu max error %.2e of sum|w*k|%n",
        sequences,
        channels,
        steps,
        milliseconds,
        repeats,
        flops / milliseconds / 1e6,
        flops / 1e9,
        error);
    FloatBuffer heapInput = FloatBuffer.wrap(values);
    FloatBuffer heapOutput = FloatBuffer.wrap(new float[values.length]);
    try (NormalizationEngine cpu = Engines.cpu();
        NormalizationEngine gpuEngine = Engines.select(DeviceChoice.GPU).engine()) {
      double cpuMillis =
          medianMillis(
              3, () -> cpu.causalConvolution(kernel, 0f, heapInput, sequences, steps, heapOutput));
      double engineMillis =
          medianMillis(
              repeats,
              () ->
                  gpuEngine.causalConvolution(kernel, 0f, heapInput, sequences, steps, heapOutput));
      System.out.printf(
          Locale.ROOT,
          "same batch from Java arrays, median of the repeats after a warm-up call: gpu engine"
              + " %.2f ms (copies"
              + " each way included), cpu engine %.1f ms (%d threads, %.0f GFLOP/s)%n",
          engineMillis,
          cpuMillis,
          cpu.threads(),
          flops / cpuMillis / 1e6);
    }
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, DeviceChoice.GPU);
        FieldVector column = column(allocator, values, sequences, steps, channels)) {
      double arrowMillis =
          medianMillis(repeats, () -> normalizer.causalConv(column, kernel, 0f).close());
      System.out.printf(
          Locale.ROOT,
          "same batch through the Arrow API (ArrowNormalizer.causalConv, gpu, a"
              + " FixedSizeList<FixedSizeList<float>> column): %.2f ms median of the repeats after a"
              + " warm-up%n",
          arrowMillis);
    }
  }

  /** The median wall time of {@code repeats} calls after one that is not counted. */
  private static double medianMillis(int repeats, Runnable call) {
    call.run();
    double[] millis = new double[repeats];
    for (int i = 0; i < repeats; i++) {
      long started = System.nanoTime();
      call.run();
      millis[i] = (System.nanoTime() - started) / 1e6;
    }
    Arrays.sort(millis);
    return millis[repeats / 2];
  }

  /** A {@code FixedSizeList<FixedSizeList<float>>} column of the sequences, step after step. */
  private static FieldVector column(
      BufferAllocator allocator, float[] values, int sequences, int steps, int channels) {
    FixedSizeListVector column = FixedSizeListVector.empty("tokens", steps, allocator);
    FixedSizeListVector stepVector =
        (FixedSizeListVector)
            column
                .addOrGetVector(FieldType.nullable(new ArrowType.FixedSizeList(channels)))
                .getVector();
    stepVector.addOrGetVector(
        FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    column.setInitialCapacity(sequences);
    column.allocateNew();
    Float4Vector floats = (Float4Vector) stepVector.getDataVector();
    while (floats.getValueCapacity() < values.length) {
      floats.reAlloc();
    }
    floats
        .getDataBuffer()
        .nioBuffer(0, values.length * Float.BYTES)
        .order(ByteOrder.LITTLE_ENDIAN)
        .asFloatBuffer()
        .put(values);
    for (int i = 0; i < values.length; i++) {
      floats.setIndexDefined(i);
    }
    for (int i = 0; i < sequences * steps; i++) {
      stepVector.setNotNull(i);
    }
    for (int i = 0; i < sequences; i++) {
      column.setNotNull(i);
    }
    floats.setValueCount(values.length);
    stepVector.setValueCount(sequences * steps);
    column.setValueCount(sequences);
    return column;
  }

  /** max over outputs of |gpu − float64| / Σ|w·k| for one sequence. */
  private static double relativeError(
      float[][] w, float[] values, float[] gpu, int sequence, int steps, int channels) {
    int base = sequence * steps * channels;
    double worst = 0;
    for (int c = 0; c < channels; c++) {
      for (int t = 0; t < steps; t++) {
        double sum = 0;
        double magnitude = 0;
        for (int u = 0; u <= t; u++) {
          double term = (double) w[c][steps - 1 - (t - u)] * values[base + u * channels + c];
          sum += term;
          magnitude += Math.abs(term);
        }
        double difference = Math.abs(gpu[base + t * channels + c] - sum);
        worst = Math.max(worst, difference / Math.max(magnitude, 1e-30));
      }
    }
    return worst;
  }

  private static int option(String[] args, String name, int fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}

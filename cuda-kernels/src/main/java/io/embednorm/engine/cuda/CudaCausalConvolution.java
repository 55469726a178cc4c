package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleGetGlobal;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.InputStream;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * {@code causal_conv} on a GPU (src/main/cuda/causal_conv.cu, its own fatbin): a batch of sequences
 * of equal length in the (sequences, steps, channels) layout, the layout users hold, so nothing is
 * transposed; on the tensor cores, float32-accurate (3xTF32). The weights go to the device once,
 * lag-major, from a {@link ConvolutionKernel}. Holds no device memory of its own; thread-safe.
 */
public final class CudaCausalConvolution {
  /** Where the Maven build puts the fatbin (cuda-kernels/pom.xml). */
  static final String RESOURCE = "/io/embednorm/engine/cuda/causal_conv.fatbin";

  private static final String NAME = "embednorm_causal_conv_f32";

  /** The launch geometry the module exports: the order of causal_conv.cu's table. */
  private static final String GEOMETRY = "embednorm_causal_conv_geometry";

  private final CudaContext context;
  private final CUfunction function = new CUfunction();
  private final int threads;
  private final int sharedBytes;
  private final int channelsPerBlock;
  private final int sequencesPerBlock;
  private final int stepsPerBlock;

  /** Loads the kernel into {@code context}'s device. */
  public CudaCausalConvolution(CudaContext context) {
    this.context = context;
    context.makeCurrent();
    CUmodule module = new CUmodule();
    cuModuleLoadData(module, fatbin());
    cuModuleGetFunction(function, module, NAME);
    int[] geometry = geometry(module);
    threads = geometry[0];
    sharedBytes = geometry[1];
    channelsPerBlock = geometry[2];
    sequencesPerBlock = geometry[3];
    stepsPerBlock = geometry[4];
    cuFuncSetAttribute(
        function,
        CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        sharedBytes);
  }

  /** Whether this jar holds the kernel (a CPU-only build does not). */
  public static boolean isBundled() {
    return CudaCausalConvolution.class.getResource(RESOURCE) != null;
  }

  /**
   * The multiply-adds of one call that count: {@code sequences · channels · steps (steps + 1) / 2}.
   */
  public static long multiplyAdds(int sequences, int steps, int channels) {
    return (long) sequences * channels * steps * (steps + 1) / 2;
  }

  /**
   * Enqueues the convolution of {@code sequences × steps × channels} floats at {@code input} into
   * {@code output}, with {@code lagWeights} holding {@code steps × channels} floats as {@link
   * ConvolutionKernel#copyLagMajor} writes them. The caller keeps the buffers until the stream is
   * done.
   */
  public void launch(
      CUdeviceptr input,
      CUdeviceptr output,
      CUdeviceptr lagWeights,
      int sequences,
      int steps,
      int channels,
      float eps,
      CUstream stream) {
    if (sequences == 0 || steps == 0) {
      return;
    }
    long blocks =
        (long) ceiling(steps, stepsPerBlock)
            * ceiling(channels, channelsPerBlock)
            * ceiling(sequences, sequencesPerBlock);
    if (blocks > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot convolve " + sequences + " sequences on the GPU: " + blocks + " blocks");
    }
    context.makeCurrent();
    Pointer parameters =
        Pointer.to(
            Pointer.to(input),
            Pointer.to(output),
            Pointer.to(lagWeights),
            Pointer.to(new int[] {sequences}),
            Pointer.to(new int[] {steps}),
            Pointer.to(new int[] {channels}),
            Pointer.to(new float[] {eps}));
    cuLaunchKernel(
        function, (int) blocks, 1, 1, threads, 1, 1, sharedBytes, stream, parameters, null);
  }

  /**
   * Convolves {@code sequences} sequences of {@code steps × kernel.channels()} floats held one
   * after another in {@code values}, through device memory it allocates and frees: for tests and
   * one-off calls.
   */
  public float[] convolve(
      ConvolutionKernel kernel, float eps, float[] values, int sequences, int steps) {
    kernel.checkBatch(sequences, steps, values.length, values.length);
    float[] result = new float[values.length];
    context.makeCurrent();
    CudaConvolutionBatch.run(this, kernel, eps, values, sequences, steps, result);
    return result;
  }

  private static int[] geometry(CUmodule module) {
    CUdeviceptr address = new CUdeviceptr();
    long[] bytes = new long[1];
    cuModuleGetGlobal(address, bytes, module, GEOMETRY);
    if (bytes[0] != 5L * Integer.BYTES) {
      throw new EmbedNormException(
          "Cannot load the causal_conv kernel: its table "
              + GEOMETRY
              + " holds "
              + bytes[0]
              + " bytes, not "
              + 5 * Integer.BYTES);
    }
    int[] values = new int[5];
    cuMemcpyDtoH(Pointer.to(values), address, bytes[0]);
    return values;
  }

  private static int ceiling(int value, int divisor) {
    return (value + divisor - 1) / divisor;
  }

  private static byte[] fatbin() {
    try (InputStream stream = CudaCausalConvolution.class.getResourceAsStream(RESOURCE)) {
      if (stream == null) {
        throw new EmbedNormException(
            "Cannot load the causal_conv kernel: "
                + RESOURCE
                + " is not in this jar (built with -Dembednorm.cpuOnly?)");
      }
      return stream.readAllBytes();
    } catch (IOException failure) {
      throw new EmbedNormException(
          "Cannot load the causal_conv kernel: " + failure.getMessage(), failure);
    }
  }
}

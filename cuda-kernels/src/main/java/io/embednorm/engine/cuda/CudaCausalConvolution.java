package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuModuleGetGlobal;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.FloatBuffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * {@code causal_conv} on a GPU (src/main/cuda/causal_conv.cu, its own fatbin): a batch of sequences
 * of equal length in the (sequences, steps, channels) layout, the layout users hold, so nothing is
 * transposed; on the tensor cores, float32-accurate (3xTF32). The weights go to the device once,
 * lag-major, from a {@link ConvolutionKernel}. Holds no device memory of its own; thread-safe.
 *
 * <p>The module has two kernels for every shape: mma.sync for every GPU and, on a compute
 * capability 9.0 device (the fatbin's sm_90a code), a wgmma kernel, faster. Every call on a device
 * takes the same kernel, the wgmma one where the device has it: which kernel computes a sequence,
 * and so its bits, depends on the device only, never on the batch around it.
 */
public final class CudaCausalConvolution {
  /** Where the Maven build puts the fatbin (cuda-kernels/pom.xml). */
  static final String RESOURCE = "/io/embednorm/engine/cuda/causal_conv.fatbin";

  /** The launch geometry the module exports: a row of causal_conv.cu's table a kernel. */
  private static final String GEOMETRY = "embednorm_causal_conv_geometry";

  /** The kernels in the order of the table's rows. */
  private static final String[] NAMES = {
    "embednorm_causal_conv_f32", "embednorm_causal_conv_wgmma_f32"
  };

  private final CudaContext context;

  /** The wgmma kernel where the loaded code has it, else the mma.sync kernel. */
  private final CausalConvolutionKernel kernel;

  /** Loads the kernels into {@code context}'s device. */
  public CudaCausalConvolution(CudaContext context) {
    this(context, NAMES.length);
  }

  /**
   * The mma.sync kernel on every device, for tests: on a compute capability 9.0 device it checks
   * the design every other GPU runs (in its sm_90a build, where they run their own build of the
   * same source).
   */
  static CudaCausalConvolution withMmaSyncKernel(CudaContext context) {
    return new CudaCausalConvolution(context, 1);
  }

  /** Loads the first {@code kernels} kernels of {@link #NAMES} and takes the last one there. */
  private CudaCausalConvolution(CudaContext context, int kernels) {
    this.context = context;
    context.makeCurrent();
    CUmodule module = new CUmodule();
    cuModuleLoadData(module, fatbin());
    int[] table = geometry(module);
    CausalConvolutionKernel mmaSync =
        CausalConvolutionKernel.loadIfPresent(module, NAMES[0], table, 0);
    if (mmaSync == null) {
      throw new EmbedNormException(
          "Cannot load the causal_conv kernel: its table "
              + GEOMETRY
              + " has no row for "
              + NAMES[0]);
    }
    CausalConvolutionKernel wgmma =
        kernels > 1 ? CausalConvolutionKernel.loadIfPresent(module, NAMES[1], table, 1) : null;
    kernel = wgmma != null ? wgmma : mmaSync;
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
   * ConvolutionKernel#copyLagMajor} writes them. The buffers start 16-byte aligned (as {@code
   * cuMemAlloc} returns them); the caller keeps them until the stream is done.
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
    kernel.launch(sequences, steps, channels, parameters, stream);
  }

  /** The name of the kernel every call runs: for tests. */
  String kernelName() {
    return kernel.name();
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
    try (ConvolutionMemory memory = new ConvolutionMemory()) {
      CudaConvolutionBatch.run(
          this,
          memory,
          kernel,
          eps,
          FloatBuffer.wrap(values),
          sequences,
          steps,
          FloatBuffer.wrap(result));
    }
    return result;
  }

  private static int[] geometry(CUmodule module) {
    CUdeviceptr address = new CUdeviceptr();
    long[] bytes = new long[1];
    cuModuleGetGlobal(address, bytes, module, GEOMETRY);
    int ints = NAMES.length * CausalConvolutionKernel.ROW;
    if (bytes[0] != (long) ints * Integer.BYTES) {
      throw new EmbedNormException(
          "Cannot load the causal_conv kernel: its table "
              + GEOMETRY
              + " holds "
              + bytes[0]
              + " bytes, not "
              + ints * Integer.BYTES);
    }
    int[] values = new int[ints];
    cuMemcpyDtoH(Pointer.to(values), address, bytes[0]);
    return values;
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

package io.embednorm.benchmarks;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.cuda.CudaContext;
import java.io.IOException;
import java.io.InputStream;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * The copy-ceiling kernel ({@code src/main/cuda/copy_kernel.cu}, built into this jar by nvcc):
 * 16-byte loads and stores, {@link #LOADS} in flight per thread, any byte count. KernelBenchmark
 * times it next to the driver's copy and the normalization kernels.
 */
final class CopyKernel {
  /** Where the Maven build puts the fatbin (benchmarks/pom.xml). */
  static final String RESOURCE = "/io/embednorm/benchmarks/copy_kernel.fatbin";

  static final String NAME = "embednorm_copy_u8x16";

  /** Loads in flight per thread (kCopyLoads in the kernel). */
  static final int LOADS = 4;

  /** Threads a block (the kernel's launch bound). */
  static final int BLOCK = 256;

  private final CudaContext context;
  private final CUfunction function = new CUfunction();

  /** Loads the kernel into {@code context}. */
  CopyKernel(CudaContext context) {
    this.context = context;
    context.makeCurrent();
    CUmodule module = new CUmodule();
    cuModuleLoadData(module, fatbin());
    cuModuleGetFunction(function, module, NAME);
  }

  /** Whether this jar holds the kernel (a CPU-only build does not). */
  static boolean isBundled() {
    return CopyKernel.class.getResource(RESOURCE) != null;
  }

  /**
   * Blocks for a copy of {@code bytes}: one pass (each thread copies {@link #LOADS} packs of 16
   * bytes once), or only as many as the device holds at once ({@code resident}), each thread
   * looping over the buffer.
   */
  int grid(long bytes, boolean resident) {
    long onePass = Math.max(1, (bytes / 16 + (long) BLOCK * LOADS - 1) / ((long) BLOCK * LOADS));
    if (!resident) {
      return (int) Math.min(onePass, Integer.MAX_VALUE);
    }
    int[] active = new int[1];
    cuOccupancyMaxActiveBlocksPerMultiprocessor(active, function, BLOCK, 0);
    long held = (long) Math.max(1, active[0]) * context.multiprocessors();
    return (int) Math.max(1, Math.min(onePass, held));
  }

  /** Enqueues a copy of {@code bytes} (16-byte aligned buffers) on {@code grid} blocks. */
  void launch(int grid, CUdeviceptr input, CUdeviceptr output, long bytes, CUstream stream) {
    Pointer parameters =
        Pointer.to(Pointer.to(input), Pointer.to(output), Pointer.to(new long[] {bytes}));
    cuLaunchKernel(function, grid, 1, 1, BLOCK, 1, 1, 0, stream, parameters, null);
  }

  private static byte[] fatbin() {
    try (InputStream stream = CopyKernel.class.getResourceAsStream(RESOURCE)) {
      if (stream == null) {
        throw new EmbedNormException(
            "Cannot load the copy kernel: "
                + RESOURCE
                + " is not in this jar (built with -Dembednorm.cpuOnly?)");
      }
      return stream.readAllBytes();
    } catch (IOException failure) {
      throw new EmbedNormException("Cannot load the copy kernel: " + failure.getMessage(), failure);
    }
  }
}

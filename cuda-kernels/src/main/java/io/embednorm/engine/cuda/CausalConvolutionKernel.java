package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;

import io.embednorm.engine.EmbedNormException;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * One kernel of causal_conv.cu and its launch geometry, a row of the module's table: threads a
 * block, dynamic shared memory bytes a block, and the channels, sequences and steps a block owns.
 */
final class CausalConvolutionKernel {
  /** Ints a row of the table holds. */
  static final int ROW = 5;

  private final String name;
  private final CUfunction function = new CUfunction();
  private final int threads;
  private final int sharedBytes;
  private final int channelsPerBlock;
  private final int sequencesPerBlock;
  private final int stepsPerBlock;

  private CausalConvolutionKernel(CUmodule module, String name, int[] table, int row) {
    this.name = name;
    threads = table[ROW * row];
    sharedBytes = table[ROW * row + 1];
    channelsPerBlock = table[ROW * row + 2];
    sequencesPerBlock = table[ROW * row + 3];
    stepsPerBlock = table[ROW * row + 4];
    cuModuleGetFunction(function, module, name);
    cuFuncSetAttribute(
        function,
        CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        sharedBytes);
  }

  /**
   * The kernel {@code name} of {@code module} with row {@code row} of {@code table}, or null where
   * the row is zero: the code the driver loaded for this device has no such kernel.
   */
  static CausalConvolutionKernel loadIfPresent(CUmodule module, String name, int[] table, int row) {
    return table[ROW * row] == 0 ? null : new CausalConvolutionKernel(module, name, table, row);
  }

  String name() {
    return name;
  }

  /**
   * Enqueues the kernel over the shape with the kernel's {@code parameters}: a block for each
   * (possibly partial) block of sequences, channels and steps.
   */
  void launch(int sequences, int steps, int channels, Pointer parameters, CUstream stream) {
    long blocks =
        (long) ceiling(steps, stepsPerBlock)
            * ceiling(channels, channelsPerBlock)
            * ceiling(sequences, sequencesPerBlock);
    if (blocks > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot convolve " + sequences + " sequences on the GPU: " + blocks + " blocks");
    }
    cuLaunchKernel(
        function, (int) blocks, 1, 1, threads, 1, 1, sharedBytes, stream, parameters, null);
  }

  private static int ceiling(int value, int divisor) {
    return (value + divisor - 1) / divisor;
  }
}

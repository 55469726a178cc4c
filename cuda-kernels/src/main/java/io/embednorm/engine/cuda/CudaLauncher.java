package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/** Launches one planned kernel over rows already in device memory. */
final class CudaLauncher {
  private CudaLauncher() {}

  /**
   * Enqueues the kernel on {@code stream}; the caller synchronizes.
   *
   * @param offsets device pointer to rows + 1 int64 element offsets, or address 0 for contiguous
   *     rows of {@code width}
   * @param width the row width (contiguous) or the widest row (ragged)
   * @param weight device pointer to the weight in the compute type (float, or double for float64
   *     rows), or address 0
   * @param bias likewise for the bias
   */
  static void launch(
      LaunchPlan plan,
      KernelModule module,
      CUstream stream,
      Normalization normalization,
      CUdeviceptr input,
      CUdeviceptr output,
      CUdeviceptr offsets,
      long rows,
      int width,
      CUdeviceptr weight,
      CUdeviceptr bias) {
    if (rows == 0) {
      return;
    }
    double epsilon = normalization.op().takesEpsilon() ? normalization.epsilon() : 0;
    Pointer parameters =
        Pointer.to(
            Pointer.to(input),
            Pointer.to(output),
            Pointer.to(offsets),
            Pointer.to(new long[] {rows}),
            Pointer.to(new int[] {width}),
            Pointer.to(new int[] {plan.group()}),
            Pointer.to(new double[] {epsilon}),
            Pointer.to(weight),
            Pointer.to(bias));
    cuLaunchKernel(
        module.function(plan.kernel()),
        plan.grid(),
        1,
        1,
        plan.block(),
        1,
        1,
        plan.sharedBytes(),
        stream,
        parameters,
        null);
  }

  /** The weight or bias as the kernels read it: float, or double for float64 rows. */
  static Pointer hostParameter(double[] values, ElementType type) {
    if (type == ElementType.FLOAT64) {
      return Pointer.to(values);
    }
    float[] floats = new float[values.length];
    for (int i = 0; i < values.length; i++) {
      floats[i] = (float) values[i];
    }
    return Pointer.to(floats);
  }
}

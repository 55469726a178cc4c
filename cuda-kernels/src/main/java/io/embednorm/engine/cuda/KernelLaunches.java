package io.embednorm.engine.cuda;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * embednorm's kernels launched directly on device memory, as the engine would launch them: for
 * benchmarks and tests, which time or check one kernel without the engine's copies. Not for the
 * product's surfaces, which go through {@link io.embednorm.engine.NormalizationEngine}.
 */
public final class KernelLaunches {
  private final CudaContext context;
  private final KernelModule module;

  private KernelLaunches(CudaContext context) {
    this.context = context;
    this.module = KernelModule.of(context);
  }

  /**
   * The kernels on device {@code ordinal}, loaded on first use and made current in the calling
   * thread; throws, saying why, when CUDA cannot be used.
   */
  public static KernelLaunches open(int ordinal) {
    return new KernelLaunches(CudaContext.of(ordinal));
  }

  /** The device's context: its compute capability, multiprocessors and memory bandwidth. */
  public CudaContext context() {
    return context;
  }

  /**
   * The launch the engine chooses for {@code rows} contiguous rows of {@code width} elements of
   * {@code type}, starting 16-byte aligned where {@code vectorizable} (and the width is then a
   * multiple of 16 bytes).
   */
  public LaunchPlan plan(Op op, ElementType type, int width, long rows, boolean vectorizable) {
    return LaunchPlan.planBatch(op, type, width, rows, vectorizable, false, module);
  }

  /**
   * Enqueues {@code plan} on {@code stream} over contiguous rows from {@code input} to {@code
   * output} (device memory, aligned alike modulo 16), without weight or bias; the caller
   * synchronizes.
   */
  public void launch(
      LaunchPlan plan,
      Normalization normalization,
      CUstream stream,
      CUdeviceptr input,
      CUdeviceptr output,
      long rows,
      int width) {
    context.makeCurrent();
    CudaLauncher.launch(
        plan,
        module,
        stream,
        normalization,
        input,
        output,
        new CUdeviceptr(),
        rows,
        width,
        new CUdeviceptr(),
        new CUdeviceptr());
  }

  /**
   * Allocates {@code bytes} of device memory on {@code context}'s device for {@code what} (named in
   * errors); the caller closes it.
   *
   * @throws io.embednorm.engine.GpuOutOfMemoryException when the device has no room for it
   */
  public static DeviceMemory allocate(CudaContext context, long bytes, String what) {
    context.makeCurrent();
    return new DeviceMemory(new DeviceBuffer(bytes, what));
  }

  /** Device memory of one allocation; whoever allocates it closes it. */
  public static final class DeviceMemory implements AutoCloseable {
    private final DeviceBuffer buffer;

    private DeviceMemory(DeviceBuffer buffer) {
      this.buffer = buffer;
    }

    public CUdeviceptr pointer() {
      return buffer.pointer();
    }

    public long bytes() {
      return buffer.bytes();
    }

    @Override
    public void close() {
      buffer.close();
    }
  }
}

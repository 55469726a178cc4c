package io.embednorm.kernels.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.embednorm.kernels.Device;
import io.embednorm.kernels.ElementType;
import io.embednorm.kernels.Normalization;
import io.embednorm.kernels.NormalizationEngine;
import io.embednorm.kernels.RowBatch;
import java.nio.ByteBuffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * The CUDA engine: copies a batch to the device, runs the kernel its widths call for, and copies
 * the result back. Thread-safe: each call makes the shared primary context current and works on its
 * own stream and device buffers, which it frees before returning. The pipelined, pinned, pooled
 * path over Arrow buffers builds on this.
 */
public final class CudaEngine implements NormalizationEngine {
  /** Tests fill device outputs with NaN bytes first, so that an unwritten element shows. */
  private static volatile boolean poisonOutputs;

  private final CudaContext context;
  private final KernelModule module;
  private final String deviceName;

  /** An engine on device {@code ordinal}; throws, saying why, when CUDA cannot be used. */
  public CudaEngine(int ordinal) {
    this.context = CudaContext.of(ordinal);
    this.module = KernelModule.of(context);
    this.deviceName = CudaAvailability.get().deviceName();
  }

  /**
   * Why no CUDA engine can start in this process, or null when one can: the jar holds no kernels (a
   * CPU-only build), the driver library does not load, or the driver sees no device.
   */
  public static String unavailableReason() {
    if (!KernelModule.isBundled()) {
      return "this jar was built without CUDA kernels (-Dembednorm.cpuOnly)";
    }
    CudaAvailability availability = CudaAvailability.get();
    return availability.usable() ? null : availability.reason();
  }

  @Override
  public Device device() {
    return Device.GPU;
  }

  @Override
  public String description() {
    return "gpu "
        + context.ordinal()
        + " ("
        + deviceName
        + ", sm_"
        + context.computeCapability()
        + ")";
  }

  @Override
  public void normalize(Normalization normalization, RowBatch batch) {
    int rows = batch.rows();
    if (rows == 0 || batch.elementCount() == 0) {
      return;
    }
    ElementType type = batch.type();
    long first = batch.rowStart(0);
    int maxWidth = 0;
    boolean vectorizable = true;
    int vector = LaunchPlan.vectorWidth(type);
    for (int row = 0; row < rows; row++) {
      int width = batch.rowWidth(row);
      normalization.checkWidth(batch.firstRowIndex() + row, width);
      maxWidth = Math.max(maxWidth, width);
      vectorizable &= width % vector == 0 && (batch.rowStart(row) - first) % vector == 0;
      if (!batch.isRagged()) {
        break;
      }
    }
    long bytes = batch.elementCount() * type.byteWidth();
    context.makeCurrent();
    CUstream stream = new CUstream();
    cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    try (DeviceBuffer input = new DeviceBuffer(bytes, "the input rows");
        DeviceBuffer output = new DeviceBuffer(bytes, "the output rows");
        DeviceBuffer offsets = deviceOffsets(batch, first);
        DeviceBuffer weight = deviceParameter(normalization.weight(), type);
        DeviceBuffer bias = deviceParameter(normalization.bias(), type)) {
      // Synchronous copies: heap buffers may move once a call returns. The pinned, overlapped
      // pipeline over Arrow buffers replaces this path.
      ByteBuffer source = slice(batch.input(), first, bytes, type);
      cuMemcpyHtoD(input.pointer(), Pointer.to(source), bytes);
      if (poisonOutputs) {
        cuMemsetD8(output.pointer(), (byte) 0xff, bytes);
      }
      LaunchPlan plan =
          LaunchPlan.plan(normalization.op(), type, maxWidth, rows, vectorizable, context, module);
      CudaLauncher.launch(
          plan,
          module,
          stream,
          normalization,
          input.pointer(),
          output.pointer(),
          pointerOrNull(offsets),
          rows,
          maxWidth,
          pointerOrNull(weight),
          pointerOrNull(bias));
      cuStreamSynchronize(stream);
      ByteBuffer target = slice(batch.output(), first, bytes, type);
      cuMemcpyDtoH(Pointer.to(target), output.pointer(), bytes);
    } finally {
      cuStreamDestroy(stream);
    }
  }

  private static DeviceBuffer deviceOffsets(RowBatch batch, long first) {
    if (!batch.isRagged()) {
      return null;
    }
    long[] offsets = new long[batch.rows() + 1];
    for (int row = 0; row < batch.rows(); row++) {
      offsets[row] = batch.rowStart(row) - first;
    }
    offsets[batch.rows()] =
        batch.rowStart(batch.rows() - 1) + batch.rowWidth(batch.rows() - 1) - first;
    DeviceBuffer buffer = new DeviceBuffer((long) offsets.length * Long.BYTES, "row offsets");
    cuMemcpyHtoD(buffer.pointer(), Pointer.to(offsets), (long) offsets.length * Long.BYTES);
    return buffer;
  }

  private static DeviceBuffer deviceParameter(double[] values, ElementType type) {
    if (values == null) {
      return null;
    }
    int size = type == ElementType.FLOAT64 ? Double.BYTES : Float.BYTES;
    DeviceBuffer buffer = new DeviceBuffer((long) values.length * size, "weight or bias");
    cuMemcpyHtoD(
        buffer.pointer(), CudaLauncher.hostParameter(values, type), (long) values.length * size);
    return buffer;
  }

  private static CUdeviceptr pointerOrNull(DeviceBuffer buffer) {
    return buffer == null ? new CUdeviceptr() : buffer.pointer();
  }

  private static ByteBuffer slice(
      ByteBuffer buffer, long firstElement, long bytes, ElementType type) {
    int start = Math.toIntExact(firstElement * type.byteWidth());
    ByteBuffer view = buffer.duplicate();
    view.clear();
    view.position(start);
    view.limit(Math.toIntExact(start + bytes));
    return view.slice();
  }

  /** Makes every later call poison its device output before the kernel runs (tests only). */
  static void poisonOutputsForTests() {
    poisonOutputs = true;
  }

  /**
   * Nothing to free: contexts and modules live as long as the process, buffers as long as a call.
   */
  @Override
  public void close() {}
}

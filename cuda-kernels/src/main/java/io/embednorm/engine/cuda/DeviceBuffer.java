package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.GpuOutOfMemoryException;
import jcuda.CudaException;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;

/** Device memory of one allocation; whoever allocates it closes it. */
final class DeviceBuffer implements AutoCloseable {
  private final CUdeviceptr pointer = new CUdeviceptr();
  private final long bytes;
  private boolean closed;

  /** Allocates {@code bytes} (at least 1) on the current context's device. */
  DeviceBuffer(long bytes, String what) {
    this.bytes = Math.max(bytes, 1);
    try {
      cuMemAlloc(pointer, this.bytes);
    } catch (CudaException failure) {
      if (failure.getMessage() != null
          && failure.getMessage().contains(CUresult.stringFor(CUresult.CUDA_ERROR_OUT_OF_MEMORY))) {
        throw new GpuOutOfMemoryException(
            "Cannot allocate " + this.bytes + " bytes of GPU memory for " + what, failure);
      }
      throw new GpuFaultException(
          "Cannot allocate "
              + this.bytes
              + " bytes of GPU memory for "
              + what
              + ": "
              + failure.getMessage(),
          failure);
    }
  }

  /**
   * A weight or bias on the device as the kernels read it (float, or double for float64 rows), or
   * null for none; the caller closes it.
   */
  static DeviceBuffer parameter(double[] values, ElementType type) {
    if (values == null) {
      return null;
    }
    int size = type == ElementType.FLOAT64 ? Double.BYTES : Float.BYTES;
    long bytes = (long) values.length * size;
    DeviceBuffer buffer = new DeviceBuffer(bytes, "weight or bias");
    cuMemcpyHtoD(buffer.pointer(), CudaLauncher.hostParameter(values, type), bytes);
    return buffer;
  }

  CUdeviceptr pointer() {
    return pointer;
  }

  long bytes() {
    return bytes;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      cuMemFree(pointer);
    }
  }
}

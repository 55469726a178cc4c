package io.embednorm.arrow;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;

/**
 * A GPU's memory in use, as the driver reports it: leak checks compare it before and after. Shared
 * with spark-udf's tests through this module's test-jar.
 */
public final class DeviceMemory {
  private DeviceMemory() {}

  /** GPU 0's. */
  public static long inUse() {
    return inUse(0);
  }

  /** GPU {@code ordinal}'s. */
  public static long inUse(int ordinal) {
    CUdevice device = new CUdevice();
    cuDeviceGet(device, ordinal);
    CUcontext context = new CUcontext();
    cuDevicePrimaryCtxRetain(context, device);
    try {
      cuCtxSetCurrent(context);
      long[] free = new long[1];
      long[] total = new long[1];
      cuMemGetInfo(free, total);
      return total[0] - free[0];
    } finally {
      cuDevicePrimaryCtxRelease(device);
    }
  }
}

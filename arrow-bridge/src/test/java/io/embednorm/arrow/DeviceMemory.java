package io.embednorm.arrow;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;

/**
 * GPU 0's memory in use, as the driver reports it: leak checks compare it before and after. Shared
 * with spark-udf's tests through this module's test-jar.
 */
public final class DeviceMemory {
  private DeviceMemory() {}

  public static long inUse() {
    CUdevice device = new CUdevice();
    cuDeviceGet(device, 0);
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

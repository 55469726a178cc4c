package io.embednorm.engine.cuda;

import jcuda.driver.CUdevice;
import jcuda.driver.JCudaDriver;

/**
 * Whether CUDA can be used in this process, and why not. JCuda's native library needs the driver's
 * {@code libcuda.so.1}; where it is missing (CI, laptops) loading fails, which is a normal "no GPU"
 * answer here, never a crash. Probed once per process.
 */
public record CudaAvailability(boolean usable, int deviceCount, String deviceName, String reason) {

  private static volatile CudaAvailability probed;

  /** The answer for this process (probing the driver on first call). */
  public static CudaAvailability get() {
    CudaAvailability result = probed;
    if (result == null) {
      synchronized (CudaAvailability.class) {
        result = probed;
        if (result == null) {
          result = probe();
          probed = result;
        }
      }
    }
    return result;
  }

  private static CudaAvailability probe() {
    try {
      JCudaDriver.setExceptionsEnabled(true);
      JCudaDriver.cuInit(0);
      int[] count = new int[1];
      JCudaDriver.cuDeviceGetCount(count);
      if (count[0] == 0) {
        return new CudaAvailability(false, 0, null, "the CUDA driver reports no device");
      }
      CUdevice device = new CUdevice();
      JCudaDriver.cuDeviceGet(device, 0);
      byte[] name = new byte[256];
      JCudaDriver.cuDeviceGetName(name, name.length, device);
      String deviceName = new String(name, java.nio.charset.StandardCharsets.US_ASCII).trim();
      int zero = deviceName.indexOf('\0');
      deviceName = zero >= 0 ? deviceName.substring(0, zero) : deviceName;
      return new CudaAvailability(true, count[0], deviceName, "found " + deviceName);
    } catch (UnsatisfiedLinkError | NoClassDefFoundError missing) {
      return new CudaAvailability(
          false,
          0,
          null,
          "the CUDA driver library (libcuda.so.1) could not be loaded: " + firstLine(missing));
    } catch (RuntimeException failure) {
      return new CudaAvailability(
          false, 0, null, "the CUDA driver could not start: " + firstLine(failure));
    }
  }

  private static String firstLine(Throwable failure) {
    String message = failure.getMessage();
    if (message == null) {
      return failure.getClass().getSimpleName();
    }
    return message.strip().lines().findFirst().orElse(message);
  }
}

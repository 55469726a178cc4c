package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import io.embednorm.engine.EmbedNormException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;

/**
 * A device's primary context, retained once per process and shared by every engine on that device
 * (as the CUDA runtime does). {@link #makeCurrent()} binds it to the calling thread: every call
 * into the driver from a new thread starts with it.
 */
public final class CudaContext {
  private static final ConcurrentMap<Integer, CudaContext> CONTEXTS = new ConcurrentHashMap<>();

  private final int ordinal;
  private final CUcontext context;
  private final int multiprocessors;
  private final int sharedMemoryPerBlockOptIn;
  private final int computeCapability;
  private final long memoryBandwidth;

  private CudaContext(int ordinal) {
    CudaAvailability availability = CudaAvailability.get();
    if (!availability.usable()) {
      throw new EmbedNormException("Cannot use device gpu: " + availability.reason());
    }
    if (ordinal < 0 || ordinal >= availability.deviceCount()) {
      throw new EmbedNormException(
          "Cannot use GPU "
              + ordinal
              + ": the driver reports "
              + availability.deviceCount()
              + " device(s)");
    }
    this.ordinal = ordinal;
    CUdevice device = new CUdevice();
    cuDeviceGet(device, ordinal);
    this.context = new CUcontext();
    cuDevicePrimaryCtxRetain(context, device);
    cuCtxSetCurrent(context);
    this.multiprocessors =
        attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    this.sharedMemoryPerBlockOptIn =
        attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    this.computeCapability =
        10 * attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
            + attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    // Double data rate: two transfers a clock over the bus.
    this.memoryBandwidth =
        2L
            * 1000L
            * attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
            * attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
            / 8;
  }

  /** The context of device {@code ordinal}, made current in the calling thread. */
  public static CudaContext of(int ordinal) {
    CudaContext shared = CONTEXTS.computeIfAbsent(ordinal, CudaContext::new);
    shared.makeCurrent();
    return shared;
  }

  /** Binds this context to the calling thread. */
  public void makeCurrent() {
    cuCtxSetCurrent(context);
  }

  public int ordinal() {
    return ordinal;
  }

  public int multiprocessors() {
    return multiprocessors;
  }

  /** The most shared memory one block may ask for after opting in. */
  public int sharedMemoryPerBlockOptIn() {
    return sharedMemoryPerBlockOptIn;
  }

  /** E.g. 90 for an H100. */
  public int computeCapability() {
    return computeCapability;
  }

  /**
   * The device memory's peak bandwidth in bytes a second, from its clock and bus width as the
   * driver reports them (H100 80GB HBM3: 3.35e12; H200: 4.8e12); 0 where the driver reports
   * neither.
   */
  public long memoryBandwidth() {
    return memoryBandwidth;
  }

  /**
   * Bytes of device memory in use on this device, by every process (total minus free, as the driver
   * reports them): tests compare it before and after work to find leaks.
   */
  public long memoryInUse() {
    makeCurrent();
    long[] free = new long[1];
    long[] total = new long[1];
    cuMemGetInfo(free, total);
    return total[0] - free[0];
  }

  private static int attribute(CUdevice device, int attribute) {
    int[] value = new int[1];
    cuDeviceGetAttribute(value, attribute, device);
    return value[0];
  }
}

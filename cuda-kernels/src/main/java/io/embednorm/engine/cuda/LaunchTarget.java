package io.embednorm.engine.cuda;

/**
 * What {@link LaunchPlan} needs of a device: the kernels' tuning and the device's figures. {@link
 * KernelModule} is the one for a live device; tests plan for model devices without one.
 */
interface LaunchTarget {
  KernelTuning tuning();

  /** E.g. 90 for an H100. */
  int computeCapability();

  int multiprocessors();

  /** Peak memory bandwidth in bytes a second (see {@link CudaContext#memoryBandwidth()}). */
  long memoryBandwidth();

  /** Blocks of {@code kernel} an SM holds at once, of {@code block} threads and shared bytes. */
  int occupancy(String kernel, int block, int dynamicSharedBytes);

  /** Dynamic shared memory a block of {@code kernel} may use on this device. */
  int dynamicSharedMemoryLimit(String kernel);
}

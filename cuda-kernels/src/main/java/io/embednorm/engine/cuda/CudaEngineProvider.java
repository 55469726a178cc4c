package io.embednorm.engine.cuda;

import io.embednorm.engine.Device;
import io.embednorm.engine.GpuSettings;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.spi.EngineProvider;

/** Makes the CUDA engine known to {@code Engines}; found by ServiceLoader. */
public final class CudaEngineProvider implements EngineProvider {

  @Override
  public Device device() {
    return Device.GPU;
  }

  @Override
  public String unavailableReason() {
    return CudaEngine.unavailableReason();
  }

  /** The CUDA devices the driver reports to this process (those CUDA_VISIBLE_DEVICES leaves). */
  @Override
  public int deviceCount() {
    return CudaAvailability.get().deviceCount();
  }

  @Override
  public NormalizationEngine open(int threads, GpuSettings gpu) {
    return new CudaEngine(gpu);
  }
}

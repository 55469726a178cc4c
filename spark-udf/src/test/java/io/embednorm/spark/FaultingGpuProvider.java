package io.embednorm.spark;

import io.embednorm.arrow.FaultingGpuEngine;
import io.embednorm.engine.Device;
import io.embednorm.engine.GpuSettings;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.spi.EngineProvider;

/**
 * Offers arrow-bridge's {@link FaultingGpuEngine} as the GPU. Listed by a services file that {@link
 * GpuFallbackQueryTest} puts first on the class path of the JVM it starts, never in this module's
 * own test JVM, where it would take the GPU's place for every test.
 */
public final class FaultingGpuProvider implements EngineProvider {
  @Override
  public Device device() {
    return Device.GPU;
  }

  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public NormalizationEngine open(int threads, GpuSettings gpu) {
    return new FaultingGpuEngine();
  }
}

package io.embednorm.engine.cpu;

import io.embednorm.engine.Device;
import io.embednorm.engine.GpuSettings;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.spi.EngineProvider;

/** Makes the CPU engine known to {@code Engines}; found by ServiceLoader. */
public final class CpuEngineProvider implements EngineProvider {

  @Override
  public Device device() {
    return Device.CPU;
  }

  /** The CPU engine always runs: the Vector API when the JVM has it, plain Java otherwise. */
  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public NormalizationEngine open(int threads, GpuSettings gpu) {
    return new CpuEngine(threads);
  }
}

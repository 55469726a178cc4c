package io.embednorm.spark;

import io.embednorm.arrow.HostCopyGpuEngine;
import io.embednorm.engine.Device;
import io.embednorm.engine.GpuSettings;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.spi.EngineProvider;

/**
 * Offers arrow-bridge's {@link HostCopyGpuEngine} (chunks copied and computed on lane threads, out
 * of step, lowest bit flipped) as the GPU, seeded by {@code embednorm.test.seed}. Listed only in
 * the JVM that {@link StagedColumnarTest} starts ({@link TestGpuJvm}).
 */
public final class HostCopyGpuProvider implements EngineProvider {
  /** Each chunk waits up to this long on its lane, so that chunks complete out of step. */
  private static final int MAXIMUM_DELAY_MICROS = 200;

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
    return new HostCopyGpuEngine(TestData.SEED, MAXIMUM_DELAY_MICROS);
  }
}

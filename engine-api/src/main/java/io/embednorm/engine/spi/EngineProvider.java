package io.embednorm.engine.spi;

import io.embednorm.engine.Device;
import io.embednorm.engine.GpuSettings;
import io.embednorm.engine.NormalizationEngine;

/**
 * How an engine module makes itself known: one implementation per device, listed in the module's
 * {@code META-INF/services/io.embednorm.engine.spi.EngineProvider} and found by {@link
 * java.util.ServiceLoader}. Surfaces never see providers; they go through {@link
 * io.embednorm.engine.Engines}.
 */
public interface EngineProvider {

  /** The device this provider's engines run on. */
  Device device();

  /**
   * Why no engine of this provider can start in this process (for example, no CUDA driver), or null
   * when one can. {@code Engines} asks once per process.
   */
  String unavailableReason();

  /**
   * How many devices of this kind engines can open, by ordinal from 0; asked only when {@link
   * #unavailableReason()} is null. One unless the provider says otherwise.
   */
  default int deviceCount() {
    return 1;
  }

  /**
   * A new engine; the caller closes it.
   *
   * @param threads the most host threads one call may use (CPU engines)
   * @param gpu the device ordinal and concurrent users (GPU engines)
   */
  NormalizationEngine open(int threads, GpuSettings gpu);
}

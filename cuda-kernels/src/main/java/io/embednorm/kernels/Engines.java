package io.embednorm.kernels;

import io.embednorm.kernels.cpu.CpuEngine;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Resolves a {@link DeviceChoice} to an engine, and says why. */
public final class Engines {
  private static final Logger LOG = LoggerFactory.getLogger(Engines.class);
  private static final ConcurrentMap<String, Boolean> LOGGED = new ConcurrentHashMap<>();

  /** Why no GPU engine can be used in this build; the CUDA issue replaces this with a probe. */
  static final String NO_GPU_REASON = "this build of embednorm has no CUDA engine yet";

  private Engines() {}

  /**
   * Returns a new engine for {@code choice}; the caller closes it. {@code auto} falls back to the
   * CPU and logs why, once per reason; {@code gpu} with no usable GPU throws, saying why.
   */
  public static EngineSelection select(DeviceChoice choice) {
    switch (choice) {
      case CPU:
        return new EngineSelection(new CpuEngine(), "cpu was requested");
      case GPU:
        throw new EmbedNormException(
            "Cannot use device gpu: " + NO_GPU_REASON + "; use device auto or cpu");
      case AUTO:
      default:
        String reason = "auto chose cpu: " + NO_GPU_REASON;
        if (LOGGED.putIfAbsent(reason, Boolean.TRUE) == null) {
          LOG.info("embednorm {}", reason);
        }
        return new EngineSelection(new CpuEngine(), reason);
    }
  }
}

package io.embednorm.kernels;

import io.embednorm.kernels.cpu.CpuEngine;
import io.embednorm.kernels.cuda.CudaEngine;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Resolves a {@link DeviceChoice} to an engine, and says why. */
public final class Engines {
  private static final ConcurrentMap<String, Boolean> LOGGED = new ConcurrentHashMap<>();

  private Engines() {}

  /**
   * Returns a new engine for {@code choice}; the caller closes it. {@code auto} takes GPU 0 when
   * CUDA is usable and falls back to the CPU otherwise, logging why once per reason; {@code gpu}
   * with no usable GPU throws, saying why.
   */
  public static EngineSelection select(DeviceChoice choice) {
    return select(choice, GpuSettings.DEFAULT);
  }

  /** As {@link #select(DeviceChoice)}, a GPU engine taking {@code gpu}'s device and user limit. */
  public static EngineSelection select(DeviceChoice choice, GpuSettings gpu) {
    switch (choice) {
      case CPU:
        return new EngineSelection(new CpuEngine(), "cpu was requested");
      case GPU:
        String unavailable = CudaEngine.unavailableReason();
        if (unavailable != null) {
          throw new EmbedNormException(
              "Cannot use device gpu: " + unavailable + "; use device auto or cpu");
        }
        CudaEngine requested = new CudaEngine(gpu);
        return new EngineSelection(requested, "gpu was requested: " + requested.description());
      case AUTO:
      default:
        String why = CudaEngine.unavailableReason();
        if (why == null) {
          try {
            CudaEngine chosen = new CudaEngine(gpu);
            return logged(new EngineSelection(chosen, "auto chose " + chosen.description()));
          } catch (EmbedNormException failure) {
            why = "the CUDA engine could not start: " + failure.getMessage();
          }
        }
        return logged(new EngineSelection(new CpuEngine(), "auto chose cpu: " + why));
    }
  }

  private static EngineSelection logged(EngineSelection selection) {
    if (LOGGED.putIfAbsent(selection.reason(), Boolean.TRUE) == null) {
      Log.LOG.info("embednorm {}", selection.reason());
    }
    return selection;
  }

  /**
   * The logger, set up on first use only: starting a logging back end takes a good part of a
   * second, which {@code cpu} (never logged) should not pay.
   */
  private static final class Log {
    static final Logger LOG = LoggerFactory.getLogger(Engines.class);
  }
}

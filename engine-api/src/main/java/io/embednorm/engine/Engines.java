package io.embednorm.engine;

import io.embednorm.engine.spi.EngineProvider;
import java.util.EnumMap;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves a {@link DeviceChoice} to an engine, and says why. Engines are found on the class path
 * through {@link EngineProvider}; the surfaces depend on this class and the contract only.
 */
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
        return new EngineSelection(cpu(), "cpu was requested");
      case GPU:
        String unavailable = gpuUnavailableReason();
        if (unavailable != null) {
          throw new EmbedNormException(
              "Cannot use device gpu: " + unavailable + "; use device auto or cpu");
        }
        NormalizationEngine requested = provider(Device.GPU).open(1, gpu);
        return new EngineSelection(requested, "gpu was requested: " + requested.description());
      case AUTO:
      default:
        String why = gpuUnavailableReason();
        if (why == null) {
          try {
            NormalizationEngine chosen = provider(Device.GPU).open(1, gpu);
            return logged(new EngineSelection(chosen, "auto chose " + chosen.description()));
          } catch (EmbedNormException failure) {
            why = "the CUDA engine could not start: " + failure.getMessage();
          }
        }
        return logged(new EngineSelection(cpu(), "auto chose cpu: " + why));
    }
  }

  /** A new CPU engine with one thread per available processor; the caller closes it. */
  public static NormalizationEngine cpu() {
    return cpu(Runtime.getRuntime().availableProcessors());
  }

  /**
   * A new CPU engine that runs one call on up to {@code threads} threads (the caller's included);
   * the caller closes it.
   */
  public static NormalizationEngine cpu(int threads) {
    return provider(Device.CPU).open(threads, GpuSettings.DEFAULT);
  }

  /**
   * Why no GPU engine can start in this process (no CUDA engine on the class path, a jar built
   * without kernels, no driver, no device), or null when one can.
   */
  public static String gpuUnavailableReason() {
    return GpuProbe.GPU_UNAVAILABLE;
  }

  /**
   * How many GPUs engines can open in this process (ordinals 0 to the count less one), or 0 when no
   * GPU is usable ({@link #gpuUnavailableReason()}).
   */
  public static int gpuCount() {
    return gpuUnavailableReason() == null ? Providers.ALL.get(Device.GPU).deviceCount() : 0;
  }

  /**
   * The pinned host memory of the GPU engine.
   *
   * @throws EmbedNormException when no GPU is usable in this process (pinned memory needs the
   *     driver), saying why
   */
  public static HostMemory hostMemory() {
    String unavailable = gpuUnavailableReason();
    if (unavailable != null) {
      throw new EmbedNormException("Cannot use pinned host memory: " + unavailable);
    }
    return Services.HOST_MEMORY;
  }

  /** The CPU engine's loops over rows held in Java arrays. */
  public static ArrayKernels arrayKernels() {
    return Services.ARRAY_KERNELS;
  }

  /** The CPU engine's {@code causal_conv} on Java arrays. */
  public static CausalConvolution causalConvolution() {
    return ConvolutionService.CAUSAL_CONVOLUTION;
  }

  private static EngineProvider provider(Device device) {
    EngineProvider provider = Providers.ALL.get(device);
    if (provider == null) {
      throw new EmbedNormException(
          "Cannot use device "
              + device.name().toLowerCase(java.util.Locale.ROOT)
              + ": no engine for it on the class path");
    }
    return provider;
  }

  private static EngineSelection logged(EngineSelection selection) {
    if (LOGGED.putIfAbsent(selection.reason(), Boolean.TRUE) == null) {
      Log.LOG.info("embednorm {}", selection.reason());
    }
    return selection;
  }

  /**
   * The providers on the class path, one per device, found once: they do not change while the
   * process runs.
   */
  private static final class Providers {
    static final Map<Device, EngineProvider> ALL = load();

    private static Map<Device, EngineProvider> load() {
      Map<Device, EngineProvider> providers = new EnumMap<>(Device.class);
      for (EngineProvider provider :
          ServiceLoader.load(EngineProvider.class, Engines.class.getClassLoader())) {
        providers.putIfAbsent(provider.device(), provider);
      }
      return providers;
    }
  }

  /**
   * Why no GPU engine can start, found once, apart from {@link Providers}: it does not change while
   * the process runs, and pinned allocations ask for every buffer. Finding it starts the CUDA
   * driver (a good part of a second on a GPU host), which a CPU engine should not wait for.
   */
  private static final class GpuProbe {
    static final String GPU_UNAVAILABLE =
        Providers.ALL.containsKey(Device.GPU)
            ? Providers.ALL.get(Device.GPU).unavailableReason()
            : "no CUDA engine on the class path (embednorm-cuda-kernels)";
  }

  /** The one provider of {@code service} on the class path. */
  private static <T> T only(Class<T> service) {
    return ServiceLoader.load(service, Engines.class.getClassLoader())
        .findFirst()
        .orElseThrow(
            () ->
                new EmbedNormException(
                    "Cannot find "
                        + service.getSimpleName()
                        + ": no engine that provides it on the class path"));
  }

  /** The convolution, apart from the other services: a jar may hold it without pinned memory. */
  private static final class ConvolutionService {
    static final CausalConvolution CAUSAL_CONVOLUTION = only(CausalConvolution.class);
  }

  /** The engines' other services, found on first use. */
  private static final class Services {
    static final HostMemory HOST_MEMORY = only(HostMemory.class);
    static final ArrayKernels ARRAY_KERNELS = only(ArrayKernels.class);
  }

  /**
   * The logger, set up on first use only: starting a logging back end takes a good part of a
   * second, which {@code cpu} (never logged) should not pay.
   */
  private static final class Log {
    static final Logger LOG = LoggerFactory.getLogger(Engines.class);
  }
}

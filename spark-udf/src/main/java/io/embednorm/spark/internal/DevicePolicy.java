package io.embednorm.spark.internal;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.spark.EmbedNormConfig;
import java.util.function.Function;
import org.apache.spark.sql.internal.SQLConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies {@code spark.embednorm.device} to the SQL functions: {@code gpu} with no usable GPU fails
 * the query saying why (rather than silently running on the CPU), and {@link #placement} says where
 * the columnar operator will run and why, for explain output and logs.
 */
public final class DevicePolicy {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePolicy.class);
  private static final String VECTOR_MODULE = "jdk.incubator.vector";

  private DevicePolicy() {}

  /** {@link #check(Function, String)} against a SQL conf. */
  public static void check(SQLConf conf, String functions) {
    check(key -> conf.contains(key) ? conf.getConfString(key) : null, functions);
  }

  /**
   * Checks that {@code functions} (e.g. {@code rms_norm, l2_normalize}) may run under the device
   * setting found through {@code lookup}; with {@code spark.embednorm.explain}, logs where they
   * run.
   *
   * @throws EmbedNormException when the setting is {@code gpu} and no GPU is usable, or a setting
   *     does not parse
   */
  public static void check(Function<String, String> lookup, String functions) {
    DeviceChoice device = EmbedNormConfig.DEVICE.read(lookup);
    if (device == DeviceChoice.GPU) {
      String unavailable = Engines.gpuUnavailableReason();
      if (unavailable != null) {
        throw new EmbedNormException(
            "Cannot run "
                + functions
                + " with "
                + EmbedNormConfig.DEVICE.name()
                + "=gpu: no GPU is usable ("
                + unavailable
                + "); set it to auto or cpu to run on the CPU");
      }
    }
    if (EmbedNormConfig.EXPLAIN.read(lookup)) {
      LOG.info(
          "embednorm: {} run in the columnar operator {}, or on the CPU row path where a"
              + " projection is not eligible (EXPLAIN shows the reason next to the call)",
          functions,
          placement(device));
    }
  }

  /**
   * Where an executor's normalizer runs and why, for the line each executor logs once, e.g. {@code
   * executor 1 normalizes on cpu (java simd, 256-bit, 2 threads) (auto chose cpu: ...): SIMD
   * kernels}. On the CPU it says whether the SIMD or the scalar kernels run, and how to get the
   * SIMD ones where the Vector API module is missing.
   */
  public static String executorPlacement(String executorId, ArrowNormalizer normalizer) {
    return executorPlacement(
        executorId,
        normalizer.device(),
        normalizer.engineDescription(),
        normalizer.deviceReason(),
        ModuleLayer.boot().findModule(VECTOR_MODULE).isPresent());
  }

  /** {@link #executorPlacement(String, ArrowNormalizer)} from its parts. */
  static String executorPlacement(
      String executorId,
      Device device,
      String engineDescription,
      String deviceReason,
      boolean vectorModuleLoaded) {
    String line = "embednorm: executor " + executorId + " normalizes on " + engineDescription;
    if (device == Device.GPU) {
      return line
          + " ("
          + EmbedNormConfig.DEVICE.name()
          + "="
          + (deviceReason.startsWith("auto") ? "auto" : "gpu")
          + ")";
    }
    String kernels;
    if (!engineDescription.contains("scalar")) {
      kernels = "SIMD kernels";
    } else if (vectorModuleLoaded) {
      kernels =
          "scalar kernels, since this JVM has no 256-bit vectors or embednorm.cpu.simd is false";
    } else {
      kernels =
          "scalar kernels, since "
              + VECTOR_MODULE
              + " is not loaded; add --add-modules="
              + VECTOR_MODULE
              + " to spark.executor.extraJavaOptions for the SIMD ones";
    }
    return line + " (" + deviceReason + "): " + kernels;
  }

  /**
   * Where the columnar operator runs under {@code device}, and why, as seen from the driver, e.g.
   * {@code on the CPU engine (auto: no usable GPU: ...)}. Executors decide again for themselves
   * under {@code auto}.
   */
  public static String placement(DeviceChoice device) {
    switch (device) {
      case CPU:
        return "on the CPU engine (cpu was requested)";
      case GPU:
        String driverUnavailable = Engines.gpuUnavailableReason();
        return driverUnavailable == null
            ? "on the GPU (gpu was requested)"
            : "on the GPU (gpu was requested, but the driver has no usable GPU: "
                + driverUnavailable
                + "; an executor without one fails the query)";
      case AUTO:
      default:
        String unavailable = Engines.gpuUnavailableReason();
        return unavailable == null
            ? "on the GPU (auto: the driver has a usable GPU; an executor without one uses its CPU"
                + " engine, and batches under "
                + (InternalSwitches.AUTO_GPU_MIN_CALL_BYTES.value() >> 10)
                + " KiB of elements run on the CPU engine, which finishes them sooner)"
            : "on the CPU engine (auto: no usable GPU: " + unavailable + ")";
    }
  }
}

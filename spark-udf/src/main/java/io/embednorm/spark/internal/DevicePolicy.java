package io.embednorm.spark.internal;

import io.embednorm.kernels.DeviceChoice;
import io.embednorm.kernels.EmbedNormException;
import io.embednorm.kernels.cuda.CudaEngine;
import io.embednorm.spark.EmbedNormConfig;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import org.apache.spark.sql.internal.SQLConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies {@code spark.embednorm.device} to the SQL functions while only the CPU row path exists:
 * {@code gpu} with no usable GPU fails the query saying why (rather than silently running on the
 * CPU), {@code gpu} with a usable GPU runs on the CPU and warns that the columnar GPU operator is
 * not built yet, and {@code spark.embednorm.explain} logs where the functions run.
 */
public final class DevicePolicy {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePolicy.class);
  private static final ConcurrentMap<String, Boolean> LOGGED = new ConcurrentHashMap<>();

  private DevicePolicy() {}

  /** {@link #check(Function, String)} against a SQL conf. */
  public static void check(SQLConf conf, String functions) {
    check(key -> conf.contains(key) ? conf.getConfString(key) : null, functions);
  }

  /**
   * Checks that {@code functions} (e.g. {@code rms_norm, l2_normalize}) may run under the device
   * setting found through {@code lookup}.
   *
   * @throws EmbedNormException when the setting is {@code gpu} and no GPU is usable, or a setting
   *     does not parse
   */
  public static void check(Function<String, String> lookup, String functions) {
    DeviceChoice device = EmbedNormConfig.DEVICE.read(lookup);
    boolean explain = EmbedNormConfig.EXPLAIN.read(lookup);
    String where;
    switch (device) {
      case GPU:
        String unavailable = CudaEngine.unavailableReason();
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
        where =
            "the CPU row path, although gpu was requested: the columnar GPU operator is not built"
                + " yet";
        warnOnce("embednorm runs " + functions + " on " + where);
        break;
      case CPU:
        where = "the CPU row path (cpu was requested)";
        break;
      case AUTO:
      default:
        where = "the CPU row path (auto: the columnar GPU operator is not built yet)";
        break;
    }
    if (explain) {
      LOG.info("embednorm runs {} on {}", functions, where);
    }
  }

  private static void warnOnce(String message) {
    if (LOGGED.putIfAbsent(message, Boolean.TRUE) == null) {
      LOG.warn(message);
    }
  }
}

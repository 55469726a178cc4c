package io.embednorm.engine.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A CPU engine starts without the CUDA driver: probing it (cuInit) takes a good part of a second on
 * a GPU host, which {@code normalize --device cpu} would wait for. Runs in a JVM of its own, since
 * other tests of this module probe the driver.
 */
class CpuEngineStartTest {

  @Test
  void theCpuEngineStartsWithoutProbingTheGpu() throws Exception {
    Process process =
        new ProcessBuilder(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    System.getProperty("java.class.path"),
                    StartCpuEngines.class.getName()))
            .redirectErrorStream(true)
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    assertThat(output.strip()).isEqualTo("GPU not probed");
  }

  /**
   * Starts CPU engines as {@code normalize --device cpu} does, then says whether CUDA was probed.
   */
  static final class StartCpuEngines {
    public static void main(String[] args) throws Exception {
      Engines.cpu().close();
      try (EngineSelection selection = Engines.select(DeviceChoice.CPU)) {
        selection.engine();
      }
      java.lang.reflect.Field probed = CudaAvailability.class.getDeclaredField("probed");
      probed.setAccessible(true);
      System.out.println(probed.get(null) == null ? "GPU not probed" : "GPU probed");
    }
  }
}

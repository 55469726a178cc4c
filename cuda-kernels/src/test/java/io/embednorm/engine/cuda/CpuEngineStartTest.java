package io.embednorm.engine.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import io.embednorm.engine.OwnJvm;
import org.junit.jupiter.api.Test;

/**
 * A CPU engine starts without the CUDA driver: probing it (cuInit) takes a good part of a second on
 * a GPU host, which {@code normalize --device cpu} would wait for. Runs in a JVM of its own, since
 * other tests of this module probe the driver.
 */
class CpuEngineStartTest {

  @Test
  void theCpuEngineStartsWithoutProbingTheGpu() throws Exception {
    String output = OwnJvm.run(StartCpuEngines.class);
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

package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.OwnJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Under {@code auto}, a file below {@code embednorm.auto.gpuMinFileBytes} goes to the CPU engine
 * without the CUDA driver being probed (cuInit takes a good part of a second on a GPU host), and
 * the reason names the rule. Runs in a JVM of its own, since other tests probe the driver.
 */
class AutoFileStartTest {

  @Test
  void aSmallFileUnderAutoLeavesTheGpuUnprobed() throws Exception {
    String output = OwnJvm.run(SelectForSmallFile.class);
    assertThat(output).contains("embednorm.auto.gpuMinFileBytes").endsWith("GPU not probed\n");
  }

  /** Selects the engine for a 4 KiB file under auto, then says whether CUDA was probed. */
  static final class SelectForSmallFile {
    public static void main(String[] args) throws Exception {
      Path file = Files.createTempFile("embednorm-auto", ".arrow");
      try {
        Files.write(file, new byte[4096]);
        try (EngineSelection selection = FileDevices.select(file, DeviceChoice.AUTO)) {
          System.out.println(selection.reason());
        }
      } finally {
        Files.delete(file);
      }
      java.lang.reflect.Field probed =
          Class.forName("io.embednorm.engine.cuda.CudaAvailability").getDeclaredField("probed");
      probed.setAccessible(true);
      System.out.println(probed.get(null) == null ? "GPU not probed" : "GPU probed");
    }
  }
}

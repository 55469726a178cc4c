package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.spark.internal.Normalizers;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;

/**
 * The line an executor logs at WARN about where it normalizes: once per engine however many tasks
 * ask for it, none in local mode (executor {@code driver}), and on the CPU whether the SIMD kernels
 * run. The test JVM loads jdk.incubator.vector (the pom's JVM options), so it runs them where the
 * machine has 256-bit vectors (its engine's description says which).
 */
class ExecutorPlacementLogTest {
  @Test
  void anExecutorSaysOnceOnWhichDeviceAndKernelsItNormalizes() {
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer first = cpu(allocator);
        ArrowNormalizer second = cpu(allocator);
        LogCapture log = LogCapture.of("io.embednorm", Level.WARN)) {
      boolean simd = first.engineDescription().startsWith("cpu (java simd");
      Normalizers.Placements placements = new Normalizers.Placements();
      for (int task = 0; task < 3; task++) {
        assertThat(placements.announce("7", task == 0 ? first : second)).isNotNull();
      }
      assertThat(log.messages())
          .singleElement()
          .asString()
          .startsWith("embednorm: executor 7 normalizes on cpu (java ")
          .endsWith(
              simd
                  ? "(cpu was requested): SIMD kernels"
                  : "(cpu was requested): scalar kernels, since this JVM has no 256-bit vectors"
                      + " or embednorm.cpu.simd is false");
    }
  }

  @Test
  void theDriverOfLocalModeSaysNothing() {
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = cpu(allocator);
        LogCapture log = LogCapture.of("io.embednorm", Level.WARN)) {
      new Normalizers.Placements().announce("driver", normalizer);
      assertThat(log.messages()).isEmpty();
    }
  }

  private static ArrowNormalizer cpu(BufferAllocator allocator) {
    return ArrowNormalizer.builder(allocator).device(DeviceChoice.CPU).build();
  }
}

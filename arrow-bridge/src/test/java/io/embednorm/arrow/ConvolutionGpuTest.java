package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Engines;
import io.embednorm.engine.TestSeeds;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * {@link ArrowNormalizer#causalConv} on a real GPU: rows of several lengths with null and empty
 * rows against the float64 reference and, bit for bit, against each row alone on the GPU engine
 * (rows of near lengths share a padded batch), the memory of the allocator all returned. Skipped
 * where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class ConvolutionGpuTest {
  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  @BeforeAll
  static void requireGpu() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
  }

  @Test
  void aGpuNormalizerConvolvesRowsOfMixedLengths() {
    long seed = TestSeeds.seeds()[0];
    System.out.println("ConvolutionGpuTest seed " + seed);
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer gpu = ArrowNormalizer.create(allocator, DeviceChoice.GPU)) {
      assertThat(gpu.device()).isEqualTo(Device.GPU);
      ArrowNormalizerConvolutionTest.checkAgainstReference(
          allocator, gpu, new Random(seed), Engines.select(DeviceChoice.GPU).engine());
    }
  }
}

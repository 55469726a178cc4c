package io.embednorm.engine.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Size classes of the pinned pool (no GPU needed). */
class PinnedHostMemoryTest {
  @Test
  void sizeClassesHoldTheRequestInWholePagesWithAQuarterToSpare() {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    for (int trial = 0; trial < 100_000; trial++) {
      long bytes = 1 + (long) (Math.pow(2, 36 * random.nextDouble()));
      long capacity = PinnedHostMemory.capacityFor(bytes);
      assertThat(capacity).as("seed %d, %d bytes", seed, bytes).isGreaterThanOrEqualTo(bytes);
      assertThat(capacity % PinnedHostMemory.PAGE).as("seed %d, %d bytes", seed, bytes).isZero();
      assertThat(capacity)
          .as("seed %d, %d bytes", seed, bytes)
          .isLessThanOrEqualTo(
              Math.max(PinnedHostMemory.PAGE, (long) (bytes * 1.25) + PinnedHostMemory.PAGE));
      assertThat(PinnedHostMemory.capacityFor(capacity)).isEqualTo(capacity);
    }
  }

  @Test
  void classesAreFewPerPowerOfTwo() {
    java.util.Set<Long> classes = new java.util.TreeSet<>();
    for (long bytes = (1L << 30) + 1; bytes <= 1L << 31; bytes += 1 << 20) {
      classes.add(PinnedHostMemory.capacityFor(bytes));
    }
    assertThat(classes).hasSizeLessThanOrEqualTo(4);
  }
}

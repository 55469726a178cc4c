package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Engines;
import io.embednorm.engine.InternalSwitches;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * {@link GpuFallbackTest}'s cases on the CUDA engine, faulted through the same switches where it
 * sends chunks to the device: a GPU fault, or no memory at the split floor, gives the CPU engine's
 * bits; an out-of-memory that splitting cures gives the unfaulted GPU bits. The device memory in
 * use returns to where it was, and no host memory stays registered. Skipped where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class GpuFallbackGpuTest extends GpuFallbackTest {
  /**
   * Checked before the class's set-up, so that without a GPU each test is reported as skipped
   * rather than the class as zero tests.
   */
  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  @BeforeAll
  static void requireGpu() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
  }

  @Override
  ArrowNormalizer newGpu(BufferAllocator allocator) {
    return new ArrowNormalizer(
        allocator,
        Engines.select(DeviceChoice.GPU),
        ArrowNormalizer.DEFAULT_CHUNK_BYTES,
        CHUNK_BYTES);
  }

  /** A GPU row may come out with the CPU engine's bits: only the fallback's bits are pinned. */
  @Override
  boolean gpuBitsDifferFromTheCpus() {
    return false;
  }

  /**
   * The first faulted round of each kind may grow what the engine keeps for reuse (buffers of a
   * size it had not needed yet), so the baseline is taken after one; a leak shows as growth over
   * the next twenty.
   */
  @Test
  void faultedCallsLeaveNoDeviceMemoryAndNoRegisteredHostMemory() {
    faultedRound(new NormalizationMetrics());
    long deviceBefore = DeviceMemory.inUse();
    NormalizationMetrics metrics = new NormalizationMetrics();
    for (int round = 1; round <= 20; round++) {
      faultedRound(metrics);
    }
    assertThat(metrics.cpuFallbackCalls()).isEqualTo(20);
    assertThat(metrics.outOfMemorySplits()).isEqualTo(20);
    assertThat(DeviceMemory.inUse()).isEqualTo(deviceBefore);
    assertThat(Engines.hostMemory().registeredBytes()).isZero();
  }

  /** One GPU fault on a fixed-size list column and one cured out-of-memory on a list column. */
  private void faultedRound(NormalizationMetrics metrics) {
    set(InternalSwitches.FAULTS_FAIL_GPU_CALL, 2);
    normalizeOn(gpu, Layout.FIXED_SIZE_LIST, metrics);
    System.clearProperty(InternalSwitches.FAULTS_FAIL_GPU_CALL.name());
    set(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK, 1);
    normalizeOn(gpu, Layout.LIST, metrics);
    System.clearProperty(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK.name());
  }
}

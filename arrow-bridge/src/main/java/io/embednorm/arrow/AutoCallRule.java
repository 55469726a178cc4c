package io.embednorm.arrow;

import io.embednorm.engine.InternalSwitches;

/**
 * Auto's device for one Arrow call of a normalizer that has a GPU (docs/PERFORMANCE.md, "Which
 * device auto takes"). The CPU engine takes a call too small to pay for the GPU's fixed cost per
 * call, and a call on memory the GPU must stage (not pinned) where the CPU engine normalizes it
 * sooner: staging moves each byte four times through host memory, the CPU engine twice, so a CPU
 * engine of many threads passes the staged GPU, and one of few threads only on small calls.
 */
final class AutoCallRule {
  /** Where auto sends a call. */
  enum Choice {
    GPU,
    /** Smaller than {@code embednorm.auto.gpuMinCallBytes}. */
    CPU_SMALL,
    /** On memory the GPU must stage, where the CPU engine is the faster. */
    CPU_STAGED
  }

  /** A normalizer that is not auto, or has no GPU: every call on its own device. */
  static final AutoCallRule NONE = new AutoCallRule(0, 0, Integer.MAX_VALUE, 1);

  private final long gpuMinCallBytes;
  private final long gpuMinStagedCallBytes;
  private final int stagedCpuThreads;
  private final int cpuThreads;

  AutoCallRule(
      long gpuMinCallBytes, long gpuMinStagedCallBytes, int stagedCpuThreads, int cpuThreads) {
    this.gpuMinCallBytes = gpuMinCallBytes;
    this.gpuMinStagedCallBytes = gpuMinStagedCallBytes;
    this.stagedCpuThreads = stagedCpuThreads;
    this.cpuThreads = cpuThreads;
  }

  /** The rule of the internal switches, for a CPU engine on every processor of this JVM. */
  static AutoCallRule fromSwitches() {
    return new AutoCallRule(
        InternalSwitches.AUTO_GPU_MIN_CALL_BYTES.value(),
        InternalSwitches.AUTO_GPU_MIN_STAGED_CALL_BYTES.value(),
        InternalSwitches.AUTO_STAGED_CPU_THREADS.value(),
        Runtime.getRuntime().availableProcessors());
  }

  /**
   * Where a call on {@code bytes} bytes of elements goes; {@code staged} when the GPU would copy
   * them through staging slots (memory that is not pinned).
   */
  Choice choose(long bytes, boolean staged) {
    if (bytes < gpuMinCallBytes) {
      return Choice.CPU_SMALL;
    }
    if (staged && (cpuThreads >= stagedCpuThreads || bytes < gpuMinStagedCallBytes)) {
      return Choice.CPU_STAGED;
    }
    return Choice.GPU;
  }
}

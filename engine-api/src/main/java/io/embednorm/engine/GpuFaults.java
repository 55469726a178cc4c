package io.embednorm.engine;

/**
 * Faults injected into GPU engines on purpose, so that tests can drive the surfaces' fallback from
 * the GPU to the CPU through the real engine (internal switches {@code embednorm.faults.*}). A GPU
 * engine calls {@link #beforeGpuCall} where it sends work to the device: a chunk of a session, or a
 * whole batch of {@link NormalizationEngine#normalize}. Calls are counted from 1 across the process
 * since the switches last changed (unset counts as a change) or {@link #reset()}; with no switch
 * set this costs two property reads a call.
 */
public final class GpuFaults {
  private static final Object LOCK = new Object();
  private static volatile String armedFor = "";
  private static long calls;

  private GpuFaults() {}

  /**
   * Counts one GPU call and throws when the switches say this one fails.
   *
   * @param what the call, for the message, e.g. {@code chunk of 4096 rows}
   * @throws GpuFaultException when this is call {@code embednorm.faults.failGpuCall}
   * @throws GpuOutOfMemoryException when this is one of {@code embednorm.faults.outOfMemoryChunks}
   *     calls from {@code embednorm.faults.outOfMemoryAtChunk}
   */
  public static void beforeGpuCall(String what) {
    int failAt = InternalSwitches.FAULTS_FAIL_GPU_CALL.value();
    int outOfMemoryAt = InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK.value();
    if (failAt <= 0 && outOfMemoryAt <= 0) {
      if (!armedFor.isEmpty()) {
        count("");
      }
      return;
    }
    int outOfMemoryCount = InternalSwitches.FAULTS_OUT_OF_MEMORY_CHUNKS.value();
    long call = count(failAt + "/" + outOfMemoryAt + "/" + outOfMemoryCount);
    if (call == failAt) {
      throw new GpuFaultException(
          "Cannot run GPU call " + call + " (" + what + "): a fault injected by embednorm.faults");
    }
    if (outOfMemoryAt > 0 && call >= outOfMemoryAt && call < outOfMemoryAt + outOfMemoryCount) {
      throw new GpuOutOfMemoryException(
          "Cannot allocate GPU memory for call "
              + call
              + " ("
              + what
              + "): an out-of-memory injected by embednorm.faults",
          null);
    }
  }

  /** Counts calls from 1 again (tests, between cases with the same switches). */
  public static void reset() {
    synchronized (LOCK) {
      calls = 0;
    }
  }

  private static long count(String switches) {
    synchronized (LOCK) {
      if (!switches.equals(armedFor)) {
        armedFor = switches;
        calls = 0;
      }
      return ++calls;
    }
  }
}

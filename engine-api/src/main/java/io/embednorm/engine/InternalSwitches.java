package io.embednorm.engine;

import java.util.List;

/**
 * The one registry of the engines' internal switches (JVM system properties for tests and
 * benchmarks; users' settings are {@code spark.embednorm.*} and command options). A switch that is
 * not here does not exist.
 */
public final class InternalSwitches {
  /**
   * Streams a GPU session pipelines chunks through; at least 3 overlap upload, kernel, download.
   */
  public static final InternalSwitch<Integer> GPU_LANES =
      integer("embednorm.gpu.lanes", 4, "streams per GPU session (at least 3 are used)");

  /**
   * Tests: fill device outputs with NaN bytes before each kernel, so an unwritten element shows.
   */
  public static final InternalSwitch<Boolean> GPU_POISON_OUTPUTS =
      bool(
          "embednorm.gpu.poisonOutputs",
          false,
          "tests: fill device outputs with NaN bytes before each kernel (a memset a launch)");

  /** The most idle pinned bytes the pinned-memory pool keeps for reuse. */
  public static final InternalSwitch<Long> PINNED_POOL_BYTES =
      longValue(
          "embednorm.pinnedPoolBytes",
          4L << 30,
          "idle pinned host bytes kept in the pool for reuse");

  /**
   * Idle ordinary memory that CPU outputs on ordinary allocators keep for reuse: a large output
   * allocated afresh per call is fresh pages, zeroed and faulted in on one thread.
   */
  public static final InternalSwitch<Long> HOST_OUTPUT_POOL_BYTES =
      longValue(
          "embednorm.hostOutputPoolBytes",
          1L << 30,
          "idle bytes of CPU outputs (1 MiB or more) kept for reuse by later calls; 0 none");

  /**
   * Bytes of GPU outputs that may sit in pinned memory at once though their allocator is ordinary
   * (results written by the device in place); outputs beyond it come from their allocator.
   */
  public static final InternalSwitch<Long> PINNED_OUTPUT_BYTES =
      longValue(
          "embednorm.pinnedOutputBytes",
          8L << 30,
          "bytes of GPU outputs pinned at once for ordinary allocators (written in place); 0 none");

  /**
   * {@code false}: Arrow memory that is not pinned is registered with the driver per call instead
   * of going through the pinned staging slots (slower on every host measured; kept for comparison).
   */
  public static final InternalSwitch<Boolean> GPU_STAGING =
      bool(
          "embednorm.gpu.staging",
          true,
          "false: memory that is not pinned is registered with the driver per call instead of"
              + " copied through the pinned staging slots; causal_conv rows go to the engine in"
              + " place and through Java arrays");

  /**
   * Bytes of each half (input, output) of a staging slot: the largest GPU chunk of memory that is
   * not pinned; a row wider than that takes a slot of its own size for the chunk.
   */
  public static final InternalSwitch<Long> STAGING_SLOT_BYTES =
      longValue(
          "embednorm.staging.slotBytes",
          16L << 20,
          "bytes of each half (input, output) of a pinned staging slot, the largest staged chunk");

  /** Pinned bytes of staging slots each GPU of a normalizer may hold. */
  public static final InternalSwitch<Long> STAGING_POOL_BYTES =
      longValue(
          "embednorm.staging.poolBytes",
          512L << 20,
          "pinned bytes of staging slots a normalizer holds per GPU (shared by its sessions)");

  /** Threads (besides the caller) that fill and drain staging slots, shared by the process. */
  public static final InternalSwitch<Integer> STAGING_COPY_THREADS =
      integer(
          "embednorm.staging.copyThreads",
          8,
          "threads of the process that copy into and out of staging slots, the caller besides");

  /**
   * Under {@code auto} with a GPU, an Arrow call on fewer bytes of elements than this runs on the
   * CPU engine, where it finishes sooner than the GPU's fixed cost per call (docs/PERFORMANCE.md,
   * "User paths"); 0 sends every call to the GPU.
   */
  public static final InternalSwitch<Long> AUTO_GPU_MIN_CALL_BYTES =
      longValue(
          "embednorm.auto.gpuMinCallBytes",
          1L << 20,
          "under auto with a GPU, Arrow calls on fewer bytes of elements run on the CPU engine");

  /**
   * Under {@code auto} with a GPU, an Arrow call on memory the GPU must stage (not pinned) and on
   * fewer bytes of elements than this runs on the CPU engine: with its per-call cost, the staged
   * GPU passed a CPU engine of 4 and 8 threads only on larger calls (docs/PERFORMANCE.md, "Which
   * device auto takes").
   */
  public static final InternalSwitch<Long> AUTO_GPU_MIN_STAGED_CALL_BYTES =
      longValue(
          "embednorm.auto.gpuMinStagedCallBytes",
          64L << 20,
          "under auto with a GPU, Arrow calls on memory that is not pinned and on fewer bytes of"
              + " elements run on the CPU engine");

  /**
   * Under {@code auto} with a GPU, a CPU engine of at least this many threads takes every Arrow
   * call on memory the GPU must stage (not pinned): it normalizes such memory faster than staging
   * it to the GPU and back (docs/PERFORMANCE.md, "Which device auto takes").
   */
  public static final InternalSwitch<Integer> AUTO_STAGED_CPU_THREADS =
      integer(
          "embednorm.auto.stagedCpuThreads",
          16,
          "under auto with a GPU, a CPU engine of at least this many threads takes every Arrow call"
              + " on memory that is not pinned");

  /**
   * Under {@code auto}, {@code normalize} on an Arrow file smaller than this runs on the CPU engine
   * without starting or probing the GPU. The default (1 TiB) keeps every file on the CPU: its
   * mapped path measured faster than the GPU's on a 3 GB file (docs/PERFORMANCE.md, "User paths").
   */
  public static final InternalSwitch<Long> AUTO_GPU_MIN_FILE_BYTES =
      longValue(
          "embednorm.auto.gpuMinFileBytes",
          1L << 40,
          "under auto, normalize on a smaller Arrow file runs on the CPU without starting or probing the GPU");

  /** Tests and benchmarks: {@code false} runs the CPU engine's scalar loops only. */
  public static final InternalSwitch<Boolean> CPU_SIMD =
      bool("embednorm.cpu.simd", true, "false: the CPU engine runs its scalar loops only");

  /**
   * Benchmarks: {@code false} runs the CPU engine's SIMD loops from the first row, without the
   * warm-up that holds them back until they are compiled (so that a measurement does not depend on
   * when the switch comes).
   */
  public static final InternalSwitch<Boolean> CPU_WARM_UP =
      bool(
          "embednorm.cpu.warmup",
          true,
          "false: the CPU engine runs its SIMD loops from the first row, before they are compiled"
              + " (benchmarks)");

  /**
   * Tests: GPU call N (a chunk of a session, or a batch of the engine's {@code normalize}), counted
   * from 1 across the process, fails with {@link GpuFaultException}; 0 never. See {@link
   * GpuFaults}.
   */
  public static final InternalSwitch<Integer> FAULTS_FAIL_GPU_CALL =
      integer(
          "embednorm.faults.failGpuCall",
          0,
          "tests: GPU call N (a chunk, or a batch of normalize) fails with a GPU fault; 0 never");

  /**
   * Tests: GPU call k, counted as for {@link #FAULTS_FAIL_GPU_CALL}, and the calls after it up to
   * {@link #FAULTS_OUT_OF_MEMORY_CHUNKS} in all, run out of GPU memory; 0 never.
   */
  public static final InternalSwitch<Integer> FAULTS_OUT_OF_MEMORY_AT_CHUNK =
      integer(
          "embednorm.faults.outOfMemoryAtChunk",
          0,
          "tests: GPU call k and the next (outOfMemoryChunks in all) run out of GPU memory; 0 never");

  /** Tests: how many GPU calls from {@link #FAULTS_OUT_OF_MEMORY_AT_CHUNK} on run out of memory. */
  public static final InternalSwitch<Integer> FAULTS_OUT_OF_MEMORY_CHUNKS =
      integer(
          "embednorm.faults.outOfMemoryChunks",
          1,
          "tests: how many GPU calls from outOfMemoryAtChunk on run out of GPU memory");

  /**
   * Milliseconds between the progress lines that the command line's Spark commands print on stderr
   * while a stage runs (none for a command that ends sooner); 0 prints none.
   */
  public static final InternalSwitch<Integer> PROGRESS_MILLIS =
      integer(
          "embednorm.progressMillis",
          5000,
          "milliseconds between the Spark commands' progress lines on stderr; 0 none");

  private static final List<InternalSwitch<?>> ALL =
      List.of(
          GPU_LANES,
          GPU_POISON_OUTPUTS,
          PINNED_POOL_BYTES,
          PINNED_OUTPUT_BYTES,
          HOST_OUTPUT_POOL_BYTES,
          GPU_STAGING,
          STAGING_SLOT_BYTES,
          STAGING_POOL_BYTES,
          STAGING_COPY_THREADS,
          AUTO_GPU_MIN_CALL_BYTES,
          AUTO_GPU_MIN_STAGED_CALL_BYTES,
          AUTO_STAGED_CPU_THREADS,
          AUTO_GPU_MIN_FILE_BYTES,
          CPU_SIMD,
          CPU_WARM_UP,
          FAULTS_FAIL_GPU_CALL,
          FAULTS_OUT_OF_MEMORY_AT_CHUNK,
          FAULTS_OUT_OF_MEMORY_CHUNKS,
          PROGRESS_MILLIS);

  private InternalSwitches() {}

  /** Every switch, for documentation and its test. */
  public static List<InternalSwitch<?>> all() {
    return ALL;
  }

  static InternalSwitch<Integer> integer(String name, int defaultValue, String description) {
    return new InternalSwitch<>(name, defaultValue, description, Integer::valueOf);
  }

  static InternalSwitch<Long> longValue(String name, long defaultValue, String description) {
    return new InternalSwitch<>(name, defaultValue, description, Long::valueOf);
  }

  static InternalSwitch<Boolean> bool(String name, boolean defaultValue, String description) {
    return new InternalSwitch<>(
        name,
        defaultValue,
        description,
        text -> {
          if (!text.equalsIgnoreCase("true") && !text.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException("expected true or false");
          }
          return Boolean.parseBoolean(text);
        });
  }
}

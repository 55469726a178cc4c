package io.embednorm.arrow;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * What normalization calls did: rows, bytes moved to and from the GPU, how those bytes were made
 * copyable, and where the time went. Pass one to {@link ArrowNormalizer#normalize(FieldVector,
 * java.util.List, NormalizationMetrics)}; each call adds its figures. Thread-safe: several calls
 * may add to one instance at once (e.g. one per Spark task, or one per operator).
 *
 * <p>Bytes are counted once per call and direction. <b>Pinned</b> bytes went between the GPU and
 * Arrow memory directly, because the memory was pinned (embednorm's pinned allocator, or registered
 * for the call); <b>staged</b> bytes went through embednorm's pinned staging slots (ordinary Arrow
 * memory, copied by host threads while other chunks are on the GPU); <b>pageable</b> bytes the
 * driver copied from pageable memory itself (row offsets, memory it refused to register). Times are
 * summed over chunks: upload, kernel and download overlap, so their sum can exceed {@link
 * #wallNanos()}.
 *
 * <p>A call that fails on the GPU (a GPU fault, or no memory even for a chunk at the split floor)
 * runs again, whole, on the CPU engine: {@link #cpuFallbackCalls()} counts those calls and {@link
 * #cpuFallbackReason()} says why the first failed (docs/SEMANTICS.md, Devices).
 */
public final class NormalizationMetrics {
  private final LongAdder calls = new LongAdder();
  private final LongAdder rows = new LongAdder();
  private final LongAdder chunks = new LongAdder();
  private final ConcurrentMap<Integer, LongAdder> chunksPerGpu = new ConcurrentHashMap<>();
  private final LongAdder bytesUploaded = new LongAdder();
  private final LongAdder bytesDownloaded = new LongAdder();
  private final LongAdder pinnedBytes = new LongAdder();
  private final LongAdder registeredBytes = new LongAdder();
  private final LongAdder stagedBytes = new LongAdder();
  private final LongAdder pageableBytes = new LongAdder();
  private final LongAdder registrationNanos = new LongAdder();
  private final LongAdder uploadNanos = new LongAdder();
  private final LongAdder kernelNanos = new LongAdder();
  private final LongAdder downloadNanos = new LongAdder();
  private final LongAdder cpuNanos = new LongAdder();
  private final LongAdder wallNanos = new LongAdder();
  private final LongAdder cpuFallbackRows = new LongAdder();
  private final LongAdder cpuFallbackCalls = new LongAdder();
  private final LongAdder outOfMemorySplits = new LongAdder();
  private final LongAdder smallCallsOnCpu = new LongAdder();
  private final LongAdder stagedCallsOnCpu = new LongAdder();
  private final AtomicReference<String> cpuFallbackReason = new AtomicReference<>();

  /** Normalization calls (one per column and batch). */
  public long calls() {
    return calls.sum();
  }

  /** Rows normalized, null rows included. */
  public long rows() {
    return rows.sum();
  }

  /** GPU chunks: pieces of a call that went through the copy-kernel-copy pipeline. */
  public long chunks() {
    return chunks.sum();
  }

  /**
   * GPU chunks by CUDA ordinal of the GPU that ran them (a normalizer over several GPUs spreads a
   * call's chunks over them); the values add up to {@link #chunks()}. Empty when no chunk ran.
   */
  public Map<Integer, Long> chunksPerGpu() {
    Map<Integer, Long> counts = new TreeMap<>();
    chunksPerGpu.forEach((ordinal, count) -> counts.put(ordinal, count.sum()));
    return counts;
  }

  /** Bytes copied host to device (rows, offsets; not weights). */
  public long bytesUploaded() {
    return bytesUploaded.sum();
  }

  /** Bytes copied device to host. */
  public long bytesDownloaded() {
    return bytesDownloaded.sum();
  }

  /** Bytes copied at full speed between pinned (or registered) Arrow memory and the GPU. */
  public long pinnedBytes() {
    return pinnedBytes.sum();
  }

  /** Of the pinned bytes, those whose memory was registered with the driver for the call. */
  public long registeredBytes() {
    return registeredBytes.sum();
  }

  /**
   * Bytes copied through embednorm's pinned staging slots because their memory was not pinned: host
   * threads copy them between the Arrow buffers and the slots, the GPU between the slots and the
   * device.
   */
  public long stagedBytes() {
    return stagedBytes.sum();
  }

  /**
   * Bytes the driver copied from or to pageable memory itself, through its own staging: row offsets
   * of ragged columns, and memory that could be neither staged nor registered.
   */
  public long pageableBytes() {
    return pageableBytes.sum();
  }

  /** Time spent registering and unregistering host memory. */
  public long registrationNanos() {
    return registrationNanos.sum();
  }

  /** GPU time of host-to-device copies, summed over chunks. */
  public long uploadNanos() {
    return uploadNanos.sum();
  }

  /** GPU time of the kernels, summed over chunks. */
  public long kernelNanos() {
    return kernelNanos.sum();
  }

  /** GPU time of device-to-host copies, summed over chunks. */
  public long downloadNanos() {
    return downloadNanos.sum();
  }

  /** Time of normalization on the CPU engine. */
  public long cpuNanos() {
    return cpuNanos.sum();
  }

  /** Wall time of the calls, from the first byte read to the result ready. */
  public long wallNanos() {
    return wallNanos.sum();
  }

  /** Rows of the calls that ran again on the CPU engine after failing on the GPU. */
  public long cpuFallbackRows() {
    return cpuFallbackRows.sum();
  }

  /**
   * Calls (a column of one batch) that failed on the GPU and ran again, whole, on the CPU engine:
   * their results are the CPU engine's.
   */
  public long cpuFallbackCalls() {
    return cpuFallbackCalls.sum();
  }

  /**
   * Why the first call counted in {@link #cpuFallbackCalls()} left the GPU (the failure's type and
   * message), or null when none did.
   */
  public String cpuFallbackReason() {
    return cpuFallbackReason.get();
  }

  /** Chunks that ran out of GPU memory and were split in halves and retried on the GPU. */
  public long outOfMemorySplits() {
    return outOfMemorySplits.sum();
  }

  /**
   * Calls that {@code auto} ran on the CPU engine rather than the GPU because they were smaller
   * than {@code embednorm.auto.gpuMinCallBytes} (see {@link ArrowNormalizer#deviceFor}).
   */
  public long smallCallsOnCpu() {
    return smallCallsOnCpu.sum();
  }

  /**
   * Calls on memory that is not pinned that {@code auto} ran on the CPU engine rather than staging
   * them to the GPU, where the CPU engine finishes them sooner (see {@link
   * ArrowNormalizer#deviceFor}).
   */
  public long stagedCallsOnCpu() {
    return stagedCallsOnCpu.sum();
  }

  /** Adds everything {@code other} counted to this instance. */
  public void add(NormalizationMetrics other) {
    calls.add(other.calls());
    rows.add(other.rows());
    chunks.add(other.chunks());
    other
        .chunksPerGpu()
        .forEach(
            (ordinal, count) ->
                chunksPerGpu.computeIfAbsent(ordinal, key -> new LongAdder()).add(count));
    bytesUploaded.add(other.bytesUploaded());
    bytesDownloaded.add(other.bytesDownloaded());
    pinnedBytes.add(other.pinnedBytes());
    registeredBytes.add(other.registeredBytes());
    stagedBytes.add(other.stagedBytes());
    pageableBytes.add(other.pageableBytes());
    registrationNanos.add(other.registrationNanos());
    uploadNanos.add(other.uploadNanos());
    kernelNanos.add(other.kernelNanos());
    downloadNanos.add(other.downloadNanos());
    cpuNanos.add(other.cpuNanos());
    wallNanos.add(other.wallNanos());
    cpuFallbackRows.add(other.cpuFallbackRows());
    cpuFallbackCalls.add(other.cpuFallbackCalls());
    outOfMemorySplits.add(other.outOfMemorySplits());
    smallCallsOnCpu.add(other.smallCallsOnCpu());
    stagedCallsOnCpu.add(other.stagedCallsOnCpu());
    if (other.cpuFallbackReason() != null) {
      cpuFallbackReason.compareAndSet(null, other.cpuFallbackReason());
    }
  }

  void addCall(long rowCount, long wall) {
    calls.increment();
    rows.add(rowCount);
    wallNanos.add(wall);
  }

  void addChunks(int gpuOrdinal, long count) {
    chunks.add(count);
    chunksPerGpu.computeIfAbsent(gpuOrdinal, ordinal -> new LongAdder()).add(count);
  }

  void addTransfer(long up, long down) {
    bytesUploaded.add(up);
    bytesDownloaded.add(down);
  }

  void addPinned(long bytes) {
    pinnedBytes.add(bytes);
  }

  void addRegistered(long bytes, long nanos) {
    registeredBytes.add(bytes);
    registrationNanos.add(nanos);
  }

  void addStaged(long bytes) {
    stagedBytes.add(bytes);
  }

  void addPageable(long bytes) {
    pageableBytes.add(bytes);
  }

  void addGpuTimes(long upload, long kernel, long download) {
    uploadNanos.add(upload);
    kernelNanos.add(kernel);
    downloadNanos.add(download);
  }

  void addCpu(long nanos) {
    cpuNanos.add(nanos);
  }

  void addCpuFallback(long rowCount, RuntimeException failure) {
    cpuFallbackCalls.increment();
    cpuFallbackRows.add(rowCount);
    cpuFallbackReason.compareAndSet(
        null, failure.getClass().getSimpleName() + ": " + failure.getMessage());
  }

  void addAutoCallOnCpu(AutoCallRule.Choice choice) {
    (choice == AutoCallRule.Choice.CPU_SMALL ? smallCallsOnCpu : stagedCallsOnCpu).increment();
  }

  void addOutOfMemorySplit() {
    outOfMemorySplits.increment();
  }

  /** The figures on one line; chunks per GPU only when chunks went to more than one. */
  @Override
  public String toString() {
    Map<Integer, Long> perGpu = chunksPerGpu();
    return String.format(
        "calls=%d rows=%d chunks=%d up=%d down=%d pinned=%d registered=%d staged=%d pageable=%d"
            + " registration=%.3fms upload=%.3fms kernel=%.3fms download=%.3fms cpu=%.3fms"
            + " wall=%.3fms cpuFallbackCalls=%d cpuFallbackRows=%d outOfMemorySplits=%d"
            + " smallCallsOnCpu=%d stagedCallsOnCpu=%d%s",
        calls(),
        rows(),
        chunks(),
        bytesUploaded(),
        bytesDownloaded(),
        pinnedBytes(),
        registeredBytes(),
        stagedBytes(),
        pageableBytes(),
        registrationNanos() / 1e6,
        uploadNanos() / 1e6,
        kernelNanos() / 1e6,
        downloadNanos() / 1e6,
        cpuNanos() / 1e6,
        wallNanos() / 1e6,
        cpuFallbackCalls(),
        cpuFallbackRows(),
        outOfMemorySplits(),
        smallCallsOnCpu(),
        stagedCallsOnCpu(),
        perGpu.size() > 1 ? " chunksPerGpu=" + perGpu : "");
  }
}

package io.embednorm.kernels.cuda;

/**
 * GPU time of a session's chunks, summed per stage. Device events time one chunk in {@link #SAMPLE}
 * (recording them around every chunk measured 10 to 20 % of a pipeline's throughput on an H200),
 * and the sums are scaled to all chunks.
 *
 * @param chunks chunks that completed
 * @param uploadNanos host-to-device copies
 * @param kernelNanos kernels
 * @param downloadNanos device-to-host copies
 */
public record TransferTimes(long chunks, long uploadNanos, long kernelNanos, long downloadNanos) {

  /** One chunk in this many is timed. */
  public static final int SAMPLE = 8;

  /** Sums chunk times; used by one thread. */
  static final class Builder {
    private long chunks;
    private long timedChunks;
    private long upload;
    private long kernel;
    private long download;

    void addChunk() {
      chunks++;
    }

    void addTimedChunk(long uploadNanos, long kernelNanos, long downloadNanos) {
      chunks++;
      timedChunks++;
      upload += uploadNanos;
      kernel += kernelNanos;
      download += downloadNanos;
    }

    TransferTimes build() {
      double scale = timedChunks == 0 ? 0 : (double) chunks / timedChunks;
      return new TransferTimes(
          chunks, (long) (upload * scale), (long) (kernel * scale), (long) (download * scale));
    }
  }
}

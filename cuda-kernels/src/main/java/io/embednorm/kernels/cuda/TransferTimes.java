package io.embednorm.kernels.cuda;

/**
 * GPU time of a session's chunks, summed per stage, measured with device events.
 *
 * @param chunks chunks that completed
 * @param uploadNanos host-to-device copies
 * @param kernelNanos kernels
 * @param downloadNanos device-to-host copies
 */
public record TransferTimes(long chunks, long uploadNanos, long kernelNanos, long downloadNanos) {

  /** Sums chunk times; used by one thread. */
  static final class Builder {
    private long chunks;
    private long upload;
    private long kernel;
    private long download;

    void addChunk(long uploadNanos, long kernelNanos, long downloadNanos) {
      chunks++;
      upload += uploadNanos;
      kernel += kernelNanos;
      download += downloadNanos;
    }

    TransferTimes build() {
      return new TransferTimes(chunks, upload, kernel, download);
    }
  }
}

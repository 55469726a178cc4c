package io.embednorm.engine.cuda;

import io.embednorm.engine.TransferTimes;

/**
 * Sums a session's chunk times. Device events time one chunk in {@link #SAMPLE} (events around
 * every chunk cost a tenth to a fifth of a pipeline's throughput), and the sums are scaled to all
 * chunks. Used by one thread.
 */
final class TransferTimeSums {
  /** One chunk in this many is timed. */
  static final int SAMPLE = 8;

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

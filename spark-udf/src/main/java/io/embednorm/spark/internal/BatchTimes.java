package io.embednorm.spark.internal;

/**
 * Where one batch's time went in the columnar operator outside the normalization itself (which
 * {@link io.embednorm.arrow.NormalizationMetrics} times), so that SQL metrics can tell a slow copy
 * from a slow device. The parts do not overlap. Filled by the one thread that runs the batch.
 */
public final class BatchTimes {
  private long allocationNanos;
  private long copyNanos;
  private long outputNanos;

  /** Allocating the input vectors, and freeing them and the results. */
  public long allocationNanos() {
    return allocationNanos;
  }

  /** Copying Spark's column vectors into the allocated Arrow vectors (offsets, validity, rows). */
  public long copyNanos() {
    return copyNanos;
  }

  /** Copying the results out of Arrow into the task's Spark column vectors. */
  public long outputNanos() {
    return outputNanos;
  }

  void addAllocation(long nanos) {
    allocationNanos += nanos;
  }

  void addCopy(long nanos) {
    copyNanos += nanos;
  }

  void addOutput(long nanos) {
    outputNanos += nanos;
  }
}

package io.embednorm.engine;

/**
 * Device time of a pipelined session's chunks, summed per stage. Engines may time a sample of the
 * chunks and scale the sums to all of them.
 *
 * @param chunks chunks that completed
 * @param uploadNanos host-to-device copies
 * @param kernelNanos kernels
 * @param downloadNanos device-to-host copies
 */
public record TransferTimes(long chunks, long uploadNanos, long kernelNanos, long downloadNanos) {}

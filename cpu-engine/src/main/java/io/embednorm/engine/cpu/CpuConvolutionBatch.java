package io.embednorm.engine.cpu;

import io.embednorm.engine.ConvolutionKernel;

/**
 * {@code causal_conv} of a batch of equal-length sequences on the CPU engine's threads. The units
 * of work are a sequence's channel ranges (whole blocks of {@link
 * CpuCausalConvolution#CHANNEL_BLOCK} channels), which are independent, so that a batch of fewer
 * sequences than threads still uses every thread; each output is summed as {@link ConvolutionLoops}
 * sums it, whatever the split.
 */
final class CpuConvolutionBatch {
  /** Multiply-adds under which a batch stays on the calling thread. */
  private static final long MULTIPLY_ADDS_PER_THREAD = 1L << 22;

  private CpuConvolutionBatch() {}

  static void run(
      CpuEngine engine,
      ConvolutionKernel kernel,
      float eps,
      float[] sequences,
      int count,
      int steps,
      float[] output) {
    kernel.checkBatch(count, steps, sequences.length, output.length);
    if (count == 0 || steps == 0) {
      return;
    }
    int channels = kernel.channels();
    int channelBlocks = ceiling(channels, CpuCausalConvolution.CHANNEL_BLOCK);
    long multiplyAdds = (long) count * channels * steps * (steps + 1) / 2;
    int threads =
        (int) Math.min(engine.threads(), Math.max(1, multiplyAdds / MULTIPLY_ADDS_PER_THREAD));
    int ranges = Math.max(1, Math.min(channelBlocks, ceiling(threads, count)));
    int units = count * ranges;
    float[] weights = CpuCausalConvolution.lagMajor(kernel, steps);
    int floats = steps * channels;
    CpuEngine.RowRange work =
        (first, end) -> {
          for (int unit = first; unit < end; unit++) {
            int sequence = unit / ranges;
            int range = unit % ranges;
            int firstChannel = range * channelBlocks / ranges * CpuCausalConvolution.CHANNEL_BLOCK;
            int endChannel =
                Math.min(
                    channels,
                    (range + 1) * channelBlocks / ranges * CpuCausalConvolution.CHANNEL_BLOCK);
            int offset = sequence * floats;
            RowPassSelection.CONVOLUTION.convolveChannels(
                weights,
                channels,
                eps,
                sequences,
                offset,
                steps,
                output,
                offset,
                firstChannel,
                endChannel);
          }
        };
    int parts = Math.min(threads, units);
    int[] boundaries = new int[parts + 1];
    for (int part = 0; part <= parts; part++) {
      boundaries[part] = (int) ((long) units * part / parts);
    }
    engine.runParts(boundaries, work);
  }

  private static int ceiling(int value, int divisor) {
    return (value + divisor - 1) / divisor;
  }
}

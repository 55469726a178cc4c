package io.embednorm.engine.cpu;

/**
 * {@link ConvolutionLoops} in plain Java: every inner loop runs over contiguous channels of the
 * weights, the input and the output alike (the JIT vectorizes it); channels go in blocks of {@link
 * #CHANNEL_BLOCK} whose weights and inputs stay in the L2 cache while every step of the block is
 * summed.
 */
final class ScalarConvolution implements ConvolutionLoops {
  static final ScalarConvolution INSTANCE = new ScalarConvolution();

  /** Channels a block: 2 × steps × 64 floats stay cached up to steps of about 2048. */
  static final int CHANNEL_BLOCK = 64;

  private ScalarConvolution() {}

  @Override
  public void convolveChannels(
      float[] weights,
      int channels,
      float eps,
      float[] sequence,
      int offset,
      int steps,
      float[] output,
      int outputOffset,
      int firstChannel,
      int endChannel) {
    convolveSteps(
        weights,
        channels,
        eps,
        sequence,
        offset,
        output,
        outputOffset,
        0,
        steps,
        firstChannel,
        endChannel);
  }

  /** As {@link #convolveChannels}, for the output steps {@code firstStep} to {@code endStep}. */
  static void convolveSteps(
      float[] weights,
      int channels,
      float eps,
      float[] sequence,
      int offset,
      float[] output,
      int outputOffset,
      int firstStep,
      int endStep,
      int firstChannel,
      int endChannel) {
    for (int block = firstChannel; block < endChannel; block += CHANNEL_BLOCK) {
      int width = Math.min(CHANNEL_BLOCK, endChannel - block);
      for (int t = firstStep; t < endStep; t++) {
        int out = outputOffset + t * channels + block;
        java.util.Arrays.fill(output, out, out + width, 0f);
        for (int lag = 0; lag <= t; lag++) {
          int weight = lag * channels + block;
          int input = offset + (t - lag) * channels + block;
          for (int c = 0; c < width; c++) {
            output[out + c] += weights[weight + c] * sequence[input + c];
          }
        }
        for (int c = 0; c < width; c++) {
          output[out + c] += eps;
        }
      }
    }
  }
}

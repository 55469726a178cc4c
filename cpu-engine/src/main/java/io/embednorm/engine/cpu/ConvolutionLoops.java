package io.embednorm.engine.cpu;

/**
 * The loops of {@code causal_conv} on one sequence: scalar ({@link ScalarConvolution}) or Vector
 * API ({@code VectorConvolution}), which give the same bits: each output sums its lags from 0 up in
 * float32, a multiply then an add each, then adds eps.
 */
interface ConvolutionLoops {
  /**
   * Convolves channels {@code firstChannel} to {@code endChannel} of the sequence of {@code steps}
   * steps at {@code offset} of {@code sequence} into {@code output} at {@code outputOffset}, with
   * {@code weights} lag-major ({@code weights[lag * channels + c]}).
   */
  void convolveChannels(
      float[] weights,
      int channels,
      float eps,
      float[] sequence,
      int offset,
      int steps,
      float[] output,
      int outputOffset,
      int firstChannel,
      int endChannel);
}

package io.embednorm.engine.cpu;

import io.embednorm.engine.CausalConvolution;
import io.embednorm.engine.ConvolutionKernel;

/**
 * {@link CausalConvolution} on the CPU, found by ServiceLoader: the loops of {@link
 * ConvolutionLoops} over the weights read lag-major, SIMD where the JVM has the Vector API. Each
 * output sums its lags from 0 up in float32, whatever the loops or the split among threads.
 */
public final class CpuCausalConvolution implements CausalConvolution {
  /** Channels the threads of a batch split at: whole blocks of both loops. */
  static final int CHANNEL_BLOCK = ScalarConvolution.CHANNEL_BLOCK;

  @Override
  public void convolve(
      ConvolutionKernel kernel,
      float eps,
      float[] sequence,
      int offset,
      int steps,
      float[] output,
      int outputOffset) {
    kernel.checkSteps(steps);
    float[] weights = lagMajor(kernel, steps);
    RowPassSelection.CONVOLUTION.convolveChannels(
        weights,
        kernel.channels(),
        eps,
        sequence,
        offset,
        steps,
        output,
        outputOffset,
        0,
        kernel.channels());
  }

  /**
   * The weights of {@code kernel}'s last {@code steps} lags, lag-major: a copy per call, T × C
   * floats against T² × C / 2 multiply-adds.
   */
  static float[] lagMajor(ConvolutionKernel kernel, int steps) {
    float[] weights = new float[steps * kernel.channels()];
    kernel.copyLagMajor(steps, weights, 0);
    return weights;
  }
}

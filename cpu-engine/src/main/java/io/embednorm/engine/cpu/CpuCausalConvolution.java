package io.embednorm.engine.cpu;

import io.embednorm.engine.CausalConvolution;
import io.embednorm.engine.ConvolutionKernel;

/**
 * {@link CausalConvolution} in plain Java, found by ServiceLoader. The weights are read lag-major
 * so that every inner loop runs over contiguous channels of the weights, the input and the output
 * alike (the JIT vectorizes it); channels go in blocks whose weights and inputs stay in the L2
 * cache while every step of the block is summed. Each output sums its lags from 0 up in float32,
 * whatever the block.
 */
public final class CpuCausalConvolution implements CausalConvolution {
  /** Channels a block: 2 × steps × 64 floats stay cached up to steps of about 2048. */
  static final int CHANNEL_BLOCK = 64;

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
    convolveChannels(
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

  /**
   * As {@link #convolve}, for the channels from {@code firstChannel} to {@code endChannel} only,
   * with the weights from {@link #lagMajor}: channel ranges of one sequence are independent.
   */
  static void convolveChannels(
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
    for (int block = firstChannel; block < endChannel; block += CHANNEL_BLOCK) {
      int width = Math.min(CHANNEL_BLOCK, endChannel - block);
      for (int t = 0; t < steps; t++) {
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

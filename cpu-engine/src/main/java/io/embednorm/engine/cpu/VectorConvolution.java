package io.embednorm.engine.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link ConvolutionLoops} on the Vector API, with the scalar loops' bits: a block of 16 channels
 * (two 256-bit vectors) and 4 output steps keeps its 8 sums in registers over every lag, so that a
 * lag costs two weight loads and eight input loads (from the L1 cache: the steps share them) for
 * eight multiplies and eight adds, where the scalar loops load and store every sum at every lag.
 * The block's weights and inputs are first copied out of the rows into arrays of their own, 16
 * floats a lag or step: read in place, every lag would touch two new pages. Each sum adds its lags
 * from 0 up, a multiply then an add each (never fused), then eps, as the scalar loops do; the
 * channels and steps past the last whole block go to them. Loaded reflectively (see {@link
 * RowPassSelection}).
 */
final class VectorConvolution implements ConvolutionLoops {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final int LANES = 8;

  /** Channels a block: two vectors. */
  private static final int CHANNELS = 2 * LANES;

  /** Output steps a block. */
  private static final int STEPS = 4;

  private VectorConvolution() {}

  /** The loops, or null where this machine has no 256-bit vectors. Called reflectively. */
  static ConvolutionLoops createIfSupported() {
    return FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 256 ? new VectorConvolution() : null;
  }

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
    int vectorEnd = firstChannel + (endChannel - firstChannel) / CHANNELS * CHANNELS;
    int stepEnd = steps / STEPS * STEPS;
    if (stepEnd > 0 && vectorEnd > firstChannel) {
      float[] blockWeights = new float[stepEnd * CHANNELS];
      float[] blockInputs = new float[stepEnd * CHANNELS];
      for (int channel = firstChannel; channel < vectorEnd; channel += CHANNELS) {
        for (int step = 0; step < stepEnd; step++) {
          System.arraycopy(
              weights, step * channels + channel, blockWeights, step * CHANNELS, CHANNELS);
          System.arraycopy(
              sequence, offset + step * channels + channel, blockInputs, step * CHANNELS, CHANNELS);
        }
        for (int step = 0; step < stepEnd; step += STEPS) {
          block(blockWeights, eps, blockInputs, output, outputOffset + channel, channels, step);
        }
      }
    }
    ScalarConvolution.convolveSteps(
        weights,
        channels,
        eps,
        sequence,
        offset,
        output,
        outputOffset,
        stepEnd,
        steps,
        firstChannel,
        vectorEnd);
    ScalarConvolution.convolveSteps(
        weights,
        channels,
        eps,
        sequence,
        offset,
        output,
        outputOffset,
        0,
        steps,
        vectorEnd,
        endChannel);
  }

  /**
   * Output steps {@code t0} to {@code t0 + 3} of a block of channels, whose weights and inputs are
   * {@code weights} and {@code inputs} ({@link #CHANNELS} floats a lag or step), into {@code
   * output} from {@code out}, {@code stride} floats a step.
   */
  private static void block(
      float[] weights, float eps, float[] inputs, float[] output, int out, int stride, int t0) {
    FloatVector zero = FloatVector.zero(FLOATS);
    FloatVector sum0 = zero;
    FloatVector sum0High = zero;
    FloatVector sum1 = zero;
    FloatVector sum1High = zero;
    FloatVector sum2 = zero;
    FloatVector sum2High = zero;
    FloatVector sum3 = zero;
    FloatVector sum3High = zero;
    // lags 0 .. t0, which every step of the block has: step t0 + i reads input t0 + i - lag
    for (int lag = 0; lag <= t0; lag++) {
      int weight = lag * CHANNELS;
      FloatVector low = FloatVector.fromArray(FLOATS, weights, weight);
      FloatVector high = FloatVector.fromArray(FLOATS, weights, weight + LANES);
      int input = (t0 - lag) * CHANNELS;
      sum0 = sum0.add(low.mul(FloatVector.fromArray(FLOATS, inputs, input)));
      sum0High = sum0High.add(high.mul(FloatVector.fromArray(FLOATS, inputs, input + LANES)));
      input += CHANNELS;
      sum1 = sum1.add(low.mul(FloatVector.fromArray(FLOATS, inputs, input)));
      sum1High = sum1High.add(high.mul(FloatVector.fromArray(FLOATS, inputs, input + LANES)));
      input += CHANNELS;
      sum2 = sum2.add(low.mul(FloatVector.fromArray(FLOATS, inputs, input)));
      sum2High = sum2High.add(high.mul(FloatVector.fromArray(FLOATS, inputs, input + LANES)));
      input += CHANNELS;
      sum3 = sum3.add(low.mul(FloatVector.fromArray(FLOATS, inputs, input)));
      sum3High = sum3High.add(high.mul(FloatVector.fromArray(FLOATS, inputs, input + LANES)));
    }
    // lags t0 + 1 .. t0 + 3, which only the later steps have, in order: step t0 + i, lag t0 + j
    // (j <= i) reads input i - j
    for (int j = 1; j < STEPS; j++) {
      int weight = (t0 + j) * CHANNELS;
      FloatVector low = FloatVector.fromArray(FLOATS, weights, weight);
      FloatVector high = FloatVector.fromArray(FLOATS, weights, weight + LANES);
      if (j <= 1) {
        int input = (1 - j) * CHANNELS;
        sum1 = sum1.add(low.mul(FloatVector.fromArray(FLOATS, inputs, input)));
        sum1High = sum1High.add(high.mul(FloatVector.fromArray(FLOATS, inputs, input + LANES)));
      }
      if (j <= 2) {
        int input = (2 - j) * CHANNELS;
        sum2 = sum2.add(low.mul(FloatVector.fromArray(FLOATS, inputs, input)));
        sum2High = sum2High.add(high.mul(FloatVector.fromArray(FLOATS, inputs, input + LANES)));
      }
      int input = (3 - j) * CHANNELS;
      sum3 = sum3.add(low.mul(FloatVector.fromArray(FLOATS, inputs, input)));
      sum3High = sum3High.add(high.mul(FloatVector.fromArray(FLOATS, inputs, input + LANES)));
    }
    int at = out + t0 * stride;
    sum0.add(eps).intoArray(output, at);
    sum0High.add(eps).intoArray(output, at + LANES);
    at += stride;
    sum1.add(eps).intoArray(output, at);
    sum1High.add(eps).intoArray(output, at + LANES);
    at += stride;
    sum2.add(eps).intoArray(output, at);
    sum2High.add(eps).intoArray(output, at + LANES);
    at += stride;
    sum3.add(eps).intoArray(output, at);
    sum3High.add(eps).intoArray(output, at + LANES);
  }
}

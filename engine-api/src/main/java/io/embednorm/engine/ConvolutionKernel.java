package io.embednorm.engine;

import java.nio.FloatBuffer;
import java.util.Arrays;

/**
 * The per-channel weights of {@code causal_conv}: C channels of {@code steps} weights each, in the
 * RWKV article's layout {@code w[c][j]}. The weight for lag {@code L = t − u} (output step t, input
 * step u ≤ t) is {@code w[c][steps − 1 − L]}: the last column weighs the current step. A sequence
 * of n ≤ steps steps uses lags 0..n − 1, the last n columns. Immutable; thread-safe.
 */
public final class ConvolutionKernel {
  private final int channels;
  private final int steps;
  // lag-major: lagWeights[lag * channels + c] = w[c][steps - 1 - lag], what every engine reads
  private final float[] lagWeights;

  private ConvolutionKernel(int channels, int steps, float[] lagWeights) {
    this.channels = channels;
    this.steps = steps;
    this.lagWeights = lagWeights;
  }

  /** The kernel whose row c is {@code rows[c]}; every row has the same, non-zero length. */
  public static ConvolutionKernel of(float[][] rows) {
    if (rows.length == 0) {
      throw new EmbedNormException("Cannot make a convolution kernel: it has no channels");
    }
    int steps = rows[0] == null ? 0 : rows[0].length;
    float[] values = new float[rows.length * steps];
    for (int c = 0; c < rows.length; c++) {
      if (rows[c] == null || rows[c].length != steps || steps == 0) {
        throw new EmbedNormException(
            "Cannot make a convolution kernel: channel "
                + c
                + " has "
                + (rows[c] == null ? "no" : String.valueOf(rows[c].length))
                + " weights where channel 0 has "
                + steps
                + " (each channel needs the same number, at least 1)");
      }
      System.arraycopy(rows[c], 0, values, c * steps, steps);
    }
    return ofChannelMajor(rows.length, steps, values);
  }

  /** The kernel of {@code channels × steps} weights held row after row ({@code w[c][j]}). */
  public static ConvolutionKernel ofChannelMajor(int channels, int steps, float[] values) {
    if (channels < 1 || steps < 1 || (long) channels * steps != values.length) {
      throw new EmbedNormException(
          "Cannot make a convolution kernel: "
              + values.length
              + " weights for "
              + channels
              + " channels of "
              + steps
              + " steps (both at least 1)");
    }
    float[] lagWeights = new float[values.length];
    for (int c = 0; c < channels; c++) {
      for (int lag = 0; lag < steps; lag++) {
        lagWeights[lag * channels + c] = values[c * steps + steps - 1 - lag];
      }
    }
    return new ConvolutionKernel(channels, steps, lagWeights);
  }

  /** C: the width of every step of a sequence. */
  public int channels() {
    return channels;
  }

  /** The longest sequence the kernel convolves. */
  public int steps() {
    return steps;
  }

  /** {@code w[channel][steps − 1 − lag]}. */
  public float weight(int channel, int lag) {
    return lagWeights[lag * channels + channel];
  }

  /**
   * Copies the weights of lags {@code 0..lags − 1}, lag-major ({@code lag * channels + c}), to
   * {@code destination} from {@code offset}: the layout the engines read.
   */
  public void copyLagMajor(int lags, float[] destination, int offset) {
    System.arraycopy(lagWeights, 0, destination, offset, lags * channels);
  }

  /**
   * Throws unless {@code input} and {@code output} hold exactly {@code count} sequences of {@code
   * steps} steps of this kernel's channels, {@code output} is writable and the steps fit the
   * kernel.
   */
  public void checkBatch(int count, int steps, FloatBuffer input, FloatBuffer output) {
    checkBatch(count, steps, input.capacity(), output.capacity());
    if (output.isReadOnly()) {
      throw new EmbedNormException(
          "Cannot convolve " + count + " sequences: the output buffer is read-only");
    }
  }

  /**
   * Checks a batch of {@code count} sequences of {@code steps} steps held one after another in
   * arrays of {@code inputLength} and {@code outputLength} floats.
   *
   * @throws EmbedNormException when {@code steps} exceeds {@link #steps()} or an array does not
   *     hold {@code count × steps × channels()} floats
   */
  public void checkBatch(int count, int steps, int inputLength, int outputLength) {
    checkSteps(steps);
    long floats = (long) count * steps * channels;
    if (count < 0 || inputLength != floats || outputLength != floats) {
      throw new EmbedNormException(
          "Cannot convolve "
              + count
              + " sequences of "
              + steps
              + " steps of "
              + channels
              + " channels: the input holds "
              + inputLength
              + " floats and the output "
              + outputLength
              + ", not "
              + floats);
    }
  }

  /** Throws unless a sequence of {@code sequenceSteps} steps fits this kernel. */
  public void checkSteps(int sequenceSteps) {
    if (sequenceSteps > steps) {
      throw new EmbedNormException(
          "Cannot convolve a sequence of "
              + sequenceSteps
              + " steps with causal_conv: the kernel has "
              + steps
              + " steps (a sequence may be at most as long as the kernel)");
    }
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ConvolutionKernel kernel
        && kernel.channels == channels
        && Arrays.equals(kernel.lagWeights, lagWeights);
  }

  @Override
  public int hashCode() {
    return 31 * channels + Arrays.hashCode(lagWeights);
  }
}

package io.embednorm.spark.internal;

import io.embednorm.engine.ConvolutionKernel;
import java.io.Serializable;
import java.util.Arrays;

/**
 * One {@code causal_conv} output column of the columnar operator: the convolution of the {@code
 * array<array<float>>} column at {@code inputOrdinal} of the child's batches with a constant kernel
 * and eps. Planned on the driver, run on executors; the kernel travels as its weights ({@link
 * ConvolutionKernel} is not serializable) and is rebuilt once per executor copy.
 */
public final class ColumnConvolution implements Serializable {
  private static final long serialVersionUID = 1L;

  private final int inputOrdinal;
  private final String inputName;
  private final int channels;
  private final int kernelSteps;
  private final float[] weights;
  private final float eps;
  private transient ConvolutionKernel kernel;

  private ColumnConvolution(
      int inputOrdinal, String inputName, ConvolutionKernel kernel, float[] weights, float eps) {
    this.inputOrdinal = inputOrdinal;
    this.inputName = inputName;
    this.channels = kernel.channels();
    this.kernelSteps = kernel.steps();
    this.weights = weights;
    this.eps = eps;
    this.kernel = kernel;
  }

  /** The convolution of the column at {@code inputOrdinal}, named {@code inputName}. */
  public static ColumnConvolution of(
      int inputOrdinal, String inputName, ConvolutionKernel kernel, float eps) {
    int steps = kernel.steps();
    float[] weights = new float[kernel.channels() * steps];
    for (int c = 0; c < kernel.channels(); c++) {
      for (int lag = 0; lag < steps; lag++) {
        weights[c * steps + steps - 1 - lag] = kernel.weight(c, lag);
      }
    }
    return new ColumnConvolution(inputOrdinal, inputName, kernel, weights, eps);
  }

  /** The input column's position in the child's output. */
  public int inputOrdinal() {
    return inputOrdinal;
  }

  /** The input column's name, for messages and explain output. */
  public String inputName() {
    return inputName;
  }

  /** The kernel's channels: the width of every step. */
  public int channels() {
    return channels;
  }

  /** The constant added to every output. */
  public float eps() {
    return eps;
  }

  /** The kernel. */
  public synchronized ConvolutionKernel kernel() {
    if (kernel == null) {
      kernel = ConvolutionKernel.ofChannelMajor(channels, kernelSteps, weights);
    }
    return kernel;
  }

  /** What explain output says of it, e.g. {@code causal_conv over tokens}. */
  public String describe() {
    return CausalConvolutions.NAME + " over " + inputName;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ColumnConvolution that
        && that.inputOrdinal == inputOrdinal
        && that.inputName.equals(inputName)
        && that.channels == channels
        && that.kernelSteps == kernelSteps
        && Arrays.equals(that.weights, weights)
        && Float.floatToIntBits(that.eps) == Float.floatToIntBits(eps);
  }

  @Override
  public int hashCode() {
    return (31 * inputOrdinal + Arrays.hashCode(weights)) * 31 + Float.floatToIntBits(eps);
  }

  @Override
  public String toString() {
    return describe() + " (" + channels + " channels, " + kernelSteps + " steps, eps " + eps + ")";
  }
}

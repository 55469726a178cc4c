package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import io.embednorm.engine.ConvolutionKernel;
import jcuda.Pointer;
import jcuda.Sizeof;

/**
 * The device memory of {@code causal_conv} calls, kept between them by {@link CudaEngine} (one set
 * per call in flight): the sequences and results of a chunk, grown as calls need, and the weights
 * of the last kernel, every lag uploaded once (a call of fewer steps reads their first lags).
 * Allocating, freeing and uploading per call cost more than a small batch's kernel. The engine
 * closes it on {@link CudaEngine#releasePooled}.
 */
final class ConvolutionMemory implements AutoCloseable {
  private DeviceBuffer weights;
  private DeviceBuffer input;
  private DeviceBuffer result;
  private ConvolutionKernel uploaded;

  /**
   * The device weights of {@code kernel}, lag-major, every lag; uploaded unless they are already.
   */
  DeviceBuffer weights(ConvolutionKernel kernel) {
    if (uploaded != kernel) {
      float[] lagWeights = new float[kernel.steps() * kernel.channels()];
      kernel.copyLagMajor(kernel.steps(), lagWeights, 0);
      long bytes = (long) lagWeights.length * Sizeof.FLOAT;
      uploaded = null;
      weights = grown(weights, bytes, "causal_conv weights");
      cuMemcpyHtoD(weights.pointer(), Pointer.to(lagWeights), bytes);
      uploaded = kernel;
    }
    return weights;
  }

  /** Device memory for a chunk's sequences, at least {@code bytes}. */
  DeviceBuffer input(long bytes) {
    input = grown(input, bytes, "causal_conv sequences");
    return input;
  }

  /** Device memory for a chunk's results, at least {@code bytes}. */
  DeviceBuffer result(long bytes) {
    result = grown(result, bytes, "causal_conv results");
    return result;
  }

  private static DeviceBuffer grown(DeviceBuffer buffer, long bytes, String what) {
    if (buffer != null && buffer.bytes() >= bytes) {
      return buffer;
    }
    if (buffer != null) {
      buffer.close();
    }
    return new DeviceBuffer(bytes, what);
  }

  @Override
  public void close() {
    uploaded = null;
    for (DeviceBuffer buffer : new DeviceBuffer[] {weights, input, result}) {
      if (buffer != null) {
        buffer.close();
      }
    }
    weights = null;
    input = null;
    result = null;
  }
}

package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.embednorm.engine.ConvolutionKernel;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUstream;

/**
 * {@code causal_conv} of a batch of equal-length sequences held in a Java array, on the GPU: the
 * lag-major weights go to the device once, the sequences in chunks of at most {@link #CHUNK_BYTES}
 * each way, one after another through device memory this call allocates and frees.
 */
final class CudaConvolutionBatch {
  /** Bytes of sequences a chunk moves each way: few launches, little device memory. */
  static final long CHUNK_BYTES = 512L << 20;

  private CudaConvolutionBatch() {}

  static void run(
      CudaCausalConvolution convolution,
      ConvolutionKernel kernel,
      float eps,
      float[] sequences,
      int count,
      int steps,
      float[] output) {
    run(convolution, kernel, eps, sequences, count, steps, output, CHUNK_BYTES);
  }

  /** As the other, in chunks of at most {@code chunkBytes} (at least one sequence). */
  static void run(
      CudaCausalConvolution convolution,
      ConvolutionKernel kernel,
      float eps,
      float[] sequences,
      int count,
      int steps,
      float[] output,
      long chunkBytes) {
    int channels = kernel.channels();
    long sequenceBytes = (long) steps * channels * Sizeof.FLOAT;
    int perChunk = (int) Math.max(1, Math.min(count, chunkBytes / Math.max(1, sequenceBytes)));
    float[] lagWeights = new float[steps * channels];
    kernel.copyLagMajor(steps, lagWeights, 0);
    long bufferBytes = perChunk * sequenceBytes;
    CUstream stream = new CUstream();
    try (DeviceBuffer weights =
            new DeviceBuffer(lagWeights.length * (long) Sizeof.FLOAT, "causal_conv weights");
        DeviceBuffer input = new DeviceBuffer(bufferBytes, "causal_conv sequences");
        DeviceBuffer result = new DeviceBuffer(bufferBytes, "causal_conv results")) {
      cuMemcpyHtoD(
          weights.pointer(), Pointer.to(lagWeights), lagWeights.length * (long) Sizeof.FLOAT);
      // A batch of several chunks goes through one chunk-sized array, so that every copy starts
      // at a Java array's first element (no byte offset into a Java array for the driver).
      boolean whole = perChunk >= count;
      int chunkFloats = perChunk * steps * channels;
      float[] hostChunk = whole ? null : new float[chunkFloats];
      for (int first = 0; first < count; first += perChunk) {
        int chunk = Math.min(perChunk, count - first);
        int floats = chunk * steps * channels;
        int offset = first * steps * channels;
        long bytes = (long) floats * Sizeof.FLOAT;
        if (whole) {
          cuMemcpyHtoD(input.pointer(), Pointer.to(sequences), bytes);
        } else {
          System.arraycopy(sequences, offset, hostChunk, 0, floats);
          cuMemcpyHtoD(input.pointer(), Pointer.to(hostChunk), bytes);
        }
        convolution.launch(
            input.pointer(),
            result.pointer(),
            weights.pointer(),
            chunk,
            steps,
            channels,
            eps,
            stream);
        cuStreamSynchronize(stream);
        if (whole) {
          cuMemcpyDtoH(Pointer.to(output), result.pointer(), bytes);
        } else {
          cuMemcpyDtoH(Pointer.to(hostChunk), result.pointer(), bytes);
          System.arraycopy(hostChunk, 0, output, offset, floats);
        }
      }
    }
  }
}

package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.FloatArrays;
import java.nio.FloatBuffer;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * {@code causal_conv} of a batch of equal-length sequences held in host buffers, on the GPU: the
 * lag-major weights go to the device once per kernel, the sequences in chunks of at most {@link
 * #CHUNK_BYTES} each way, one after another, through the device memory of a {@link
 * ConvolutionMemory} the caller holds for the call. A direct buffer's chunk is copied from and to
 * its own memory; a heap buffer's goes through one chunk-sized array unless the chunk is the whole
 * array (the driver takes no offset into a Java array).
 */
final class CudaConvolutionBatch {
  /** Bytes of sequences a chunk moves each way: few launches, little device memory. */
  static final long CHUNK_BYTES = 512L << 20;

  private CudaConvolutionBatch() {}

  static void run(
      CudaCausalConvolution convolution,
      ConvolutionMemory memory,
      ConvolutionKernel kernel,
      float eps,
      FloatBuffer sequences,
      int count,
      int steps,
      FloatBuffer output) {
    run(convolution, memory, kernel, eps, sequences, count, steps, output, CHUNK_BYTES);
  }

  /** As the other, in chunks of at most {@code chunkBytes} (at least one sequence). */
  static void run(
      CudaCausalConvolution convolution,
      ConvolutionMemory memory,
      ConvolutionKernel kernel,
      float eps,
      FloatBuffer sequences,
      int count,
      int steps,
      FloatBuffer output,
      long chunkBytes) {
    int channels = kernel.channels();
    long sequenceBytes = (long) steps * channels * Sizeof.FLOAT;
    int perChunk = (int) Math.max(1, Math.min(count, chunkBytes / Math.max(1, sequenceBytes)));
    long bufferBytes = perChunk * sequenceBytes;
    CUstream stream = new CUstream();
    DeviceBuffer weights = memory.weights(kernel);
    DeviceBuffer input = memory.input(bufferBytes);
    DeviceBuffer result = memory.result(bufferBytes);
    HostChunk host = new HostChunk(perChunk * steps * channels);
    for (int first = 0; first < count; first += perChunk) {
      int chunk = Math.min(perChunk, count - first);
      int floats = chunk * steps * channels;
      int offset = first * steps * channels;
      host.upload(sequences.slice(offset, floats), input.pointer());
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
      host.download(result.pointer(), output.slice(offset, floats));
    }
  }

  /** Copies between host views and the device: in place where the driver can take the view. */
  private static final class HostChunk {
    private final int capacity;
    private float[] array;

    HostChunk(int capacity) {
      this.capacity = capacity;
    }

    void upload(FloatBuffer view, CUdeviceptr target) {
      long bytes = (long) view.capacity() * Sizeof.FLOAT;
      if (view.isDirect()) {
        cuMemcpyHtoD(target, Pointer.to(view), bytes);
      } else if (FloatArrays.isWholeArray(view)) {
        cuMemcpyHtoD(target, Pointer.to(view.array()), bytes);
      } else {
        view.get(0, array(), 0, view.capacity());
        cuMemcpyHtoD(target, Pointer.to(array()), bytes);
      }
    }

    void download(CUdeviceptr source, FloatBuffer view) {
      long bytes = (long) view.capacity() * Sizeof.FLOAT;
      if (view.isDirect()) {
        cuMemcpyDtoH(Pointer.to(view), source, bytes);
      } else if (FloatArrays.isWholeArray(view)) {
        cuMemcpyDtoH(Pointer.to(view.array()), source, bytes);
      } else {
        cuMemcpyDtoH(Pointer.to(array()), source, bytes);
        view.put(0, array(), 0, view.capacity());
      }
    }

    private float[] array() {
      if (array == null) {
        array = new float[capacity];
      }
      return array;
    }
  }
}

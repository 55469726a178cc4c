package io.embednorm.arrow;

import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.Device;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuFaults;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TransferTimes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.List;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * A GPU engine without a GPU, for CI: it claims the GPU and copies "to the device" through sessions
 * as the CUDA engine does, computes each chunk with the CPU engine, then flips every element's
 * lowest bit, so that its rows are told apart from the CPU engine's as a real GPU's are. Faults
 * come from the same hook as the CUDA engine's ({@link GpuFaults}, switches {@code
 * embednorm.faults.*}), so the surfaces' production fallback runs as it would on a real GPU. Shared
 * with spark-udf's tests through this module's test-jar.
 */
public final class FaultingGpuEngine implements NormalizationEngine {
  private final NormalizationEngine cpu = Engines.cpu(1);

  @Override
  public Device device() {
    return Device.GPU;
  }

  @Override
  public String description() {
    return "test GPU (the CPU engine, lowest bit flipped)";
  }

  @Override
  public int threads() {
    return 1;
  }

  @Override
  public boolean copiesToDevice() {
    return true;
  }

  @Override
  public void normalize(Normalization normalization, RowBatch batch) {
    GpuFaults.beforeGpuCall("a batch of " + batch.rows() + " rows");
    cpu.normalize(normalization, batch);
    flipLowestBits(batch.output(), batch.type(), 0, batch.output().capacity());
  }

  @Override
  public void causalConvolution(
      ConvolutionKernel kernel,
      float eps,
      FloatBuffer sequences,
      int count,
      int steps,
      FloatBuffer output) {
    GpuFaults.beforeGpuCall("causal_conv of " + count + " sequences");
    cpu.causalConvolution(kernel, eps, sequences, count, steps, output);
    for (int i = 0; i < output.capacity(); i++) {
      output.put(i, Float.intBitsToFloat(Float.floatToRawIntBits(output.get(i)) ^ 1));
    }
  }

  @Override
  public PipelineSession openSession(List<Normalization> steps, ElementType type) {
    return new Session(steps, type);
  }

  @Override
  public void close() {
    cpu.close();
  }

  private static void flipLowestBits(ByteBuffer buffer, ElementType type, int from, int to) {
    for (int index = from; index < to; index += type.byteWidth()) {
      buffer.put(index, (byte) (buffer.get(index) ^ 1));
    }
  }

  private static ByteBuffer at(long address, long bytes) {
    return MemoryUtil.directBuffer(address, Math.toIntExact(bytes)).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Runs each chunk at once on the caller's thread; nothing stays in flight. */
  private final class Session implements PipelineSession {
    private final List<Normalization> steps;
    private final ElementType type;
    private long chunks;
    private long finished;

    Session(List<Normalization> steps, ElementType type) {
      this.steps = List.copyOf(steps);
      this.type = type;
    }

    @Override
    public int lanes() {
      return 4;
    }

    @Override
    public long enqueue(
        long inputAddress, long outputAddress, int rows, int width, long firstRowIndex) {
      GpuFaults.beforeGpuCall("a chunk of " + rows + " rows");
      long bytes = (long) rows * width * type.byteWidth();
      ByteBuffer input = at(inputAddress, bytes);
      ByteBuffer output = at(outputAddress, bytes);
      for (Normalization step : steps) {
        cpu.normalize(
            step,
            RowBatch.fixedWidth(type, rows, width, input, output).withFirstRowIndex(firstRowIndex));
        input = output;
      }
      flipLowestBits(output, type, 0, output.capacity());
      return chunks++;
    }

    @Override
    public long enqueueRagged(
        long inputAddress,
        long outputAddress,
        int[] offsets,
        long firstRowIndex,
        ColumnShape shape) {
      int rows = offsets.length - 1;
      GpuFaults.beforeGpuCall("a chunk of " + rows + " rows");
      int[] relative = new int[offsets.length];
      for (int row = 0; row <= rows; row++) {
        relative[row] = offsets[row] - offsets[0];
      }
      long bytes = (long) relative[rows] * type.byteWidth();
      ByteBuffer input = at(inputAddress, bytes);
      ByteBuffer output = at(outputAddress, bytes);
      for (Normalization step : steps) {
        cpu.normalize(
            step,
            RowBatch.ragged(type, IntBuffer.wrap(relative), input, output)
                .withFirstRowIndex(firstRowIndex));
        input = output;
      }
      flipLowestBits(output, type, 0, output.capacity());
      return chunks++;
    }

    @Override
    public void awaitChunk(long ticket) {
      if (ticket < NOTHING_ENQUEUED || ticket >= chunks) {
        throw new IllegalArgumentException("Cannot wait for chunk " + ticket);
      }
    }

    @Override
    public TransferTimes finish() {
      TransferTimes times = new TransferTimes(chunks - finished, 0, 0, 0);
      finished = chunks;
      return times;
    }

    @Override
    public void close() {}
  }
}

package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;

import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.GpuFaults;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.TransferTimes;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * One user's turn on the GPU (e.g. a Spark task's batch): a few lanes, each a stream with its own
 * device buffers, through which chunks of rows go host → device → kernels → host. Chunk {@code i}
 * goes to lane {@code i mod lanes}, so the upload of one chunk, the kernels of the one before and
 * the download of the one before that run at once. Opened by {@link CudaEngine#openSession}, which
 * limits how many are open at once.
 *
 * <p>Host memory is given by address: it must stay alive, and the caller must not touch a chunk's
 * input or output, until {@link #awaitChunk} of its ticket or {@link #finish()} returns. Pinned
 * memory (see {@link PinnedHostMemory}) copies at full speed; pageable memory works, through the
 * driver's staging. Not thread-safe: one thread uses a session. {@link #close()} waits for
 * everything enqueued (so a failure never leaves a copy writing into freed memory) and returns the
 * lanes and the permit.
 */
final class GpuSession implements PipelineSession {
  private final CudaEngine engine;
  private final Lane[] lanes;
  private final ElementType type;
  private final List<Normalization> steps;
  private final List<DeviceBuffer> parameters = new ArrayList<>();
  private final Map<PlanKey, LaunchPlan> plans = new HashMap<>();
  private final CUdeviceptr[] weights;
  private final CUdeviceptr[] biases;
  private TransferTimeSums times = new TransferTimeSums();
  private long enqueued;

  /** The ticket of the chunk each lane ran last (-1: none); its event marks that chunk's end. */
  private final long[] laneChunks;

  private boolean closed;

  GpuSession(CudaEngine engine, Lane[] lanes, List<Normalization> steps, ElementType type) {
    this.engine = engine;
    this.lanes = lanes;
    this.laneChunks = new long[lanes.length];
    Arrays.fill(laneChunks, NOTHING_ENQUEUED);
    this.type = Objects.requireNonNull(type, "type");
    this.steps = List.copyOf(steps);
    if (this.steps.isEmpty()) {
      throw new EmbedNormException("Cannot open GPU session: no normalization to run");
    }
    this.weights = new CUdeviceptr[this.steps.size()];
    this.biases = new CUdeviceptr[this.steps.size()];
    try {
      for (int step = 0; step < this.steps.size(); step++) {
        weights[step] = parameter(this.steps.get(step).weight());
        biases[step] = parameter(this.steps.get(step).bias());
      }
    } catch (RuntimeException | Error failure) {
      close();
      throw failure;
    }
  }

  @Override
  public int lanes() {
    return lanes.length;
  }

  /**
   * Enqueues {@code rows} rows of {@code width} elements from {@code inputAddress}, their results
   * to go to {@code outputAddress}; waits first for the lane's previous chunk. On the device the
   * rows keep their host alignment modulo 16, so a row's bits do not depend on where a chunk
   * starts.
   *
   * @param firstRowIndex the index of the chunk's first row, for error messages
   * @throws EmbedNormException when a weight or bias does not fit the width
   * @throws io.embednorm.engine.GpuOutOfMemoryException when the chunk does not fit the device
   */
  @Override
  public long enqueue(
      long inputAddress, long outputAddress, int rows, int width, long firstRowIndex) {
    for (Normalization step : steps) {
      step.checkWidth(firstRowIndex, width);
    }
    boolean vectorizable = ColumnShape.fitsVectors(type, inputAddress, width);
    return submit(
        inputAddress, outputAddress, rows, width, null, (long) rows * width, vectorizable);
  }

  /**
   * Enqueues ragged rows: row {@code r} holds elements {@code [offsets[r], offsets[r + 1])} counted
   * from {@code inputAddress} and {@code outputAddress}; {@code offsets[0]} is 0. Every chunk of a
   * column gives the same {@code shape}, which picks the kernels.
   *
   * @return the chunk's ticket
   */
  @Override
  public long enqueueRagged(
      long inputAddress, long outputAddress, int[] offsets, long firstRowIndex, ColumnShape shape) {
    int rows = offsets.length - 1;
    for (int row = 0; row < rows; row++) {
      int width = offsets[row + 1] - offsets[row];
      for (Normalization step : steps) {
        step.checkWidth(firstRowIndex + row, width);
      }
    }
    return submit(
        inputAddress,
        outputAddress,
        rows,
        shape.widestRow(),
        offsets,
        offsets[rows] - (long) offsets[0],
        shape.vectorAligned());
  }

  /** Enqueues a chunk and returns its ticket. */
  private long submit(
      long inputAddress,
      long outputAddress,
      int rows,
      int width,
      int[] offsets,
      long elements,
      boolean vectorizable) {
    checkOpen();
    if (rows == 0 || elements == 0) {
      return NOTHING_ENQUEUED;
    }
    GpuFaults.beforeGpuCall("a chunk of " + rows + " rows");
    try {
      return enqueueChunk(
          inputAddress, outputAddress, rows, width, offsets, elements, vectorizable);
    } catch (CudaException failure) {
      throw fault("enqueue a chunk of " + rows + " rows", failure);
    }
  }

  private long enqueueChunk(
      long inputAddress,
      long outputAddress,
      int rows,
      int width,
      int[] offsets,
      long elements,
      boolean vectorizable) {
    int laneIndex = (int) (enqueued % lanes.length);
    Lane lane = lanes[laneIndex];
    lane.await(times);
    long bytes = elements * type.byteWidth();
    // The rows sit at their host address's offset modulo 16 (device buffers start 256-aligned).
    long alignment = inputAddress & 15;
    engine.context().makeCurrent();
    CUdeviceptr source = lane.first(bytes + alignment).pointer().withByteOffset(alignment);
    CUdeviceptr target = lane.second(bytes + alignment).pointer().withByteOffset(alignment);
    CUdeviceptr deviceOffsets = new CUdeviceptr();
    if (offsets != null) {
      long offsetBytes = (long) offsets.length * Long.BYTES;
      LongBuffer staged = lane.offsetStaging(offsets.length);
      for (int offset : offsets) {
        staged.put(offset - offsets[0]);
      }
      deviceOffsets = lane.offsets(offsetBytes).pointer();
      // From pageable memory the driver stages the bytes before returning: the buffer is free
      // for the next chunk at once.
      cuMemcpyHtoDAsync(deviceOffsets, Pointer.to(staged.rewind()), offsetBytes, lane.stream);
    }
    boolean timing = enqueued % TransferTimeSums.SAMPLE == 0;
    lane.mark(0, timing);
    copyToDevice(source, inputAddress, bytes, lane.stream);
    lane.mark(1, timing);
    for (int step = 0; step < steps.size(); step++) {
      if (engine.poisonsOutputs()) {
        cuMemsetD8Async(target, (byte) 0xff, bytes, lane.stream);
      }
      Normalization normalization = steps.get(step);
      LaunchPlan plan = plan(normalization, width, rows, vectorizable, offsets != null);
      CudaLauncher.launch(
          plan,
          engine.module(),
          lane.stream,
          normalization,
          source,
          target,
          deviceOffsets,
          rows,
          width,
          weights[step],
          biases[step]);
      CUdeviceptr swap = source;
      source = target;
      target = swap;
    }
    lane.mark(2, timing);
    copyToHost(outputAddress, source, bytes, lane.stream);
    lane.mark(3, timing);
    laneChunks[laneIndex] = enqueued;
    return enqueued++;
  }

  /**
   * Waits for the chunk of {@code ticket}: its lane's completion event, unless a later chunk has
   * taken the lane (which first waited for this one).
   */
  @Override
  public void awaitChunk(long ticket) {
    if (ticket == NOTHING_ENQUEUED) {
      return;
    }
    if (ticket < 0 || ticket >= enqueued) {
      throw new IllegalArgumentException(
          "Cannot wait for chunk " + ticket + ": the session enqueued " + enqueued);
    }
    checkOpen();
    int laneIndex = (int) (ticket % lanes.length);
    if (laneChunks[laneIndex] != ticket) {
      return;
    }
    try {
      lanes[laneIndex].await(times);
    } catch (CudaException failure) {
      throw fault("wait for a chunk", failure);
    }
  }

  /**
   * Waits until every enqueued chunk is in host memory and returns their times since the last
   * finish. The session stays open for more chunks.
   */
  @Override
  public TransferTimes finish() {
    checkOpen();
    try {
      for (Lane lane : lanes) {
        lane.await(times);
      }
    } catch (CudaException failure) {
      throw fault("finish the chunks in flight", failure);
    }
    TransferTimes result = times.build();
    times = new TransferTimeSums();
    return result;
  }

  /** Waits for everything enqueued, then gives the lanes and the permit back. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      engine.context().makeCurrent();
      for (Lane lane : lanes) {
        lane.drain();
      }
      for (DeviceBuffer parameter : parameters) {
        parameter.close();
      }
    } catch (CudaException failure) {
      throw fault("close the session", failure);
    } finally {
      engine.release(lanes);
    }
  }

  /** A driver error (a failed copy or kernel, a lost device): not retryable on the GPU. */
  static GpuFaultException fault(String what, CudaException failure) {
    return new GpuFaultException(
        "Cannot " + what + " on the GPU: " + failure.getMessage(), failure);
  }

  /** Copies host bytes to the device piece by piece (see {@link PinnedHostMemory#pieces}). */
  private static void copyToDevice(CUdeviceptr target, long address, long bytes, CUstream stream) {
    long done = 0;
    for (long piece : PinnedHostMemory.pieces(address, bytes)) {
      cuMemcpyHtoDAsync(
          target.withByteOffset(done), new HostPointer(address + done), piece, stream);
      done += piece;
    }
  }

  /** Copies device bytes to the host piece by piece (see {@link PinnedHostMemory#pieces}). */
  private static void copyToHost(long address, CUdeviceptr source, long bytes, CUstream stream) {
    long done = 0;
    for (long piece : PinnedHostMemory.pieces(address, bytes)) {
      cuMemcpyDtoHAsync(
          new HostPointer(address + done), source.withByteOffset(done), piece, stream);
      done += piece;
    }
  }

  /** Plans are cached: every full chunk of a column asks for the same one. */
  private LaunchPlan plan(
      Normalization normalization, int width, int rows, boolean vectorizable, boolean ragged) {
    return plans.computeIfAbsent(
        new PlanKey(normalization.op(), width, rows, vectorizable, ragged),
        key ->
            LaunchPlan.planBatch(
                key.op(), type, width, rows, vectorizable, ragged, engine.module()));
  }

  private record PlanKey(Op op, int width, int rows, boolean vectorizable, boolean ragged) {}

  private CUdeviceptr parameter(double[] values) {
    DeviceBuffer buffer = DeviceBuffer.parameter(values, type);
    if (buffer == null) {
      return new CUdeviceptr();
    }
    parameters.add(buffer);
    return buffer.pointer();
  }

  private void checkOpen() {
    if (closed) {
      throw new EmbedNormException("Cannot use GPU session: it is closed");
    }
  }
}

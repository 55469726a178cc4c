package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.Device;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.GpuFaults;
import io.embednorm.engine.GpuSettings;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * The CUDA engine, two ways in. {@link #normalize} copies a batch of any host buffers to the
 * device, runs the kernel its widths call for, and copies the result back, synchronously, on
 * buffers it frees before returning. {@link #openSession} is the pipelined path over host memory by
 * address (Arrow buffers): chunks overlap on several streams, and the device buffers of those
 * streams are pooled by the engine across sessions.
 *
 * <p>Thread-safe: each call makes the shared primary context current. At most {@link
 * #concurrentUsers()} sessions are open at once; more wait. {@link #close()} frees the pooled
 * streams and device memory; close it after the last session.
 */
public final class CudaEngine implements NormalizationEngine {
  /**
   * Streams per session: at least three, so that the upload, kernels and download of three chunks
   * overlap; more hide the host's waits (system property {@code embednorm.gpu.lanes}).
   */
  static final int LANES = Math.max(3, InternalSwitches.GPU_LANES.value());

  /** Tests fill device outputs with NaN bytes first, so that an unwritten element shows. */
  private final boolean poisonOutputs = InternalSwitches.GPU_POISON_OUTPUTS.value();

  private final CudaContext context;
  private CudaCausalConvolution convolution;

  /** Device memory of finished causal_conv calls, for the next ones: one set per call in flight. */
  private final ConcurrentLinkedDeque<ConvolutionMemory> idleConvolutionMemory =
      new ConcurrentLinkedDeque<>();

  private final KernelModule module;
  private final String deviceName;
  private final int concurrentUsers;
  private final Semaphore permits;
  private final ConcurrentLinkedDeque<Lane[]> idleLanes = new ConcurrentLinkedDeque<>();
  private volatile boolean closed;

  /** An engine on device {@code ordinal}; throws, saying why, when CUDA cannot be used. */
  public CudaEngine(int ordinal) {
    this(GpuSettings.DEFAULT.withOrdinal(ordinal));
  }

  /**
   * An engine on the settings' device that lets their number of sessions run at once; throws,
   * saying why, when CUDA cannot be used.
   */
  public CudaEngine(GpuSettings settings) {
    int ordinal = settings.ordinal();
    int concurrentUsers = settings.concurrentUsers();
    this.context = CudaContext.of(ordinal);
    this.module = KernelModule.of(context);
    this.deviceName = CudaAvailability.get().deviceName();
    this.concurrentUsers = concurrentUsers;
    this.permits = new Semaphore(concurrentUsers, true);
  }

  /** How many sessions may be open at once. */
  public int concurrentUsers() {
    return concurrentUsers;
  }

  @Override
  public boolean copiesToDevice() {
    return true;
  }

  @Override
  public int threads() {
    return 1;
  }

  /**
   * Opens a session that runs {@code steps} in order on rows of {@code type}, waiting while {@link
   * #concurrentUsers()} others are open. The caller closes it.
   */
  @Override
  public PipelineSession openSession(List<Normalization> steps, ElementType type) {
    if (closed) {
      throw new EmbedNormException("Cannot open GPU session: the engine is closed");
    }
    try {
      permits.acquire();
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new EmbedNormException(
          "Cannot open GPU session: interrupted while waiting for one of "
              + concurrentUsers
              + " GPU slots",
          interrupted);
    }
    Lane[] lanes = null;
    try {
      context.makeCurrent();
      lanes = idleLanes.pollFirst();
      if (lanes == null) {
        lanes = newLanes();
      }
      return new GpuSession(this, lanes, steps, type);
    } catch (RuntimeException | Error failure) {
      if (lanes == null) {
        permits.release();
      }
      throw failure;
    }
  }

  /** Device bytes held by idle sessions' lanes (pooled for reuse). */
  public long pooledDeviceBytes() {
    long bytes = 0;
    for (Lane[] lanes : idleLanes) {
      for (Lane lane : lanes) {
        bytes += lane.deviceBytes();
      }
    }
    return bytes;
  }

  /**
   * Frees the pooled lanes of idle sessions (their streams and device memory) and the device memory
   * idle {@code causal_conv} calls keep.
   */
  public void releasePooled() {
    context.makeCurrent();
    Lane[] lanes;
    while ((lanes = idleLanes.pollFirst()) != null) {
      closeAll(lanes);
    }
    ConvolutionMemory memory;
    while ((memory = idleConvolutionMemory.pollFirst()) != null) {
      memory.close();
    }
  }

  CudaContext context() {
    return context;
  }

  KernelModule module() {
    return module;
  }

  boolean poisonsOutputs() {
    return poisonOutputs;
  }

  /** Takes back a closed session's lanes and permit. */
  void release(Lane[] lanes) {
    if (closed) {
      context.makeCurrent();
      closeAll(lanes);
    } else {
      idleLanes.addFirst(lanes);
    }
    permits.release();
  }

  private static Lane[] newLanes() {
    Lane[] lanes = new Lane[LANES];
    try {
      for (int index = 0; index < LANES; index++) {
        lanes[index] = new Lane();
      }
      return lanes;
    } catch (RuntimeException | Error failure) {
      closeAll(lanes);
      throw failure;
    }
  }

  private static void closeAll(Lane[] lanes) {
    for (Lane lane : lanes) {
      if (lane != null) {
        lane.close();
      }
    }
  }

  /**
   * Why no CUDA engine can start in this process, or null when one can: the jar holds no kernels (a
   * CPU-only build), the driver library does not load, or the driver sees no device.
   */
  public static String unavailableReason() {
    if (!KernelModule.isBundled()) {
      return "this jar was built without CUDA kernels (-Dembednorm.cpuOnly)";
    }
    CudaAvailability availability = CudaAvailability.get();
    return availability.usable() ? null : availability.reason();
  }

  @Override
  public Device device() {
    return Device.GPU;
  }

  @Override
  public String description() {
    return "gpu "
        + context.ordinal()
        + " ("
        + deviceName
        + ", sm_"
        + context.computeCapability()
        + ")";
  }

  @Override
  public void normalize(Normalization normalization, RowBatch batch) {
    int rows = batch.rows();
    if (rows == 0 || batch.elementCount() == 0) {
      return;
    }
    GpuFaults.beforeGpuCall("a batch of " + rows + " rows");
    try {
      normalizeBatch(normalization, batch);
    } catch (CudaException failure) {
      throw GpuSession.fault("normalize a batch of " + rows + " rows", failure);
    }
  }

  private void normalizeBatch(Normalization normalization, RowBatch batch) {
    int rows = batch.rows();
    ElementType type = batch.type();
    long first = batch.rowStart(0);
    int maxWidth = 0;
    boolean vectorizable = true;
    int vector = LaunchPlan.vectorWidth(type);
    for (int row = 0; row < rows; row++) {
      int width = batch.rowWidth(row);
      normalization.checkWidth(batch.firstRowIndex() + row, width);
      maxWidth = Math.max(maxWidth, width);
      vectorizable &= width % vector == 0 && (batch.rowStart(row) - first) % vector == 0;
      if (!batch.isRagged()) {
        break;
      }
    }
    long bytes = batch.elementCount() * type.byteWidth();
    context.makeCurrent();
    CUstream stream = new CUstream();
    cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    try (DeviceBuffer input = new DeviceBuffer(bytes, "the input rows");
        DeviceBuffer output = new DeviceBuffer(bytes, "the output rows");
        DeviceBuffer offsets = deviceOffsets(batch, first);
        DeviceBuffer weight = DeviceBuffer.parameter(normalization.weight(), type);
        DeviceBuffer bias = DeviceBuffer.parameter(normalization.bias(), type)) {
      // Synchronous copies: heap buffers may move once a call returns. Host memory that stays
      // put (Arrow buffers) goes through the pinned, overlapped GpuSession instead.
      ByteBuffer source = slice(batch.input(), first, bytes, type);
      cuMemcpyHtoD(input.pointer(), Pointer.to(source), bytes);
      if (poisonOutputs) {
        cuMemsetD8(output.pointer(), (byte) 0xff, bytes);
      }
      LaunchPlan plan =
          LaunchPlan.planBatch(
              normalization.op(), type, maxWidth, rows, vectorizable, batch.isRagged(), module);
      CudaLauncher.launch(
          plan,
          module,
          stream,
          normalization,
          input.pointer(),
          output.pointer(),
          pointerOrNull(offsets),
          rows,
          maxWidth,
          pointerOrNull(weight),
          pointerOrNull(bias));
      cuStreamSynchronize(stream);
      ByteBuffer target = slice(batch.output(), first, bytes, type);
      cuMemcpyDtoH(Pointer.to(target), output.pointer(), bytes);
    } finally {
      cuStreamDestroy(stream);
    }
  }

  /**
   * Runs the fused kernels (encode_kernels.cu): the batch goes to the device, and only its encoded
   * bytes (and int8 scales) come back, synchronously, through buffers freed before returning.
   */
  @Override
  public void normalizeEncoded(Normalization normalization, RowBatch batch, EncodedRows target) {
    if (batch.type() != ElementType.FLOAT32) {
      throw new EmbedNormException(
          "Cannot encode "
              + batch.type().name().toLowerCase(java.util.Locale.ROOT)
              + " rows: encodings take float32 rows");
    }
    target.checkFits(batch);
    int rows = batch.rows();
    if (rows == 0) {
      return;
    }
    GpuFaults.beforeGpuCall("a batch of " + rows + " rows");
    try {
      EncodedBatch.run(this, normalization, batch, target);
    } catch (CudaException failure) {
      throw GpuSession.fault("encode a batch of " + rows + " rows", failure);
    }
  }

  static DeviceBuffer deviceOffsets(RowBatch batch, long first) {
    if (!batch.isRagged()) {
      return null;
    }
    long[] offsets = new long[batch.rows() + 1];
    for (int row = 0; row < batch.rows(); row++) {
      offsets[row] = batch.rowStart(row) - first;
    }
    offsets[batch.rows()] =
        batch.rowStart(batch.rows() - 1) + batch.rowWidth(batch.rows() - 1) - first;
    DeviceBuffer buffer = new DeviceBuffer((long) offsets.length * Long.BYTES, "row offsets");
    cuMemcpyHtoD(buffer.pointer(), Pointer.to(offsets), (long) offsets.length * Long.BYTES);
    return buffer;
  }

  static CUdeviceptr pointerOrNull(DeviceBuffer buffer) {
    return buffer == null ? new CUdeviceptr() : buffer.pointer();
  }

  static ByteBuffer slice(ByteBuffer buffer, long firstElement, long bytes, ElementType type) {
    int start = Math.toIntExact(firstElement * type.byteWidth());
    ByteBuffer view = buffer.duplicate();
    view.clear();
    view.position(start);
    view.limit(Math.toIntExact(start + bytes));
    return view.slice();
  }

  /**
   * On the tensor cores ({@link CudaCausalConvolution}, loaded on first use), through device memory
   * the call allocates and frees; direct buffers are copied to and from the device in place.
   *
   * @throws io.embednorm.engine.GpuOutOfMemoryException when the device has no room for a chunk
   * @throws io.embednorm.engine.GpuFaultException when the driver or the kernel fails
   */
  @Override
  public void causalConvolution(
      ConvolutionKernel kernel,
      float eps,
      FloatBuffer sequences,
      int count,
      int steps,
      FloatBuffer output) {
    kernel.checkBatch(count, steps, sequences, output);
    if (count == 0 || steps == 0) {
      return;
    }
    GpuFaults.beforeGpuCall("causal_conv of " + count + " sequences");
    ConvolutionMemory idle = idleConvolutionMemory.pollFirst();
    ConvolutionMemory memory = idle == null ? new ConvolutionMemory() : idle;
    try {
      context.makeCurrent();
      CudaConvolutionBatch.run(convolution(), memory, kernel, eps, sequences, count, steps, output);
    } catch (CudaException failure) {
      GpuFaultException fault =
          GpuSession.fault("convolve " + count + " sequences with causal_conv", failure);
      closeAfter(memory, fault);
      throw fault;
    } catch (RuntimeException | Error failure) {
      closeAfter(memory, failure);
      throw failure;
    }
    if (closed) {
      memory.close();
    } else {
      idleConvolutionMemory.addFirst(memory);
    }
  }

  /**
   * Frees {@code memory} after {@code failure}, whose type decides what the caller does (a GPU
   * fault reruns the call on the CPU): after a fault the driver may refuse the frees too, so their
   * failures join it as suppressed.
   */
  private static void closeAfter(ConvolutionMemory memory, Throwable failure) {
    try {
      memory.close();
    } catch (RuntimeException | Error closing) {
      failure.addSuppressed(closing);
    }
  }

  /** The convolution kernel in this engine's context, loaded on first use. */
  synchronized CudaCausalConvolution convolution() {
    if (convolution == null) {
      convolution = new CudaCausalConvolution(context);
    }
    return convolution;
  }

  /**
   * Frees the pooled lanes; lanes of sessions still open are freed when those close. Contexts and
   * modules live as long as the process. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    releasePooled();
  }
}

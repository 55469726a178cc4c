package io.embednorm.arrow;

import io.embednorm.arrow.internal.HostOutputs;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.GpuSettings;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Normalizes embedding columns of Arrow data: the public Arrow entry point of embednorm.
 *
 * <p>A column is a {@code FixedSizeList} or {@code List} of float32, float64 or float16 ({@code
 * Float4Vector}, {@code Float8Vector}, {@code Float2Vector}). The result is a new vector with the
 * input's field (name, type, nullability), allocated from the allocator given to {@link #create}:
 * <b>the caller closes the result</b>; the input stays the caller's and is not modified;
 * intermediates are freed before a method returns or throws. Null rows stay null, a row with a null
 * element becomes null, empty rows stay empty. The engine reads the input's element buffer in place
 * and writes straight into the result's.
 *
 * <p>On a GPU, rows go to the device in chunks ({@link Builder#gpuChunkBytes}) through a pipeline
 * whose copies and kernels overlap; Arrow memory that is pinned ({@link PinnedAllocators}) is
 * copied by the device in place, other memory (a plain {@code RootAllocator}'s) through a pool of
 * pinned staging slots per GPU, which host threads fill and drain while other chunks are on the
 * device; the normalizer holds the slots until it is closed. Chains of normalizations ({@code
 * l2_normalize(rms_norm(x))}) run on the device without a round trip to the host between steps.
 * Over several GPUs ({@link Builder#gpuOrdinals}, {@link Builder#allGpus}) the chunks of each call
 * are shared out among them, each GPU with its own pipeline and host thread, and the result is bit
 * for bit one GPU's; a call of one chunk uses one GPU, the GPUs taking such calls in turn.
 *
 * <p>A call that fails on the GPU runs again, whole, on the CPU engine: a chunk that runs out of
 * device memory is first split in halves and retried on the GPU, down to a floor; a GPU fault
 * ({@link io.embednorm.engine.GpuFaultException}), or no memory at the floor, on any of its GPUs,
 * sends the call to the CPU. Its result is then the CPU engine's, bit for bit, within
 * docs/SEMANTICS.md's accuracy like any other; {@link NormalizationMetrics#cpuFallbackCalls()}
 * counts such calls and says why.
 *
 * <p>Thread-safe: several threads may normalize at once (on a GPU, up to {@link
 * Builder#gpuConcurrency} at a time on each GPU; the others wait). {@link #close()} frees the
 * engines (device resources) and the staging slots, never the allocator or any vector.
 */
public final class ArrowNormalizer implements AutoCloseable {
  /**
   * Rows are handed to the CPU engine in runs of at most this many bytes (buffer views end at 2
   * GiB).
   */
  static final long DEFAULT_CHUNK_BYTES = 1L << 30;

  /** Bytes per GPU chunk unless the builder says otherwise (see docs/PERFORMANCE.md). */
  public static final long DEFAULT_GPU_CHUNK_BYTES = 16L << 20;

  private final BufferAllocator allocator;
  private final DeviceEngines engines;
  private final DeviceSpread gpus;
  private final long chunkByteLimit;
  private final long gpuChunkBytes;

  /** Which calls of a GPU normalizer run on the CPU engine under auto. */
  private final AutoCallRule autoRule;

  private NormalizationEngine cpuFallback;
  private volatile boolean closed;

  ArrowNormalizer(BufferAllocator allocator, EngineSelection selection, long chunkByteLimit) {
    this(allocator, selection, chunkByteLimit, DEFAULT_GPU_CHUNK_BYTES);
  }

  ArrowNormalizer(
      BufferAllocator allocator,
      EngineSelection selection,
      long chunkByteLimit,
      long gpuChunkBytes) {
    this(
        allocator,
        DeviceEngines.of(Objects.requireNonNull(selection, "selection"), 0),
        chunkByteLimit,
        gpuChunkBytes);
  }

  /** A normalizer over {@code engines}, which it owns from here on. */
  ArrowNormalizer(
      BufferAllocator allocator, DeviceEngines engines, long chunkByteLimit, long gpuChunkBytes) {
    this(allocator, engines, chunkByteLimit, gpuChunkBytes, AutoCallRule.NONE);
  }

  /**
   * As {@link #ArrowNormalizer(BufferAllocator, DeviceEngines, long, long)}, the calls that {@code
   * autoRule} chooses running on the CPU engine when the engines are GPUs.
   */
  ArrowNormalizer(
      BufferAllocator allocator,
      DeviceEngines engines,
      long chunkByteLimit,
      long gpuChunkBytes,
      AutoCallRule autoRule) {
    this.autoRule = engines.device() == Device.GPU ? autoRule : AutoCallRule.NONE;
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.engines = Objects.requireNonNull(engines, "engines");
    if (chunkByteLimit < 1 || chunkByteLimit > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("chunkByteLimit out of range: " + chunkByteLimit);
    }
    this.chunkByteLimit = chunkByteLimit;
    this.gpuChunkBytes = gpuChunkBytes;
    this.gpus = new DeviceSpread(engines.gpus());
    HostOutputs.normalizerOpened();
  }

  /**
   * A normalizer on the device that {@code device} resolves to (see {@link Engines#select}), with
   * default settings; its results are allocated from {@code allocator}, which stays the caller's
   * and must outlive them.
   *
   * @throws EmbedNormException when {@code gpu} is asked for and no GPU is usable
   */
  public static ArrowNormalizer create(BufferAllocator allocator, DeviceChoice device) {
    return builder(allocator).device(device).build();
  }

  /** Starts a normalizer whose results come from {@code allocator} (the caller's). */
  public static Builder builder(BufferAllocator allocator) {
    return new Builder(allocator);
  }

  /** Where the normalization runs. */
  public Device device() {
    return engines.device();
  }

  /**
   * Why this device was chosen, e.g. {@code auto chose cpu: ...}; over several GPUs it names each,
   * e.g. {@code gpu was requested: gpu 0 (...), gpu 1 (...)}.
   */
  public String deviceReason() {
    return engines.reason();
  }

  /**
   * The device a call on {@code input} runs on: the normalizer's, except that under {@code auto} a
   * GPU normalizer runs on the CPU engine the calls it would finish later: those on fewer than
   * {@code embednorm.auto.gpuMinCallBytes} bytes of elements (1 MiB by default), and those on
   * memory that is not pinned (which the GPU copies through staging slots) where the CPU engine has
   * {@code embednorm.auto.stagedCpuThreads} threads (16) or the call is under {@code
   * embednorm.auto.gpuMinStagedCallBytes} (64 MiB). A call the GPU fails still runs again on the
   * CPU engine.
   */
  public Device deviceFor(FieldVector input) {
    ListColumn column = ListColumn.of(Objects.requireNonNull(input, "input"));
    return autoChoice(column) == AutoCallRule.Choice.GPU ? device() : Device.CPU;
  }

  /**
   * {@code causal_conv} of every row of {@code sequences} ({@link ArrowConvolution}: a column of
   * sequences of float32 steps) with {@code kernel}, adding {@code eps}, on this normalizer's
   * device, into a new vector from its allocator; the caller closes it. Under {@code auto} a call
   * on fewer than {@code embednorm.auto.gpuMinCallBytes} bytes of elements runs on the CPU engine.
   * A call the GPU fails runs again, whole, on the CPU engine.
   *
   * @throws EmbedNormException when the column is not a column of sequences of {@code
   *     kernel.channels()} channels, or a sequence is longer than the kernel
   */
  public FieldVector causalConv(FieldVector sequences, ConvolutionKernel kernel, float eps) {
    return causalConv(sequences, kernel, eps, new NormalizationMetrics());
  }

  /**
   * As {@link #causalConv(FieldVector, ConvolutionKernel, float)}, adding to {@code metrics} the
   * call, its rows and wall time, a small call auto kept on the CPU, and a GPU failure that reran
   * the call on the CPU engine.
   */
  public FieldVector causalConv(
      FieldVector sequences, ConvolutionKernel kernel, float eps, NormalizationMetrics metrics) {
    Objects.requireNonNull(sequences, "sequences");
    Objects.requireNonNull(kernel, "kernel");
    Objects.requireNonNull(metrics, "metrics");
    if (closed) {
      throw new EmbedNormException(
          "Cannot convolve column '" + sequences.getName() + "': the normalizer is closed");
    }
    long started = System.nanoTime();
    NormalizationEngine engine = engines.first();
    long bytes = (long) ArrowConvolution.elementCount(sequences) * Float.BYTES;
    // Not weighed as staged memory even though it goes through the slots: that rule weighs a
    // normalization's copies against the CPU engine's passes, and a convolution's arithmetic is
    // larger than its copies by far (docs/PERFORMANCE.md, causal_conv on one GPU).
    AutoCallRule.Choice choice = autoRule.choose(bytes, false);
    if (choice != AutoCallRule.Choice.GPU) {
      metrics.addAutoCallOnCpu(choice);
      engine = cpuFallback();
    }
    StagingPool staging =
        engine.device() == Device.GPU && InternalSwitches.GPU_STAGING.value()
            ? gpus.staging()
            : null;
    FieldVector result;
    try {
      result = ArrowConvolution.causalConv(sequences, kernel, eps, allocator, engine, staging);
    } catch (GpuFaultException | GpuOutOfMemoryException failure) {
      if (engine.device() != Device.GPU) {
        throw failure;
      }
      try {
        result =
            ArrowConvolution.causalConv(sequences, kernel, eps, allocator, cpuFallback(), null);
      } catch (RuntimeException | Error onCpu) {
        onCpu.addSuppressed(failure);
        throw onCpu;
      }
      metrics.addCpuFallback(sequences.getValueCount(), failure);
    }
    metrics.addCall(sequences.getValueCount(), System.nanoTime() - started);
    return result;
  }

  /** What runs, for logs, e.g. {@code cpu (java scalar)}; every GPU, one after another. */
  public String engineDescription() {
    return engines.description();
  }

  /**
   * Normalizes the column {@code column} of {@code root} into a new vector; the root and its other
   * columns are left alone. The caller closes the result.
   *
   * @throws EmbedNormException when there is no such column, its type is not supported, or the
   *     weight or bias does not fit a row
   */
  public FieldVector normalize(VectorSchemaRoot root, String column, Normalization normalization) {
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(column, "column");
    int index = EmbeddingColumn.require(root.getSchema().getFields(), column, "the batch");
    return normalize(root.getVector(index), normalization);
  }

  /**
   * Normalizes every row of {@code input} into a new vector of the same field. The caller closes
   * the result; {@code input} stays the caller's.
   *
   * @throws EmbedNormException when the type of {@code input} is not supported or the weight or
   *     bias does not fit a row (the message names the row)
   */
  public FieldVector normalize(FieldVector input, Normalization normalization) {
    Objects.requireNonNull(normalization, "normalization");
    return normalize(input, List.of(normalization), new NormalizationMetrics(), 0);
  }

  /**
   * Applies {@code steps} in order to every row of {@code input} (the first step's output is the
   * second step's input, and so on) into a new vector of the same field, adding what it did to
   * {@code metrics}. On a GPU the intermediate results stay on the device. The caller closes the
   * result; {@code input} stays the caller's.
   *
   * @throws EmbedNormException when {@code steps} is empty, the type of {@code input} is not
   *     supported, or a weight or bias does not fit a row (the message names the row)
   */
  public FieldVector normalize(
      FieldVector input, List<Normalization> steps, NormalizationMetrics metrics) {
    return normalize(input, steps, metrics, 0);
  }

  /**
   * As {@link #normalize(FieldVector, List, NormalizationMetrics)}, numbering rows from {@code
   * firstRowIndex}.
   */
  FieldVector normalize(
      FieldVector input,
      List<Normalization> steps,
      NormalizationMetrics metrics,
      long firstRowIndex) {
    return normalize(input, steps, metrics, firstRowIndex, null);
  }

  /**
   * As {@link #normalize(FieldVector, List, NormalizationMetrics)}, the result's element buffer
   * from {@code memory} (its other buffers, a few bits or bytes a row, from the normalizer's
   * allocator). The caller closes the result, which releases that buffer. On a GPU, memory that is
   * not pinned is staged, as an ordinary allocator's input is.
   */
  public FieldVector normalize(
      FieldVector input,
      List<Normalization> steps,
      NormalizationMetrics metrics,
      ResultMemory memory) {
    return normalize(input, steps, metrics, 0, Objects.requireNonNull(memory, "memory"));
  }

  /** The calls' common path; {@code memory} null for buffers from the normalizer's allocator. */
  private FieldVector normalize(
      FieldVector input,
      List<Normalization> steps,
      NormalizationMetrics metrics,
      long firstRowIndex,
      ResultMemory memory) {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(steps, "steps");
    Objects.requireNonNull(metrics, "metrics");
    ListColumn column = ListColumn.of(input);
    if (steps.isEmpty()) {
      throw new EmbedNormException(
          "Cannot normalize column '" + column.name() + "': no normalization was given");
    }
    if (closed) {
      throw new EmbedNormException(
          "Cannot normalize column '" + column.name() + "': the normalizer is closed");
    }
    NormalizationEngine engine = engines.first();
    AutoCallRule.Choice choice = autoChoice(column);
    if (choice != AutoCallRule.Choice.GPU) {
      metrics.addAutoCallOnCpu(choice);
      engine = cpuFallback();
    }
    return new ChunkedNormalization(
            engine, gpus, this::cpuFallback, steps, chunkByteLimit, gpuChunkBytes)
        .normalize(column, allocator, memory, firstRowIndex, metrics);
  }

  /** Where auto's rule sends a call on {@code column}; GPU for a normalizer that is not auto. */
  private AutoCallRule.Choice autoChoice(ListColumn column) {
    if (autoRule == AutoCallRule.NONE) {
      return AutoCallRule.Choice.GPU;
    }
    int byteWidth = column.type().byteWidth();
    long bytes = (column.boundary(column.rows()) - column.boundary(0)) * byteWidth;
    StagingPool staging = gpus.staging();
    boolean staged =
        staging == null
            || !staging.isPinned(
                column.elements().getDataBuffer().memoryAddress() + column.boundary(0) * byteWidth,
                bytes);
    return autoRule.choose(bytes, staged);
  }

  /**
   * Applies {@code steps} in order to every row of the float32 column {@code input} and writes the
   * last step's result in {@code encoding} (docs/SEMANTICS.md, Encodings) into a new vector named
   * as {@code input}, the layout a pyarrow or Lance reader takes as it is:
   *
   * <ul>
   *   <li>{@code float16}, {@code bfloat16}, {@code binary}: {@code FixedSizeBinary(rowBytes)} for
   *       a {@code FixedSizeList} column, {@code Binary} for a {@code List} column; each value
   *       holds one row's bytes (2 little-endian bytes an element, or its sign bits), so {@code
   *       numpy.frombuffer(values.buffers()[1], numpy.float16).reshape(rows, width)} reads a
   *       fixed-size float16 column.
   *   <li>{@code int8}: {@code Struct<values: FixedSizeBinary or Binary, scale: float32>}, the
   *       layout of SQL's {@code quantize_int8}.
   * </ul>
   *
   * A null row gives a null value; an empty row an empty one (int8 scale 0). The last step and the
   * encoding run in one pass ({@link NormalizationEngine#normalizeEncoded}) on the normalizer's
   * first engine: on a GPU, the CUDA engine's fused kernels (the CPU engine for a batch the GPU
   * fails). The caller closes the result.
   *
   * @throws EmbedNormException when {@code steps} is empty, {@code input} is not a float32 list
   *     column, or a weight or bias does not fit a row
   */
  public FieldVector normalizeEncoded(
      FieldVector input,
      List<Normalization> steps,
      Encoding encoding,
      NormalizationMetrics metrics) {
    Objects.requireNonNull(encoding, "encoding");
    Objects.requireNonNull(steps, "steps");
    if (steps.isEmpty()) {
      throw new EmbedNormException(
          "Cannot normalize column '"
              + input.getField().getName()
              + "': no normalization was given");
    }
    Normalization last = steps.get(steps.size() - 1);
    if (steps.size() == 1) {
      return encodeOnFirstEngine(ListColumn.of(input), last, encoding, metrics);
    }
    try (FieldVector before = normalize(input, steps.subList(0, steps.size() - 1), metrics)) {
      return encodeOnFirstEngine(ListColumn.of(before), last, encoding, metrics);
    }
  }

  /**
   * The fused pass on the first engine (the GPU's fused kernels, or the CPU engine); a GPU that
   * faults or has no memory for the batch leaves it to the CPU engine, counted in {@code metrics}.
   */
  private FieldVector encodeOnFirstEngine(
      ListColumn column, Normalization last, Encoding encoding, NormalizationMetrics metrics) {
    NormalizationEngine engine = engines.first();
    try {
      return EncodedColumns.encode(engine, column, last, encoding, allocator, 0);
    } catch (GpuFaultException | GpuOutOfMemoryException failure) {
      if (!engine.copiesToDevice()) {
        throw failure;
      }
      metrics.addCpuFallback(column.rows(), failure);
      return EncodedColumns.encode(cpuFallback(), column, last, encoding, allocator, 0);
    }
  }

  /** The CPU engine for calls that fail on the GPU, started on the first such call. */
  private synchronized NormalizationEngine cpuFallback() {
    if (cpuFallback == null) {
      cpuFallback = Engines.cpu();
    }
    return cpuFallback;
  }

  /** The allocator results come from. */
  BufferAllocator allocator() {
    return allocator;
  }

  /**
   * Frees the engines, every GPU's (and the CPU engine of fallbacks, if one started), and, the last
   * normalizer open, the idle memory kept for the CPU engine's outputs; the allocator and all
   * vectors stay as they are. Idempotent.
   */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      try {
        gpus.close();
        engines.close();
      } finally {
        synchronized (this) {
          if (cpuFallback != null) {
            cpuFallback.close();
          }
        }
        HostOutputs.normalizerClosed();
      }
    }
  }

  /** Settings of a normalizer; every one has a default. */
  public static final class Builder {
    private final BufferAllocator allocator;
    private DeviceChoice device = DeviceChoice.AUTO;
    private GpuSettings gpu = GpuSettings.DEFAULT;

    /** Null for the one GPU of {@link #gpu}; empty for every GPU of the host. */
    private List<Integer> gpuOrdinals;

    private long gpuChunkBytes = DEFAULT_GPU_CHUNK_BYTES;

    private Builder(BufferAllocator allocator) {
      this.allocator = Objects.requireNonNull(allocator, "allocator");
    }

    /** Where to run: {@code auto} (default), {@code cpu} or {@code gpu}. */
    public Builder device(DeviceChoice choice) {
      this.device = Objects.requireNonNull(choice, "device");
      return this;
    }

    /** The CUDA device to use (default 0), e.g. the one Spark assigned to the task. */
    public Builder gpuOrdinal(int ordinal) {
      this.gpu = gpu.withOrdinal(ordinal);
      this.gpuOrdinals = null;
      return this;
    }

    /**
     * The CUDA devices to spread each call's chunks over, e.g. {@code gpuOrdinals(0, 1)}: one
     * engine per GPU, each with its own pipeline; the result is bit for bit one GPU's. Checked
     * against the host when built.
     *
     * @throws EmbedNormException when the list is empty, names a GPU twice or a negative ordinal
     */
    public Builder gpuOrdinals(int... ordinals) {
      return gpuOrdinals(Arrays.stream(ordinals).boxed().toList());
    }

    /** As {@link #gpuOrdinals(int...)}, from a list. */
    public Builder gpuOrdinals(List<Integer> ordinals) {
      this.gpuOrdinals = DeviceEngines.checkList(ordinals);
      return this;
    }

    /** Every GPU of this process (those CUDA_VISIBLE_DEVICES leaves), as {@link #gpuOrdinals}. */
    public Builder allGpus() {
      this.gpuOrdinals = List.of();
      return this;
    }

    /** How many threads may use each GPU at once (default 2); the others wait their turn. */
    public Builder gpuConcurrency(int users) {
      this.gpu = gpu.withConcurrentUsers(users);
      return this;
    }

    /**
     * Bytes of rows per GPU chunk (default {@link #DEFAULT_GPU_CHUNK_BYTES}); a row wider than a
     * chunk goes alone. Smaller chunks overlap sooner, larger ones pay less per-chunk overhead.
     */
    public Builder gpuChunkBytes(long bytes) {
      if (bytes < 1 || bytes > Integer.MAX_VALUE) {
        throw new EmbedNormException(
            "Cannot set the GPU chunk size to "
                + bytes
                + " bytes: it must be between 1 and "
                + Integer.MAX_VALUE);
      }
      this.gpuChunkBytes = bytes;
      return this;
    }

    /**
     * The normalizer; the caller closes it.
     *
     * @throws EmbedNormException when {@code gpu} is asked for and no GPU is usable, or a GPU is to
     *     be used and the list names one this host lacks ({@code Cannot use GPUs [0, 3]: this host
     *     has 2}) or one whose engine cannot start
     */
    public ArrowNormalizer build() {
      DeviceEngines engines =
          gpuOrdinals == null
              ? DeviceEngines.of(Engines.select(device, gpu), gpu.ordinal())
              : DeviceEngines.open(device, gpu, gpuOrdinals.isEmpty() ? null : gpuOrdinals);
      AutoCallRule autoRule =
          device == DeviceChoice.AUTO ? AutoCallRule.fromSwitches() : AutoCallRule.NONE;
      return new ArrowNormalizer(allocator, engines, DEFAULT_CHUNK_BYTES, gpuChunkBytes, autoRule);
    }
  }
}

package io.embednorm.arrow;

import io.embednorm.arrow.internal.HostOutputs;
import io.embednorm.arrow.internal.PinnedOutputs;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.HostMemory;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;

/**
 * Normalizes one list column into a new vector: hands the engine the input's and the output's
 * element buffers (no copies; views for the CPU engine, addresses for the GPU pipeline), in runs of
 * rows whose bytes stay within a limit, then sets the output's validity. A chain of steps runs the
 * first from the input to the output and the others in place.
 *
 * <p>A row is valid when it is not null and none of its elements is null; invalid rows come out
 * null, with zeroed elements. Invalid rows are normalized along with their neighbours (their
 * results are discarded), except those whose width does not fit the weight or bias: those are left
 * out of the runs, so that a null row never raises a width error.
 *
 * <p>On GPUs the runs are spread over the normalizer's devices ({@link DeviceSpread}), each with
 * its own pipeline; the column's memory is pinned once for all of them ({@link PinnedColumn}).
 *
 * <p>When a GPU fails (a {@link GpuFaultException}, a {@link GpuOutOfMemoryException} that
 * splitting did not cure, or a driver error that is no {@link EmbedNormException}), every pipeline
 * is drained and closed and the whole call runs again on the CPU engine into the same output: the
 * result is the CPU engine's, bit for bit, and the metrics count it. Other {@link
 * EmbedNormException}s (a weight that does not fit a row) are the caller's and propagate.
 */
final class ChunkedNormalization {
  private final NormalizationEngine engine;
  private final DeviceSpread gpus;
  private final Supplier<NormalizationEngine> cpuFallback;
  private final List<Normalization> steps;
  private final long chunkByteLimit;
  private final long gpuChunkBytes;

  /**
   * @param engine the CPU engine, or the first GPU's (then the runs go to {@code gpus})
   * @param gpus the GPUs the runs are spread over when {@code engine} is a GPU's
   * @param cpuFallback the CPU engine that calls failing on the GPU run on again (not closed here)
   */
  ChunkedNormalization(
      NormalizationEngine engine,
      DeviceSpread gpus,
      Supplier<NormalizationEngine> cpuFallback,
      List<Normalization> steps,
      long chunkByteLimit,
      long gpuChunkBytes) {
    this.engine = engine;
    this.gpus = gpus;
    this.cpuFallback = cpuFallback;
    this.steps = List.copyOf(steps);
    this.chunkByteLimit = chunkByteLimit;
    this.gpuChunkBytes = gpuChunkBytes;
  }

  /**
   * Returns the normalized column, allocated from {@code allocator} (its element buffer from {@code
   * memory} where that is not null); the caller closes it.
   *
   * @param firstRowIndex the index of the column's first row in messages
   */
  FieldVector normalize(
      ListColumn input,
      BufferAllocator allocator,
      ResultMemory memory,
      long firstRowIndex,
      NormalizationMetrics metrics) {
    long started = System.nanoTime();
    int rows = input.rows();
    long base = input.boundary(0);
    long end = input.boundary(rows);
    checkSize(input, base, end);
    boolean gpu = engine.copiesToDevice();
    // Without a weight or bias every row fits, so the runs need no validity. On the GPU it is then
    // worked out on another thread while the chunks go (a large batch's element validity is
    // megabytes of bits, a fair share of the time its copies take).
    boolean[] early = needsValidityFirst() || !gpu ? validRows(input) : null;
    FieldVector output =
        memory != null
            ? input.allocateOutput(allocator, (int) (end - base), memory::elements)
            : allocateOutput(input, allocator, (int) (end - base), gpu);
    CompletableFuture<boolean[]> marked =
        early != null
            ? CompletableFuture.completedFuture(markValidity(input, early, output))
            : CompletableFuture.supplyAsync(() -> markValidity(input, validRows(input), output));
    try {
      try {
        if (gpu) {
          runOnGpu(input, early, output, firstRowIndex, metrics, (end - base));
        } else {
          runAll(
              new CpuRuns(engine, steps, input, output, firstRowIndex, metrics),
              new RowRuns(input, steps, early, chunkByteLimit, firstRowIndex));
        }
      } finally {
        // Never close the output while the other thread still writes its validity.
        marked.exceptionally(failure -> null).join();
      }
      zeroInvalidRows(input, join(marked), output);
      metrics.addCall(rows, System.nanoTime() - started);
      return output;
    } catch (RuntimeException | Error failure) {
      output.close();
      throw failure;
    }
  }

  /**
   * The output vector. On a GPU whose input is not pinned memory (an ordinary allocator), its
   * element buffer is pinned ({@link PinnedOutputs}), so that the device writes the results in
   * place; a pinned allocator's own buffers are pinned already. On the CPU engine a large element
   * buffer comes from the pool of {@link HostOutputs}, whose pages earlier calls touched.
   */
  private FieldVector allocateOutput(
      ListColumn input, BufferAllocator allocator, int elementCount, boolean gpu) {
    if (input.rows() == 0) {
      return input.allocateOutput(allocator, elementCount);
    }
    if (!gpu) {
      return input.allocateOutput(allocator, elementCount, HostOutputs::buffer);
    }
    StagingPool staging = gpus.staging();
    if (staging == null) {
      return input.allocateOutput(allocator, elementCount);
    }
    int byteWidth = input.type().byteWidth();
    long start = input.boundary(0) * byteWidth;
    long bytes = (long) elementCount * byteWidth;
    long address = input.elements().getDataBuffer().memoryAddress() + start;
    if (staging.isPinned(address, bytes)) {
      return input.allocateOutput(allocator, elementCount);
    }
    HostMemory memory = staging.memory();
    return input.allocateOutput(
        allocator, elementCount, (owner, size) -> PinnedOutputs.buffer(memory, owner, size));
  }

  /**
   * Runs the rows through the GPUs' pipelines; when a GPU fails, runs them all again on the CPU
   * engine, once every pipeline is drained and closed (no copy still writes into the output).
   */
  private void runOnGpu(
      ListColumn input,
      boolean[] early,
      FieldVector output,
      long firstRowIndex,
      NormalizationMetrics metrics,
      long elements) {
    long chunkBytes = gpuChunkBytes(gpuChunkBytes, elements * input.type().byteWidth());
    List<RowRuns.Run> runs = new RowRuns(input, steps, early, chunkBytes, firstRowIndex).list();
    if (runs.isEmpty()) {
      return;
    }
    StagingPool staging = gpus.staging();
    try (PinnedColumn pins = PinnedColumn.pin(input, output, metrics, staging)) {
      if (pins.staged() && chunkBytes > staging.slotBytes()) {
        // A staged chunk fills one slot (a row wider than a slot goes alone, in a slot of its own).
        runs = new RowRuns(input, steps, early, staging.slotBytes(), firstRowIndex).list();
      }
      gpus.run(
          runs,
          device -> new GpuPipeline(device, steps, input, output, pins, firstRowIndex, metrics));
    } catch (RuntimeException failure) {
      if (!isGpuFailure(failure)) {
        throw failure;
      }
      try {
        runAll(
            new CpuRuns(cpuFallback.get(), steps, input, output, firstRowIndex, metrics),
            new RowRuns(input, steps, early, chunkByteLimit, firstRowIndex));
      } catch (RuntimeException | Error onCpu) {
        onCpu.addSuppressed(failure);
        throw onCpu;
      }
      metrics.addCpuFallback(input.rows(), failure);
    }
  }

  private static void runAll(RunSink sink, RowRuns runs) {
    try (sink) {
      runs.submitAll(sink);
      sink.finish();
    }
  }

  /**
   * Whether {@code failure} is the GPU's rather than the call's: a GPU fault, memory that splitting
   * did not free, or anything outside embednorm's exceptions (a driver error the engine did not
   * translate). The CPU engine can do the work.
   */
  static boolean isGpuFailure(RuntimeException failure) {
    return failure instanceof GpuFaultException
        || failure instanceof GpuOutOfMemoryException
        || !(failure instanceof EmbedNormException);
  }

  /**
   * The GPU chunk for a batch of {@code batchBytes}: the configured size, or a quarter of a smaller
   * batch (at least {@link #MIN_GPU_CHUNK_BYTES}), so that a Spark-sized batch of a few MiB still
   * overlaps its upload, kernels and download over several streams instead of going as one chunk.
   * Chunking never changes a bit of the output.
   */
  static long gpuChunkBytes(long configured, long batchBytes) {
    return Math.min(configured, Math.max(MIN_GPU_CHUNK_BYTES, batchBytes / 4));
  }

  /** The smallest GPU chunk chosen for a small batch (a configured size may be smaller still). */
  static final long MIN_GPU_CHUNK_BYTES = 1L << 20;

  private static boolean[] markValidity(ListColumn input, boolean[] valid, FieldVector output) {
    setValidity(input, valid, output);
    return valid;
  }

  private static boolean[] join(CompletableFuture<boolean[]> valid) {
    try {
      return valid.join();
    } catch (CompletionException failure) {
      if (failure.getCause() instanceof RuntimeException) {
        throw (RuntimeException) failure.getCause();
      }
      throw failure;
    }
  }

  private boolean needsValidityFirst() {
    for (Normalization step : steps) {
      if (step.hasWeight() || step.hasBias()) {
        return true;
      }
    }
    return false;
  }

  private static void checkSize(ListColumn input, long base, long end) {
    if (end - base > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot normalize column '"
              + input.name()
              + "': its rows hold "
              + (end - base)
              + " elements, more than one Arrow vector can hold ("
              + Integer.MAX_VALUE
              + ")");
    }
    if (input.elements().getValueCount() < end) {
      throw new EmbedNormException(
          "Cannot normalize column '"
              + input.name()
              + "': its rows end at element "
              + end
              + " but its element vector holds "
              + input.elements().getValueCount());
    }
  }

  private static boolean[] validRows(ListColumn input) {
    boolean[] valid = new boolean[input.rows()];
    BaseFixedWidthVector elements = input.elements();
    ArrowBuf elementValidity = elements.getValidityBuffer();
    long first = input.boundary(0);
    long last = input.boundary(valid.length);
    boolean elementNulls = !BitRanges.allSet(elementValidity, first, last);
    if (!elementNulls && input.nullRows() == 0) {
      Arrays.fill(valid, true);
      return valid;
    }
    for (int row = 0; row < valid.length; row++) {
      valid[row] =
          !input.isNullRow(row)
              && (!elementNulls
                  || BitRanges.allSet(
                      elementValidity, input.boundary(row), input.boundary(row + 1)));
    }
    return valid;
  }

  /**
   * Marks valid rows valid (the rows' validity starts all null) and writes every element's bit: set
   * under valid rows, clear under invalid ones.
   */
  private static void setValidity(ListColumn input, boolean[] valid, FieldVector output) {
    ArrowBuf rowValidity = output.getValidityBuffer();
    ArrowBuf elementValidity = ListColumn.elementsOf(output).getValidityBuffer();
    long base = input.boundary(0);
    long validFrom = 0;
    int validRowsFrom = 0;
    for (int row = 0; row < valid.length; row++) {
      if (!valid[row]) {
        // Row bits are set a run of valid rows at a time: a call per bit took a large batch a
        // good share of the time its GPU copies take.
        BitRanges.set(rowValidity, validRowsFrom, row);
        validRowsFrom = row + 1;
        long start = input.boundary(row) - base;
        long end = input.boundary(row + 1) - base;
        BitRanges.set(elementValidity, validFrom, start);
        BitRanges.clear(elementValidity, start, end);
        validFrom = end;
      }
    }
    BitRanges.set(rowValidity, validRowsFrom, valid.length);
    long count = input.boundary(valid.length) - base;
    BitRanges.set(elementValidity, validFrom, count);
    // The unused bits of the last byte go into IPC files: keep them zero, so files repeat.
    BitRanges.clear(elementValidity, count, (count + 7) & -8L);
  }

  /** Zeroes the elements of invalid rows, after the engine has written all rows. */
  private static void zeroInvalidRows(ListColumn input, boolean[] valid, FieldVector output) {
    ArrowBuf data = ListColumn.elementsOf(output).getDataBuffer();
    int byteWidth = input.type().byteWidth();
    long base = input.boundary(0);
    for (int row = 0; row < valid.length; row++) {
      if (!valid[row]) {
        long start = input.boundary(row) - base;
        long end = input.boundary(row + 1) - base;
        data.setZero(start * byteWidth, (end - start) * byteWidth);
      }
    }
  }

  /** Takes runs of rows, [from, to), whose widths fit every step. */
  interface RunSink extends AutoCloseable {
    void run(int from, int to);

    /** Called once after the last run, before the output is read. */
    void finish();

    /** Frees what the sink holds; after a failure, waits for work in flight first. */
    @Override
    void close();
  }
}

package io.embednorm.spark.internal;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.arrow.NormalizationMetrics;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.spark.internal.SparkArrays.ElementWidth;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The work of the columnar operator in one task: for each batch, copies the input columns of the
 * chains into Arrow (once per input column), runs each chain through the executor's {@link
 * ArrowNormalizer} (on a GPU, a chain's intermediates stay on the device), and copies the results
 * into Spark {@link OnHeapColumnVector}s, one per chain, reused for every batch of the task. The
 * projection's {@code causal_conv} calls go the same way, one {@link ArrowNormalizer#causalConv}
 * call per call and batch, their sequence columns copied by {@link SparkSequences}.
 *
 * <p>The copy out of Arrow pays for itself: Spark's row conversion, which reads every element of
 * the results, reads an on-heap vector several times faster than an {@link
 * org.apache.spark.sql.vectorized.ArrowColumnVector}; so it is unconditional. A batch's Arrow
 * memory is reused by the next batch of the task, not freed: the input copies ({@link
 * InputVectors}) and the results' element buffers ({@link ResultBlocks}, lent to each result until
 * it is closed once copied) come from the task's allocator (so that a leak fails the task), grow to
 * the task's largest batch, and are freed by {@link #close()}; a large buffer allocated afresh per
 * batch would be fresh pages, whose first touch costs about as much as the normalization on a CPU.
 * The result vectors stay valid until the next call to {@link #normalize}, which overwrites them,
 * or {@link #close()}. Each holds up to twice the elements of the task's largest batch on the heap
 * (Spark's vectors grow by doubling), as the scan's own vectors do. A batch that fails on the GPU
 * runs again on the CPU engine inside {@link ArrowNormalizer} (docs/SEMANTICS.md, Devices); the
 * batch result says so, and the first such batch of the task logs one warning, with the reason
 * (later ones only count in the SQL metric {@code cpuFallbackBatches}).
 */
public final class ColumnarNormalizer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ColumnarNormalizer.class);

  private final List<ColumnChain> chains;
  private final List<ColumnConvolution> convolutions;
  private final DeviceChoice device;
  private final int concurrentGpuTasks;
  private final TaskContext task;
  private final BufferAllocator allocator;
  private final OnHeapColumnVector[] outputs;
  private final InputVectors inputs;
  private final ResultBlocks results;
  private boolean warned;

  /**
   * A normalizer for one task's batches; the caller closes it (at the latest when the task
   * completes).
   */
  public ColumnarNormalizer(
      List<ColumnChain> chains,
      List<ColumnConvolution> convolutions,
      DeviceChoice device,
      int concurrentGpuTasks,
      TaskContext task) {
    this.chains = List.copyOf(chains);
    this.convolutions = List.copyOf(convolutions);
    this.device = device;
    this.concurrentGpuTasks = concurrentGpuTasks;
    this.task = task;
    this.allocator = TaskAllocators.forTask(task);
    this.outputs = new OnHeapColumnVector[this.chains.size() + this.convolutions.size()];
    this.inputs = new InputVectors(allocator);
    this.results = new ResultBlocks(allocator);
  }

  /**
   * Normalizes the chains' columns of {@code batch} and convolves the convolutions', overwriting
   * the previous batch's results, and adds what the normalizer did to {@code metrics}.
   *
   * @return the result columns, one per chain in order, then one per convolution in order, and what
   *     the batch cost
   */
  public BatchResult normalize(ColumnarBatch batch, NormalizationMetrics metrics) {
    BatchTimes times = new BatchTimes();
    Map<Integer, ListVector> copied = new HashMap<>();
    long copiedBytes = 0;
    boolean fellBack = false;
    ColumnVector[] columns = new ColumnVector[outputs.length];
    for (int i = 0; i < chains.size(); i++) {
      ColumnChain chain = chains.get(i);
      ListVector input = copied.get(chain.inputOrdinal());
      if (input == null) {
        input = inputs.copy(batch, chain, times);
        copied.put(chain.inputOrdinal(), input);
        copiedBytes += input.getBufferSize();
      }
      ArrowNormalizer normalizer = Normalizers.forTask(device, concurrentGpuTasks, task);
      NormalizationMetrics chainMetrics = new NormalizationMetrics();
      FieldVector result =
          chain.encoding() == null
              ? normalizer.normalize(input, chain.steps(), chainMetrics, results)
              : normalizer.normalizeEncoded(input, chain.steps(), chain.encoding(), chainMetrics);
      metrics.add(chainMetrics);
      if (chainMetrics.cpuFallbackCalls() > 0) {
        fellBack = true;
        warnOnce(chain.functions(), chainMetrics.cpuFallbackReason());
      }
      columns[i] = toSpark(i, chain, result, times);
    }
    // Copied once per input column and kernel width: a later call's kernel checks the lengths in
    // the engine, with the same line
    Map<List<Integer>, ListVector> copiedSequences = new HashMap<>();
    for (int i = 0; i < convolutions.size(); i++) {
      ColumnConvolution convolution = convolutions.get(i);
      List<Integer> key = List.of(convolution.inputOrdinal(), convolution.channels());
      ListVector input = copiedSequences.get(key);
      if (input == null) {
        input = inputs.copySequences(batch, convolution, times);
        copiedSequences.put(key, input);
        copiedBytes += input.getBufferSize();
      }
      ArrowNormalizer normalizer = Normalizers.forTask(device, concurrentGpuTasks, task);
      NormalizationMetrics convolutionMetrics = new NormalizationMetrics();
      FieldVector result =
          normalizer.causalConv(input, convolution.kernel(), convolution.eps(), convolutionMetrics);
      metrics.add(convolutionMetrics);
      if (convolutionMetrics.cpuFallbackCalls() > 0) {
        fellBack = true;
        warnOnce(CausalConvolutions.NAME, convolutionMetrics.cpuFallbackReason());
      }
      columns[chains.size() + i] = convolvedToSpark(chains.size() + i, convolution, result, times);
    }
    return new BatchResult(columns, copiedBytes, fellBack, times);
  }

  /** Frees the result vectors and the Arrow memory kept between batches. Idempotent. */
  @Override
  public void close() {
    try (inputs;
        results) {
      for (int i = 0; i < outputs.length; i++) {
        if (outputs[i] != null) {
          outputs[i].close();
          outputs[i] = null;
        }
      }
    }
  }

  /**
   * Bytes of Arrow memory this task keeps between batches (inputs and result blocks), for tests.
   */
  long heldBytes() {
    return allocator.getAllocatedMemory();
  }

  /**
   * Copies {@code result} (a list vector, as is the input) into the result vector of the {@code
   * index}-th chain, created on the task's first batch, and frees it, so that the task holds one
   * batch's Arrow memory at most.
   */
  private ColumnVector toSpark(int index, ColumnChain chain, FieldVector result, BatchTimes times) {
    long copying = System.nanoTime();
    try {
      if (chain.encoding() != null) {
        if (outputs[index] == null) {
          outputs[index] =
              new OnHeapColumnVector(
                  Math.max(result.getValueCount(), 1), EncodedVectors.sparkType(chain.encoding()));
        }
        return EncodedVectors.toSpark(result, outputs[index]);
      }
      if (outputs[index] == null) {
        DataType element =
            chain.width() == ElementWidth.FLOAT ? DataTypes.FloatType : DataTypes.DoubleType;
        outputs[index] =
            new OnHeapColumnVector(
                Math.max(result.getValueCount(), 1), DataTypes.createArrayType(element, true));
      }
      return SparkArrays.toSpark((ListVector) result, chain.width(), outputs[index]);
    } finally {
      closeCopied(result, copying, times);
    }
  }

  /**
   * Copies {@code result}, a {@code causal_conv} result, into the {@code index}-th result vector
   * (an {@code array<array<float>>}, created on the task's first batch) and frees it.
   */
  private ColumnVector convolvedToSpark(
      int index, ColumnConvolution convolution, FieldVector result, BatchTimes times) {
    long copying = System.nanoTime();
    try {
      if (outputs[index] == null) {
        outputs[index] =
            new OnHeapColumnVector(
                Math.max(result.getValueCount(), 1), CausalConvolutions.RESULT_TYPE);
      }
      return SparkSequences.toSpark((ListVector) result, convolution.channels(), outputs[index]);
    } finally {
      closeCopied(result, copying, times);
    }
  }

  /** Frees {@code result}, copied out since {@code copying}, counting both in {@code times}. */
  private static void closeCopied(FieldVector result, long copying, BatchTimes times) {
    long freeing = System.nanoTime();
    times.addOutput(freeing - copying);
    result.close();
    times.addAllocation(System.nanoTime() - freeing);
  }

  /** The task's one warning about batches moved from the GPU to the CPU engine. */
  private void warnOnce(String functions, String reason) {
    if (warned) {
      return;
    }
    warned = true;
    LOG.warn(
        "embednorm ran a batch of {} on the CPU engine in task {}: the GPU failed ({}); the result"
            + " is the CPU engine's. Later batches of this task that fall back are counted in the"
            + " SQL metric cpuFallbackBatches, not logged",
        functions,
        task == null ? "(none)" : task.taskAttemptId(),
        reason);
  }

  /**
   * What one batch gave: the result columns (one per chain, valid until the next batch), the bytes
   * copied from Spark into Arrow, whether it fell back from the GPU to the CPU, and where the time
   * outside the normalization went.
   */
  public record BatchResult(
      ColumnVector[] columns, long copiedBytes, boolean fellBack, BatchTimes times) {}
}

package io.embednorm.spark.internal;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.arrow.NormalizationMetrics;
import io.embednorm.kernels.Device;
import io.embednorm.kernels.DeviceChoice;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The work of the columnar operator in one task: for each batch, copies the input columns of the
 * chains into Arrow (once per input column), runs each chain through the executor's {@link
 * ArrowNormalizer} (on a GPU, a chain's intermediates stay on the device), and wraps the results as
 * Spark {@link ArrowColumnVector}s.
 *
 * <p>Owns the results of the latest batch: they stay valid until the next call to {@link
 * #normalize} or {@link #close()}, which free them. Their memory comes from the task's allocator,
 * so that a leak fails the task. When a batch fails on the GPU it runs again on the CPU engine,
 * logged once per reason; a failure there (e.g. a weight that does not fit a row) is the query's.
 */
public final class ColumnarNormalizer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ColumnarNormalizer.class);
  private static final ConcurrentMap<String, Boolean> LOGGED = new ConcurrentHashMap<>();

  private final List<ColumnChain> chains;
  private final DeviceChoice device;
  private final int concurrentGpuTasks;
  private final TaskContext task;
  private final BufferAllocator allocator;
  private final List<FieldVector> results = new ArrayList<>();

  /**
   * A normalizer for one task's batches; the caller closes it (at the latest when the task
   * completes).
   */
  public ColumnarNormalizer(
      List<ColumnChain> chains, DeviceChoice device, int concurrentGpuTasks, TaskContext task) {
    this.chains = List.copyOf(chains);
    this.device = device;
    this.concurrentGpuTasks = concurrentGpuTasks;
    this.task = task;
    this.allocator = TaskAllocators.forTask(task);
  }

  /**
   * Normalizes the chains' columns of {@code batch}, freeing the previous batch's results, and adds
   * what the normalizer did to {@code metrics}.
   *
   * @return the result columns, one per chain in order, and what the batch cost
   */
  public BatchResult normalize(ColumnarBatch batch, NormalizationMetrics metrics) {
    BatchTimes times = new BatchTimes();
    long freeing = System.nanoTime();
    freeResults();
    times.addAllocation(System.nanoTime() - freeing);
    Map<Integer, ListVector> inputs = new HashMap<>();
    long copiedBytes = 0;
    boolean fellBack = false;
    try {
      ColumnVector[] columns = new ColumnVector[chains.size()];
      for (int i = 0; i < chains.size(); i++) {
        ColumnChain chain = chains.get(i);
        ListVector input = inputs.get(chain.inputOrdinal());
        if (input == null) {
          input =
              SparkArrays.toArrow(
                  batch.column(chain.inputOrdinal()),
                  batch.numRows(),
                  chain.width(),
                  chain.inputName(),
                  allocator,
                  times);
          inputs.put(chain.inputOrdinal(), input);
          copiedBytes += input.getBufferSize();
        }
        ArrowNormalizer normalizer = Normalizers.forTask(device, concurrentGpuTasks, task);
        FieldVector result;
        try {
          result = normalizer.normalize(input, chain.steps(), metrics);
        } catch (RuntimeException failure) {
          if (normalizer.device() != Device.GPU) {
            throw failure;
          }
          logFallback(chain, failure);
          fellBack = true;
          result = Normalizers.cpu().normalize(input, chain.steps(), metrics);
        }
        long wrapping = System.nanoTime();
        FieldVector owned = moveToTask(result);
        results.add(owned);
        columns[i] = new ArrowColumnVector(owned);
        times.addOutput(System.nanoTime() - wrapping);
      }
      return new BatchResult(columns, copiedBytes, fellBack, times);
    } catch (RuntimeException | Error failure) {
      freeResults();
      throw failure;
    } finally {
      freeing = System.nanoTime();
      inputs.values().forEach(ListVector::close);
      times.addAllocation(System.nanoTime() - freeing);
    }
  }

  /** Frees the latest batch's results. Idempotent. */
  @Override
  public void close() {
    freeResults();
  }

  private FieldVector moveToTask(FieldVector result) {
    if (result.getAllocator() == allocator) {
      return result;
    }
    try {
      TransferPair transfer = result.getTransferPair(allocator);
      transfer.transfer();
      return (FieldVector) transfer.getTo();
    } finally {
      result.close();
    }
  }

  private void freeResults() {
    results.forEach(FieldVector::close);
    results.clear();
  }

  private static void logFallback(ColumnChain chain, RuntimeException failure) {
    String message =
        "embednorm runs a batch of "
            + chain.functions()
            + " on the CPU engine: the GPU failed ("
            + failure.getMessage()
            + ")";
    if (LOGGED.putIfAbsent(message, Boolean.TRUE) == null) {
      LOG.warn(message, failure);
    }
  }

  /**
   * What one batch gave: the result columns (one per chain, valid until the next batch), the bytes
   * copied from Spark into Arrow, whether it fell back from the GPU to the CPU, and where the time
   * outside the normalization went.
   */
  public record BatchResult(
      ColumnVector[] columns, long copiedBytes, boolean fellBack, BatchTimes times) {}
}

package io.embednorm.arrow;

import io.embednorm.arrow.internal.StagedConvolution;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.Device;
import io.embednorm.engine.NormalizationEngine;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.ArrowBuf;

/**
 * Hands the rows of a {@code causal_conv} column to an engine in few calls. On a GPU with pinned
 * staging, every row goes through the staging slots ({@link StagedConvolution}): the engine copies
 * ordinary memory at a fraction of the speed it copies pinned memory, and the slots are filled and
 * drained on several threads while it runs (the output's values are never pinned: they come from
 * the pool of ordinary memory). Elsewhere a run of at least {@link #IN_PLACE_FLOATS} floats of
 * adjacent rows of one length goes in place, as slices of the Arrow buffers, and the other rows are
 * gathered into arrays. On the CPU engine a batch holds rows of one length; on a GPU, whose calls
 * cost more than a few padded steps, rows of near lengths share one batch, each padded with zero
 * steps to the batch's longest ({@link #PADDING}). Padding changes no bit of a row's output: a step
 * sums only the steps before it, in an order that does not depend on the steps after it
 * (docs/SEMANTICS.md, Causal convolution). An engine call takes at most {@link #BATCH_FLOATS}
 * floats, a staged one a slot.
 */
final class ConvolutionBatches {
  /** Floats of sequences handed to the engine at once (each way): 1 GiB. */
  static final long BATCH_FLOATS = 1L << 28;

  /**
   * Floats (4 MiB) from which a run of adjacent rows goes to the engine in place rather than with
   * the gathered rows: enough to carry an engine call's fixed cost.
   */
  static final long IN_PLACE_FLOATS = 1L << 20;

  /** On a GPU, a gathered row joins a batch of up to 5/4 its steps. */
  static final double PADDING = 1.25;

  private final NormalizationEngine engine;
  private final ConvolutionKernel kernel;
  private final float eps;
  private final ArrowBuf input;
  private final ArrowBuf output;
  private final long[] inputStarts;
  private final long[] outputStarts;
  private final int[] counts;
  private final StagingPool staging;

  /**
   * Row {@code r} has {@code counts[r]} steps (0 or less: nothing to convolve) from step {@code
   * inputStarts[r]} of {@code input}, and goes to step {@code outputStarts[r]} of {@code output}.
   * With {@code staging} (a GPU's), every row goes through its pinned slots, filled, convolved and
   * drained in parallel ({@link StagedConvolution}). Without, long runs go in place and the other
   * rows through Java arrays.
   */
  ConvolutionBatches(
      NormalizationEngine engine,
      ConvolutionKernel kernel,
      float eps,
      ArrowBuf input,
      ArrowBuf output,
      long[] inputStarts,
      long[] outputStarts,
      int[] counts,
      StagingPool staging) {
    this.engine = engine;
    this.kernel = kernel;
    this.eps = eps;
    this.input = input;
    this.output = output;
    this.inputStarts = inputStarts;
    this.outputStarts = outputStarts;
    this.counts = counts;
    this.staging = staging;
  }

  /** Convolves every row with steps. */
  void run() {
    Map<Integer, List<Integer>> byLength = new TreeMap<>(Comparator.reverseOrder());
    for (int row = 0; row < counts.length; row++) {
      if (counts[row] > 0) {
        byLength.computeIfAbsent(counts[row], length -> new ArrayList<>()).add(row);
      }
    }
    List<Integer> gathered = new ArrayList<>();
    for (Map.Entry<Integer, List<Integer>> group : byLength.entrySet()) {
      gathered.addAll(
          staging == null ? runsInPlace(group.getKey(), group.getValue()) : group.getValue());
    }
    List<List<Integer>> batches = batchesOf(gathered);
    if (staging == null) {
      for (List<Integer> batch : batches) {
        int floats = batch.size() * counts[batch.get(0)] * kernel.channels();
        convolveGathered(batch, FloatBuffer.allocate(floats), FloatBuffer.allocate(floats));
      }
      return;
    }
    StagedConvolution.Rows rows =
        new StagedConvolution.Rows(
            input.memoryAddress(),
            output.memoryAddress(),
            inputStarts,
            outputStarts,
            counts,
            kernel.channels());
    StagedConvolution.run(engine, kernel, eps, staging, rows, batches);
  }

  /**
   * The engine calls of the gathered rows (longest first): on a GPU rows within {@link #PADDING} of
   * a batch's first, elsewhere rows of its length; at most {@link #BATCH_FLOATS} floats a batch.
   */
  private List<List<Integer>> batchesOf(List<Integer> gathered) {
    boolean padded = engine.device() == Device.GPU;
    List<List<Integer>> batches = new ArrayList<>();
    for (int first = 0, end; first < gathered.size(); first = end) {
      int steps = counts[gathered.get(first)];
      long perBatch =
          staging == null
              ? Math.max(1, BATCH_FLOATS / ((long) steps * kernel.channels()))
              : StagedConvolution.rowsPerSlot(staging, steps, kernel.channels());
      end = first + 1;
      while (end < gathered.size()
          && end - first < perBatch
          && (padded
              ? counts[gathered.get(end)] * PADDING >= steps
              : counts[gathered.get(end)] == steps)) {
        end++;
      }
      batches.add(gathered.subList(first, end));
    }
    return batches;
  }

  /**
   * Convolves the runs of {@code rows} (all of {@code count} steps) long enough to go in place;
   * returns the others.
   */
  private List<Integer> runsInPlace(int count, List<Integer> rows) {
    int rowFloats = count * kernel.channels();
    int perBatch = (int) Math.max(1, Math.min(rows.size(), BATCH_FLOATS / rowFloats));
    long runRows = Math.max(1, IN_PLACE_FLOATS / rowFloats);
    List<Integer> others = new ArrayList<>();
    for (int first = 0, end; first < rows.size(); first = end) {
      end = first + 1;
      while (end < rows.size() && follows(rows.get(end - 1), rows.get(end), count)) {
        end++;
      }
      if (end - first < runRows) {
        others.addAll(rows.subList(first, end));
        continue;
      }
      for (int from = first; from < end; from += perBatch) {
        int row = rows.get(from);
        int batch = Math.min(perBatch, end - from);
        engine.causalConvolution(
            kernel,
            eps,
            floats(input, inputStarts[row] * kernel.channels(), batch * rowFloats),
            batch,
            count,
            floats(output, outputStarts[row] * kernel.channels(), batch * rowFloats));
      }
    }
    return others;
  }

  private boolean follows(int previous, int row, int count) {
    return inputStarts[row] == inputStarts[previous] + count
        && outputStarts[row] == outputStarts[previous] + count;
  }

  /**
   * Convolves {@code rows}, each padded with zero steps to the first one's length, in one engine
   * call through {@code batch} and {@code result} (at least as large as the batch).
   */
  private void convolveGathered(List<Integer> rows, FloatBuffer batch, FloatBuffer result) {
    int channels = kernel.channels();
    int steps = counts[rows.get(0)];
    int rowFloats = steps * channels;
    int floats = rows.size() * rowFloats;
    for (int i = 0; i < rows.size(); i++) {
      int row = rows.get(i);
      int rowValues = counts[row] * channels;
      batch.put(i * rowFloats, floats(input, inputStarts[row] * channels, rowValues), 0, rowValues);
      for (int padding = i * rowFloats + rowValues; padding < (i + 1) * rowFloats; padding++) {
        batch.put(padding, 0f);
      }
    }
    engine.causalConvolution(
        kernel, eps, batch.slice(0, floats), rows.size(), steps, result.slice(0, floats));
    for (int i = 0; i < rows.size(); i++) {
      int row = rows.get(i);
      int rowValues = counts[row] * channels;
      floats(output, outputStarts[row] * channels, rowValues)
          .put(0, result, i * rowFloats, rowValues);
    }
  }

  private static FloatBuffer floats(ArrowBuf buffer, long firstFloat, int floats) {
    return buffer
        .nioBuffer(firstFloat * Float.BYTES, floats * Float.BYTES)
        .order(ByteOrder.LITTLE_ENDIAN)
        .asFloatBuffer();
  }
}

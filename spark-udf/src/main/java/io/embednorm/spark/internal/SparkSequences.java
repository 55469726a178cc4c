package io.embednorm.spark.internal;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.spark.internal.SparkArrays.ElementWidth;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.util.DataSizeRoundingUtil;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;

/**
 * Copies an {@code array<array<float>>} column of sequences (docs/SEMANTICS.md, Causal convolution)
 * into an Arrow {@code List<FixedSizeList<float>>}, the input of {@code
 * ArrowNormalizer.causalConv}, and its result back into a Spark vector, as {@link SparkArrays} does
 * for {@code array<float>} columns and with its element copies: steps that follow one another in
 * Spark's element vector are copied in bulk.
 *
 * <p>The copy applies the row path's rules in its order ({@link CausalConvolutions#convolve}): a
 * null sequence, step or element makes the row null (no steps); a step of another width than the
 * kernel's channels fails with the row path's line, and so does a sequence longer than the kernel,
 * the first such row of the batch failing it.
 */
final class SparkSequences {
  private SparkSequences() {}

  /**
   * An empty {@code List<FixedSizeList<float>>} of {@code channels} floats a step, named {@code
   * name}, from {@code allocator}, for {@link #toArrow} to fill batch after batch; the caller
   * closes it.
   */
  static ListVector newList(String name, int channels, BufferAllocator allocator) {
    ListVector list = ListVector.empty(name, allocator);
    FixedSizeListVector steps =
        list.<FixedSizeListVector>addOrGetVector(
                FieldType.nullable(new ArrowType.FixedSizeList(channels)))
            .getVector();
    steps.addOrGetVector(
        FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    return list;
  }

  /**
   * Replaces what {@code list} (from {@link #newList} with the kernel's channels) holds with the
   * first {@code rows} sequences of {@code column}, and returns it; buffers are reused where large
   * enough. Adds the time spent allocating, and the rest of the time spent, to {@code times}.
   *
   * @throws io.embednorm.engine.EmbedNormException for a step of another width than the kernel's
   *     channels or a sequence longer than the kernel, as the row path
   */
  static ListVector toArrow(
      ColumnVector column, int rows, ConvolutionKernel kernel, ListVector list, BatchTimes times) {
    long started = System.nanoTime();
    long allocationBefore = times.allocationNanos();
    try {
      SparkArrays.reserveRows(list, rows, times);
      Copy copy = new Copy(list, kernel, times);
      if (column instanceof WritableColumnVector writable) {
        copy.fromWritable(writable, rows);
      } else {
        copy.fromAny(column, rows);
      }
      return list;
    } finally {
      long allocation = times.allocationNanos() - allocationBefore;
      times.addCopy(System.nanoTime() - started - allocation);
    }
  }

  /**
   * Copies {@code list}, a {@code causal_conv} result of {@code channels} floats a step, into
   * {@code target}, a vector of {@code array<array<float>>} that is reset first (growing where the
   * batch needs it), and returns it. Only row nulls are copied: a result row is null or wholly
   * valid. The floats go in one copy.
   *
   * @throws IllegalArgumentException when the floats are fewer than the offsets say (a raw copy
   *     checks no bounds)
   */
  static WritableColumnVector toSpark(ListVector list, int channels, WritableColumnVector target) {
    Float4Vector values =
        (Float4Vector) ((FixedSizeListVector) list.getDataVector()).getDataVector();
    int[] span = SparkArrays.putRows(list, target);
    if (span == null) {
      return target;
    }
    int base = span[0];
    int start = span[1];
    if ((long) values.getValueCount() < (long) start * channels) {
      throw new IllegalArgumentException(
          "Cannot copy column '"
              + list.getName()
              + "' into Spark: its rows end at step "
              + start
              + " of "
              + channels
              + " floats but it holds "
              + values.getValueCount()
              + " floats");
    }
    int steps = start - base;
    WritableColumnVector stepVector = target.arrayData();
    stepVector.reserve(steps);
    for (int step = 0; step < steps; step++) {
      stepVector.putArray(step, step * channels, channels);
    }
    int floats = steps * channels;
    WritableColumnVector floatVector = stepVector.arrayData();
    floatVector.reserve(floats);
    long address = values.getDataBuffer().memoryAddress() + (long) base * channels * Float.BYTES;
    if (!SparkVectorMemory.copyInto(address, floatVector, 0, floats, Float.BYTES)) {
      SparkArrays.copyThroughArrays(address, floatVector, floats, ElementWidth.FLOAT);
    }
    return target;
  }

  /** One copy: sets offsets and row validity, then fills the steps and the floats. */
  private static final class Copy {
    private final ListVector list;
    private final ConvolutionKernel kernel;
    private final int channels;
    private final BatchTimes times;
    private final ArrowBuf offsets;
    private final ArrowBuf validity;

    Copy(ListVector list, ConvolutionKernel kernel, BatchTimes times) {
      this.list = list;
      this.kernel = kernel;
      this.channels = kernel.channels();
      this.times = times;
      this.offsets = list.getOffsetBuffer();
      this.validity = list.getValidityBuffer();
    }

    /**
     * Spark's own vectors: each valid row's steps are found through the step vector's offsets, and
     * runs of steps that are adjacent in the float vector go in one copy.
     */
    void fromWritable(WritableColumnVector column, int rows) {
      WritableColumnVector steps = column.arrayData();
      WritableColumnVector values = steps.arrayData();
      boolean stepNulls = steps.hasNull();
      boolean valueNulls = values.hasNull();
      int[] starts = new int[16];
      int total = 0;
      for (int row = 0; row < rows; row++) {
        int length = 0;
        if (!column.isNullAt(row)) {
          int first = column.getArrayOffset(row);
          int count = column.getArrayLength(row);
          if (starts.length < total + count) {
            starts = Arrays.copyOf(starts, Math.max(total + count, 2 * starts.length));
          }
          boolean valid = true;
          for (int t = 0; t < count && valid; t++) {
            int step = first + t;
            if (stepNulls && steps.isNullAt(step)) {
              valid = false;
              continue;
            }
            int width = steps.getArrayLength(step);
            if (width != channels) {
              throw CausalConvolutions.stepWidthFailure(t, width, channels);
            }
            int start = steps.getArrayOffset(step);
            valid = !valueNulls || !SparkArrays.anyNull(values, start, channels);
            starts[total + t] = start;
          }
          if (valid) {
            kernel.checkSteps(count);
            BitVectorHelper.setBit(validity, row);
            length = count;
          }
        }
        total += length;
        offsets.setInt((long) (row + 1) * ListVector.OFFSET_WIDTH, total);
      }
      long address = room(total).getDataBuffer().memoryAddress();
      for (int step = 0; step < total; ) {
        int first = step;
        step++;
        while (step < total && starts[step] == starts[step - 1] + channels) {
          step++;
        }
        SparkArrays.copyElements(
            values,
            starts[first],
            (step - first) * channels,
            ElementWidth.FLOAT,
            address + (long) first * channels * Float.BYTES);
      }
      finish(rows);
    }

    /** Any other vector: each valid row through Spark's arrays. */
    void fromAny(ColumnVector column, int rows) {
      float[][] sequences = new float[rows][];
      int total = 0;
      for (int row = 0; row < rows; row++) {
        if (!column.isNullAt(row)) {
          sequences[row] = read(column.getArray(row));
        }
        if (sequences[row] != null) {
          BitVectorHelper.setBit(validity, row);
          total += sequences[row].length / channels;
        }
        offsets.setInt((long) (row + 1) * ListVector.OFFSET_WIDTH, total);
      }
      long address = room(total).getDataBuffer().memoryAddress();
      for (int row = 0; row < rows; row++) {
        if (sequences[row] != null) {
          long at = (long) offsets.getInt((long) row * ListVector.OFFSET_WIDTH) * channels;
          SparkArrays.copyArray(
              sequences[row],
              sequences[row].length,
              ElementWidth.FLOAT,
              address + at * Float.BYTES);
        }
      }
      finish(rows);
    }

    /** The floats of {@code sequence} step after step, or null where a step or element is. */
    private float[] read(ColumnarArray sequence) {
      float[] floats = CausalConvolutions.floats(sequence, channels);
      if (floats != null) {
        kernel.checkSteps(sequence.numElements());
      }
      return floats;
    }

    /**
     * Room for {@code steps} valid steps (the step vector's validity, every bit set, without
     * Arrow's zeroing where it grows) and their floats; returns the float vector.
     */
    private Float4Vector room(int steps) {
      FixedSizeListVector stepVector = (FixedSizeListVector) list.getDataVector();
      int count = Math.max(steps, 1);
      long validityBytes = DataSizeRoundingUtil.divideBy8Ceil(count);
      if (stepVector.getValidityBuffer().capacity() >= validityBytes) {
        stepVector.getValidityBuffer().setOne(0, validityBytes);
      } else {
        long started = System.nanoTime();
        int room = (int) Math.min(Integer.MAX_VALUE, count + (long) count / 8);
        try (ArrowBuf stepValidity =
            stepVector.getAllocator().buffer(DataSizeRoundingUtil.divideBy8Ceil(room))) {
          stepValidity.setOne(0, stepValidity.capacity());
          stepVector.loadFieldBuffers(new ArrowFieldNode(room, 0), List.of(stepValidity));
        }
        times.addAllocation(System.nanoTime() - started);
      }
      return (Float4Vector)
          SparkArrays.elementRoom(
              (Float4Vector) stepVector.getDataVector(),
              Math.multiplyExact(steps, channels),
              ElementWidth.FLOAT,
              times);
    }

    private void finish(int rows) {
      list.setLastSet(rows - 1);
      list.setValueCount(rows);
    }
  }
}

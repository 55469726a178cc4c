package io.embednorm.engine.cpu;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.Vector;
import jdk.incubator.vector.VectorSpecies;

/**
 * RMSNorm, L2 normalization and LayerNorm of one float32 row wider than the engine's chunk, read
 * and written straight between the batch's buffers with the Vector API instead of through a scratch
 * array: the same operations in the same order as {@link FloatRowKernels} on the SIMD passes (each
 * block of {@link SumTree} summed in one register, its tail into its lanes in scalar code, the
 * lanes and blocks added by {@link VectorShapes#treeSums}), so the same bits.
 *
 * <p>Why: a row of 4096 float32 copied into a 16 KiB array, normalized there and copied out cost
 * about as much as the memory traffic and the arithmetic added up, and more: the array shares the
 * 48 KiB L1 cache with the lines streaming in and out (a pure copy through a ring of arrays ran a
 * sixth slower with 12 KiB of arrays than with 3-6 KiB, and 40 % slower with 24 KiB). Here the
 * first pass reads the row from memory one block after another (a single stream, which JDK 17 reads
 * from a direct buffer at the speed of a copy; FloatSums' four blocks side by side read a third as
 * fast) and the last pass reads it again from the cache and writes the output.
 *
 * <p>The loops keep {@link VectorRowPasses}' rules for the Vector API. Loaded only through {@link
 * VectorRowPasses}. Thread-safe: per-row scalars live in {@link RowScratch}. Allocates nothing.
 */
final class BufferRowKernels {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final int LANES = 8;
  private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

  /** The class of {@link #FLOATS}' vectors, cast to before stores and loop-carried adds. */
  private static final Class<? extends Vector<Float>> FLOAT_CLASS = FLOATS.vectorType();

  private BufferRowKernels() {}

  /**
   * Normalizes the row of {@code width} float32 at element {@code start} of {@code input} into the
   * same elements of {@code output}; false, having written nothing, for the softmaxes and for a row
   * that needs the float64 fallback (the caller then runs the array kernels, which take it). Weight
   * and bias lengths were checked; the buffers are little-endian and either the same memory or
   * disjoint.
   */
  static boolean normalize(
      RowPasses passes,
      Normalization normalization,
      ByteBuffer input,
      ByteBuffer output,
      int start,
      int width) {
    int at = Math.multiplyExact(start, Float.BYTES);
    return switch (normalization.op()) {
      case RMS_NORM, L2_NORMALIZE ->
          scaleBySumOfSquares(passes, normalization, input, output, at, width);
      case LAYER_NORM -> layerNorm(passes, normalization, input, output, at, width);
      default -> false;
    };
  }

  /**
   * RMSNorm, y = (x · (1 / sqrt(Σx² / D + eps))) · w, and L2 normalization, y = x · (1 /
   * max(sqrt(Σx²), eps)): one sum of squares and one scaling pass, the factor as {@link
   * FloatRowKernels#rmsNorm} and {@link FloatRowKernels#l2Normalize} compute it.
   */
  private static boolean scaleBySumOfSquares(
      RowPasses passes,
      Normalization normalization,
      ByteBuffer input,
      ByteBuffer output,
      int at,
      int width) {
    RowScratch scratch = RowScratch.current();
    float[] sums = scratch.rowScalars(0);
    float[] scales = scratch.rowScalars(1);
    double epsilon = normalization.epsilon();
    sumOfSquares(scratch, input, at, width, sums);
    scales[0] = sums[0];
    double smallestDominatingEpsilon;
    if (normalization.op() == Op.RMS_NORM) {
      passes.inverseSquareRoots(scales, 1, width, epsilon);
      smallestDominatingEpsilon = FloatRowKernels.SMALLEST_DOMINATING_VARIANCE_EPSILON;
    } else {
      passes.inverseNorms(scales, 1, epsilon);
      smallestDominatingEpsilon = FloatRowKernels.SMALLEST_DOMINATING_NORM_EPSILON;
    }
    if (FloatRowKernels.needsFallback(sums[0], scales[0], epsilon, smallestDominatingEpsilon)) {
      return false;
    }
    float[] weight = normalization.floatWeight();
    if (weight == null) {
      scale(input, output, at, width, scales[0]);
    } else {
      scaleWeighted(input, output, at, width, scales[0], weight);
    }
    return true;
  }

  /**
   * y = (((x − high) − low) · rstd) · γ + β with {@link LayerNormStatistics}' one pass (and its
   * second where the shift is far from the mean), as {@link FloatRowKernels#layerNorm}.
   */
  private static boolean layerNorm(
      RowPasses passes,
      Normalization normalization,
      ByteBuffer input,
      ByteBuffer output,
      int at,
      int width) {
    RowScratch scratch = RowScratch.current();
    float[] shifts = scratch.rowScalars(0);
    float[] means = scratch.rowScalars(1);
    float[] high = scratch.rowScalars(2);
    float[] low = scratch.rowScalars(3);
    float[] squares = scratch.rowScalars(4);
    float[] inverseDeviations = scratch.rowScalars(5);
    double epsilon = normalization.epsilon();
    shifts[0] = shift(input, at, width, high);
    sumsAndSquaresOfDifferences(scratch, input, at, width, shifts[0], high, squares);
    squares[0] = LayerNormStatistics.onePassDeviations(squares[0], high[0], width);
    passes.centers(shifts, high, 1, width, means, high, low);
    if (LayerNormStatistics.needsSecondPass(squares[0])) {
      squares[0] = sumOfSquaredDeviations(scratch, input, at, width, shifts[0], means[0]);
    }
    inverseDeviations[0] = squares[0];
    passes.inverseSquareRoots(inverseDeviations, 1, width, epsilon);
    if (FloatRowKernels.needsFallback(
        squares[0],
        inverseDeviations[0],
        epsilon,
        FloatRowKernels.SMALLEST_DOMINATING_VARIANCE_EPSILON)) {
      return false;
    }
    float[] gamma = normalization.floatWeight();
    float[] beta = normalization.floatBias();
    if (gamma == null && beta == null) {
      standardize(input, output, at, width, high[0], low[0], inverseDeviations[0]);
    } else {
      standardizeAffine(
          input,
          output,
          at,
          width,
          high[0],
          low[0],
          inverseDeviations[0],
          gamma == null ? scratch.ones(width) : gamma,
          beta == null ? scratch.negativeZeros(width) : beta);
    }
    return true;
  }

  /**
   * {@link FloatSums#layerNormShift} of the row (at least 8 wide), its first eight via {@code
   * eight}.
   */
  private static float shift(ByteBuffer input, int at, int width, float[] eight) {
    for (int lane = 0; lane < LANES; lane++) {
      eight[lane] = input.getFloat(at + lane * Float.BYTES);
    }
    return FloatSums.layerNormShift(eight, 0, width);
  }

  // ---- reductions: one block of SumTree after another, a register each ----

  /** {@code sums[0]} = Σ x², as {@link VectorReductions#sumsOfSquares} adds it. */
  private static void sumOfSquares(
      RowScratch scratch, ByteBuffer input, int at, int width, float[] sums) {
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(blocks * LANES);
    int index = 0;
    for (int block = 0, lane = 0; block < blocks; block++, lane += LANES) {
      int end = ends[block];
      int full = index + ((end - index) & ~(LANES - 1));
      FloatVector sum = FloatVector.zero(FLOATS);
      for (; index < full; index += LANES) {
        FloatVector x = FloatVector.fromByteBuffer(FLOATS, input, at + index * Float.BYTES, ORDER);
        sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(x.mul(x));
      }
      ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, lane);
      for (int tail = lane; index < end; index++, tail++) {
        float x = input.getFloat(at + index * Float.BYTES);
        lanes[tail] += x * x;
      }
    }
    VectorShapes.treeSums(scratch, tree, lanes, 1, sums);
  }

  /**
   * {@code sums[0]} = Σ (x − shift) and {@code squares[0]} = Σ (x − shift)², as {@link
   * VectorLayerNorm#sumsAndSquaresOfDifferences} adds them.
   */
  private static void sumsAndSquaresOfDifferences(
      RowScratch scratch,
      ByteBuffer input,
      int at,
      int width,
      float shift,
      float[] sums,
      float[] squares) {
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] sumLanes = scratch.lanes(blocks * LANES);
    float[] squareLanes = scratch.squareLanes(blocks * LANES);
    int index = 0;
    for (int block = 0, lane = 0; block < blocks; block++, lane += LANES) {
      int end = ends[block];
      int full = index + ((end - index) & ~(LANES - 1));
      FloatVector sum = FloatVector.zero(FLOATS);
      FloatVector square = FloatVector.zero(FLOATS);
      for (; index < full; index += LANES) {
        FloatVector difference =
            FloatVector.fromByteBuffer(FLOATS, input, at + index * Float.BYTES, ORDER)
                .sub(FloatVector.broadcast(FLOATS, shift));
        sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(difference);
        square = ((FloatVector) FLOAT_CLASS.cast(square)).add(difference.mul(difference));
      }
      ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(sumLanes, lane);
      ((FloatVector) FLOAT_CLASS.cast(square)).intoArray(squareLanes, lane);
      for (int tail = lane; index < end; index++, tail++) {
        float difference = input.getFloat(at + index * Float.BYTES) - shift;
        sumLanes[tail] += difference;
        squareLanes[tail] += difference * difference;
      }
    }
    VectorShapes.treeSums(scratch, tree, sumLanes, 1, sums);
    VectorShapes.treeSums(scratch, tree, squareLanes, 1, squares);
  }

  /** Σ ((x − shift) − center)², as {@link VectorLayerNorm#sumOfSquaredDeviations} adds it. */
  private static float sumOfSquaredDeviations(
      RowScratch scratch, ByteBuffer input, int at, int width, float shift, float center) {
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(blocks * LANES);
    int index = 0;
    for (int block = 0, lane = 0; block < blocks; block++, lane += LANES) {
      int end = ends[block];
      int full = index + ((end - index) & ~(LANES - 1));
      FloatVector sum = FloatVector.zero(FLOATS);
      for (; index < full; index += LANES) {
        FloatVector deviation =
            FloatVector.fromByteBuffer(FLOATS, input, at + index * Float.BYTES, ORDER)
                .sub(FloatVector.broadcast(FLOATS, shift))
                .sub(FloatVector.broadcast(FLOATS, center));
        sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(deviation.mul(deviation));
      }
      ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, lane);
      for (int tail = lane; index < end; index++, tail++) {
        float deviation = input.getFloat(at + index * Float.BYTES) - shift - center;
        lanes[tail] += deviation * deviation;
      }
    }
    return tree.sum(lanes, 0);
  }

  // ---- element-wise passes, buffer to buffer, the tail in scalar code ----

  /** y = x · scale. */
  private static void scale(ByteBuffer input, ByteBuffer output, int at, int width, float scale) {
    int full = width & ~(LANES - 1);
    int index = 0;
    for (; index < full; index += LANES) {
      int byteIndex = at + index * Float.BYTES;
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromByteBuffer(FLOATS, input, byteIndex, ORDER)
                      .mul(FloatVector.broadcast(FLOATS, scale))))
          .intoByteBuffer(output, byteIndex, ORDER);
    }
    for (; index < width; index++) {
      int byteIndex = at + index * Float.BYTES;
      output.putFloat(byteIndex, input.getFloat(byteIndex) * scale);
    }
  }

  /** y = (x · scale) · w. */
  private static void scaleWeighted(
      ByteBuffer input, ByteBuffer output, int at, int width, float scale, float[] weight) {
    int full = width & ~(LANES - 1);
    int index = 0;
    for (; index < full; index += LANES) {
      int byteIndex = at + index * Float.BYTES;
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromByteBuffer(FLOATS, input, byteIndex, ORDER)
                      .mul(FloatVector.broadcast(FLOATS, scale))
                      .mul(FloatVector.fromArray(FLOATS, weight, index))))
          .intoByteBuffer(output, byteIndex, ORDER);
    }
    for (; index < width; index++) {
      int byteIndex = at + index * Float.BYTES;
      output.putFloat(byteIndex, input.getFloat(byteIndex) * scale * weight[index]);
    }
  }

  /** y = ((x − high) − low) · inverseDeviation. */
  private static void standardize(
      ByteBuffer input,
      ByteBuffer output,
      int at,
      int width,
      float high,
      float low,
      float inverseDeviation) {
    int full = width & ~(LANES - 1);
    int index = 0;
    for (; index < full; index += LANES) {
      int byteIndex = at + index * Float.BYTES;
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromByteBuffer(FLOATS, input, byteIndex, ORDER)
                      .sub(FloatVector.broadcast(FLOATS, high))
                      .sub(FloatVector.broadcast(FLOATS, low))
                      .mul(FloatVector.broadcast(FLOATS, inverseDeviation))))
          .intoByteBuffer(output, byteIndex, ORDER);
    }
    for (; index < width; index++) {
      int byteIndex = at + index * Float.BYTES;
      output.putFloat(byteIndex, (input.getFloat(byteIndex) - high - low) * inverseDeviation);
    }
  }

  /** y = (((x − high) − low) · inverseDeviation) · γ + β. */
  private static void standardizeAffine(
      ByteBuffer input,
      ByteBuffer output,
      int at,
      int width,
      float high,
      float low,
      float inverseDeviation,
      float[] gamma,
      float[] beta) {
    int full = width & ~(LANES - 1);
    int index = 0;
    for (; index < full; index += LANES) {
      int byteIndex = at + index * Float.BYTES;
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromByteBuffer(FLOATS, input, byteIndex, ORDER)
                      .sub(FloatVector.broadcast(FLOATS, high))
                      .sub(FloatVector.broadcast(FLOATS, low))
                      .mul(FloatVector.broadcast(FLOATS, inverseDeviation))
                      .mul(FloatVector.fromArray(FLOATS, gamma, index))
                      .add(FloatVector.fromArray(FLOATS, beta, index))))
          .intoByteBuffer(output, byteIndex, ORDER);
    }
    for (; index < width; index++) {
      int byteIndex = at + index * Float.BYTES;
      output.putFloat(
          byteIndex,
          (input.getFloat(byteIndex) - high - low) * inverseDeviation * gamma[index] + beta[index]);
    }
  }
}

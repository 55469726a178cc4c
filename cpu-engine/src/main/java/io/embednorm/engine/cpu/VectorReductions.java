package io.embednorm.engine.cpu;

import static io.embednorm.engine.cpu.VectorShapes.BLOCK;
import static io.embednorm.engine.cpu.VectorShapes.DOUBLES;
import static io.embednorm.engine.cpu.VectorShapes.DOUBLE_LANES;
import static io.embednorm.engine.cpu.VectorShapes.FLOATS;
import static io.embednorm.engine.cpu.VectorShapes.FLOAT_CLASS;
import static io.embednorm.engine.cpu.VectorShapes.FLOAT_LANES;
import static io.embednorm.engine.cpu.VectorShapes.INTS;
import static io.embednorm.engine.cpu.VectorShapes.STEP;

import java.util.Arrays;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;

/**
 * The reductions of {@link VectorRowPasses}: the maxima and the sums of squares of a group of
 * float32 rows, the per-row factors of RMSNorm and L2 normalization computed from those sums four
 * rows at a time in float64, the screen for the float64 fallback, and the float64 maximum and sum
 * of squares of a row. Each sum is added in {@link FloatSums}' (or {@link DoubleSums}') order, so
 * it has the scalar passes' bits. Keeps {@link VectorRowPasses}' rules for the Vector API.
 */
final class VectorReductions {
  private VectorReductions() {}

  // ---- float32 reductions of a group of rows ----
  //
  // Each method is one loop nest over the rows of the group and the blocks of each row
  // (SumTree: FloatSums' blocks, in order): a register of eight lanes per block, stored to the
  // per-thread array RowScratch.lanes(); the lanes and blocks are then added in scalar code in
  // FloatSums' order (VectorRowPasses says why no vector leaves a method). One pass over a
  // whole group pays one call and one lane combine per block instead of a recursion and lane
  // extractions per row.

  static void maxima(float[] values, int offset, int width, int count, float[] maxima) {
    float[] lanes = RowScratch.current().lanes(count * FLOAT_LANES);
    if (VectorShapes.isFlat(width)) {
      Arrays.fill(lanes, 0, count * FLOAT_LANES, Float.NEGATIVE_INFINITY);
      int perRow = width / STEP;
      int left = perRow;
      int at = 0;
      for (int index = offset, end = offset + count * width; index < end; index += STEP) {
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.fromArray(FLOATS, lanes, at)
                        .max(FloatVector.fromArray(FLOATS, values, index))
                        .max(FloatVector.fromArray(FLOATS, values, index + 8))
                        .max(FloatVector.fromArray(FLOATS, values, index + 16))
                        .max(FloatVector.fromArray(FLOATS, values, index + 24))))
            .intoArray(lanes, at);
        if (--left == 0) {
          left = perRow;
          at += FLOAT_LANES;
        }
      }
      VectorShapes.maximaOfLanes(lanes, count, maxima);
      return;
    }
    int full = width & ~(FLOAT_LANES - 1);
    int fullSteps = width & ~(STEP - 1);
    for (int row = 0, start = offset; row < count; row++, start += width) {
      // Max is exact and symmetric (NaN wins, +0 over −0): any order gives the scalar value, so
      // four registers take turns, four chains of max instead of one.
      FloatVector maximum = FloatVector.broadcast(FLOATS, values[start]);
      FloatVector second = maximum;
      FloatVector third = maximum;
      FloatVector fourth = maximum;
      int index = start;
      for (int end = start + fullSteps; index < end; index += STEP) {
        maximum =
            ((FloatVector) FLOAT_CLASS.cast(maximum))
                .max(FloatVector.fromArray(FLOATS, values, index));
        second =
            ((FloatVector) FLOAT_CLASS.cast(second))
                .max(FloatVector.fromArray(FLOATS, values, index + 8));
        third =
            ((FloatVector) FLOAT_CLASS.cast(third))
                .max(FloatVector.fromArray(FLOATS, values, index + 16));
        fourth =
            ((FloatVector) FLOAT_CLASS.cast(fourth))
                .max(FloatVector.fromArray(FLOATS, values, index + 24));
      }
      maximum =
          ((FloatVector) FLOAT_CLASS.cast(maximum))
              .max(FLOAT_CLASS.cast(second))
              .max(((FloatVector) FLOAT_CLASS.cast(third)).max(FLOAT_CLASS.cast(fourth)));
      for (int end = start + full; index < end; index += FLOAT_LANES) {
        maximum =
            ((FloatVector) FLOAT_CLASS.cast(maximum))
                .max(FloatVector.fromArray(FLOATS, values, index));
      }
      ((FloatVector) FLOAT_CLASS.cast(maximum)).intoArray(lanes, row * FLOAT_LANES);
      // The tail, element j to lane j, in scalar code (VectorRowPasses says why).
      for (int lane = row * FLOAT_LANES, end = start + width; index < end; index++, lane++) {
        lanes[lane] = Math.max(lanes[lane], values[index]);
      }
    }
    VectorShapes.maximaOfLanes(lanes, count, maxima);
  }

  static void sumsOfSquares(float[] values, int offset, int width, int count, float[] sums) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(count * blocks * FLOAT_LANES);
    if (width == STEP) {
      for (int row = 0, index = offset; row < count; row++, index += STEP) {
        FloatVector a = FloatVector.fromArray(FLOATS, values, index);
        FloatVector b = FloatVector.fromArray(FLOATS, values, index + 8);
        FloatVector c = FloatVector.fromArray(FLOATS, values, index + 16);
        FloatVector d = FloatVector.fromArray(FLOATS, values, index + 24);
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.zero(FLOATS)
                        .add(a.mul(a))
                        .add(b.mul(b))
                        .add(c.mul(c))
                        .add(d.mul(d))))
            .intoArray(lanes, row * FLOAT_LANES);
      }
      VectorShapes.sumsOfLanes(lanes, count, sums);
      return;
    }
    if (VectorShapes.isFlat(width)) {
      // A register per row, as in sumsOfExponentials.
      for (int row = 0, start = offset; row < count; row++, start += width) {
        FloatVector sum = FloatVector.zero(FLOATS);
        for (int index = start, end = start + width; index < end; index += STEP) {
          FloatVector a = FloatVector.fromArray(FLOATS, values, index);
          FloatVector b = FloatVector.fromArray(FLOATS, values, index + 8);
          FloatVector c = FloatVector.fromArray(FLOATS, values, index + 16);
          FloatVector d = FloatVector.fromArray(FLOATS, values, index + 24);
          sum =
              ((FloatVector) FLOAT_CLASS.cast(sum))
                  .add(a.mul(a))
                  .add(b.mul(b))
                  .add(c.mul(c))
                  .add(d.mul(d));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, row * FLOAT_LANES);
      }
      VectorShapes.sumsOfLanes(lanes, count, sums);
      return;
    }
    int uniform = tree.uniformLength();
    int at = 0;
    for (int row = 0, start = offset; row < count; row++, start += width) {
      int index = start;
      int block = 0;
      for (; uniform > 0 && block + 4 <= blocks; block += 4, at += 4 * FLOAT_LANES) {
        FloatVector a = FloatVector.zero(FLOATS);
        FloatVector b = FloatVector.zero(FLOATS);
        FloatVector c = FloatVector.zero(FLOATS);
        FloatVector d = FloatVector.zero(FLOATS);
        for (int end = index + uniform; index < end; index += FLOAT_LANES) {
          FloatVector x = FloatVector.fromArray(FLOATS, values, index);
          FloatVector y = FloatVector.fromArray(FLOATS, values, index + uniform);
          FloatVector z = FloatVector.fromArray(FLOATS, values, index + 2 * uniform);
          FloatVector w = FloatVector.fromArray(FLOATS, values, index + 3 * uniform);
          a = ((FloatVector) FLOAT_CLASS.cast(a)).add(x.mul(x));
          b = ((FloatVector) FLOAT_CLASS.cast(b)).add(y.mul(y));
          c = ((FloatVector) FLOAT_CLASS.cast(c)).add(z.mul(z));
          d = ((FloatVector) FLOAT_CLASS.cast(d)).add(w.mul(w));
        }
        index += 3 * uniform;
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(lanes, at);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(lanes, at + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(lanes, at + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(lanes, at + 24);
      }
      for (; block < blocks; block++, at += FLOAT_LANES) {
        int end = start + ends[block];
        int full = index + ((end - index) & ~(FLOAT_LANES - 1));
        FloatVector sum = FloatVector.zero(FLOATS);
        for (; index < full; index += FLOAT_LANES) {
          FloatVector value = FloatVector.fromArray(FLOATS, values, index);
          sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(value.mul(value));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, at);
        // The tail, element j to lane j, in scalar code (VectorRowPasses says why).
        for (int lane = at; index < end; index++, lane++) {
          lanes[lane] += values[index] * values[index];
        }
      }
    }
    VectorShapes.treeSums(scratch, tree, lanes, count, sums);
  }

  /**
   * max |x| of each row, as the non-flat loop of {@link #maxima}: max is exact and symmetric (NaN
   * wins), so four registers taking turns give {@link FloatSums#maximumMagnitude}'s value.
   */
  static void maximaOfMagnitudes(float[] values, int offset, int width, int count, float[] maxima) {
    float[] lanes = RowScratch.current().lanes(count * FLOAT_LANES);
    int full = width & ~(FLOAT_LANES - 1);
    int fullSteps = width & ~(STEP - 1);
    for (int row = 0, start = offset; row < count; row++, start += width) {
      FloatVector maximum = FloatVector.zero(FLOATS);
      FloatVector second = maximum;
      FloatVector third = maximum;
      FloatVector fourth = maximum;
      int index = start;
      for (int end = start + fullSteps; index < end; index += STEP) {
        maximum =
            ((FloatVector) FLOAT_CLASS.cast(maximum))
                .max(FloatVector.fromArray(FLOATS, values, index).abs());
        second =
            ((FloatVector) FLOAT_CLASS.cast(second))
                .max(FloatVector.fromArray(FLOATS, values, index + 8).abs());
        third =
            ((FloatVector) FLOAT_CLASS.cast(third))
                .max(FloatVector.fromArray(FLOATS, values, index + 16).abs());
        fourth =
            ((FloatVector) FLOAT_CLASS.cast(fourth))
                .max(FloatVector.fromArray(FLOATS, values, index + 24).abs());
      }
      maximum =
          ((FloatVector) FLOAT_CLASS.cast(maximum))
              .max(FLOAT_CLASS.cast(second))
              .max(((FloatVector) FLOAT_CLASS.cast(third)).max(FLOAT_CLASS.cast(fourth)));
      for (int end = start + full; index < end; index += FLOAT_LANES) {
        maximum =
            ((FloatVector) FLOAT_CLASS.cast(maximum))
                .max(FloatVector.fromArray(FLOATS, values, index).abs());
      }
      ((FloatVector) FLOAT_CLASS.cast(maximum)).intoArray(lanes, row * FLOAT_LANES);
      // The tail, element j to lane j, in scalar code (VectorRowPasses says why).
      for (int lane = row * FLOAT_LANES, end = start + width; index < end; index++, lane++) {
        lanes[lane] = Math.max(lanes[lane], Math.abs(values[index]));
      }
    }
    VectorShapes.maximaOfLanes(lanes, count, maxima);
  }

  /**
   * Σ |x| of each row in {@link FloatSums#sumOfMagnitudes}' order: a register per block, block by
   * block (the general loop of {@link #sumsOfSquares}), added by {@link SumTree}.
   */
  static void sumsOfMagnitudes(float[] values, int offset, int width, int count, float[] sums) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(count * blocks * FLOAT_LANES);
    int at = 0;
    for (int row = 0, start = offset; row < count; row++, start += width) {
      int index = start;
      for (int block = 0; block < blocks; block++, at += FLOAT_LANES) {
        int end = start + ends[block];
        int full = index + ((end - index) & ~(FLOAT_LANES - 1));
        FloatVector sum = FloatVector.zero(FLOATS);
        for (; index < full; index += FLOAT_LANES) {
          sum =
              ((FloatVector) FLOAT_CLASS.cast(sum))
                  .add(FloatVector.fromArray(FLOATS, values, index).abs());
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, at);
        // The tail, element j to lane j, in scalar code (VectorRowPasses says why).
        for (int lane = at; index < end; index++, lane++) {
          lanes[lane] += Math.abs(values[index]);
        }
      }
    }
    VectorShapes.treeSums(scratch, tree, lanes, count, sums);
  }

  // ---- per-row scalars of a group of rows, four rows at a time in float64 ----
  //
  // The divisions and square roots run on DoubleVector, widened and narrowed through a double
  // array by plain casts (exact one way, rounded once the other). A cast is a short chain of its
  // own per row, while scalar division and square root would chain every row to the previous one
  // through the registers they merge into (cvtss2sd, sqrtsd). No vector changes
  // shape here: C2 sometimes inlines a shape-changing conversion too late in a large compilation,
  // and the vectors it then returns are allocated.

  /**
   * Under a register of rows (rows from 768 wide come one a call) this step, {@link #inverseNorms},
   * {@link VectorExponentials#inverses} and {@link VectorLayerNorm#centers} run the scalar loops,
   * the same operations: through the float64 arrays a single row cost more than the scalar steps,
   * its scalar stores and vector loads stalling on store forwarding.
   */
  static void inverseSquareRoots(float[] values, int count, double divisor, double epsilon) {
    if (count < DOUBLE_LANES) {
      ScalarRowPasses.inverseSquareRoots(values, 0, count, divisor, epsilon);
      return;
    }
    double[] wide = VectorShapes.widen(values, count);
    if (isPowerOfTwo(divisor)) {
      // x / 2^k and x · 2^-k are the same exact value, rounded once: the same bits, no division.
      double inverse = 1.0 / divisor;
      for (int i = 0; i < count; i += DOUBLE_LANES) {
        DoubleVector root =
            DoubleVector.fromArray(DOUBLES, wide, i)
                .mul(inverse)
                .add(epsilon)
                .lanewise(VectorOperators.SQRT);
        DoubleVector.broadcast(DOUBLES, 1.0).div(root).intoArray(wide, i);
      }
      VectorShapes.narrow(wide, values, count);
      return;
    }
    for (int i = 0; i < count; i += DOUBLE_LANES) {
      DoubleVector root =
          DoubleVector.fromArray(DOUBLES, wide, i)
              .div(divisor)
              .add(epsilon)
              .lanewise(VectorOperators.SQRT);
      DoubleVector.broadcast(DOUBLES, 1.0).div(root).intoArray(wide, i);
    }
    VectorShapes.narrow(wide, values, count);
  }

  static void inverseNorms(float[] values, int count, double epsilon) {
    if (count < DOUBLE_LANES) {
      ScalarRowPasses.inverseNorms(values, 0, count, epsilon);
      return;
    }
    double[] wide = VectorShapes.widen(values, count);
    for (int i = 0; i < count; i += DOUBLE_LANES) {
      DoubleVector norm =
          DoubleVector.fromArray(DOUBLES, wide, i).lanewise(VectorOperators.SQRT).max(epsilon);
      DoubleVector.broadcast(DOUBLES, 1.0).div(norm).intoArray(wide, i);
    }
    VectorShapes.narrow(wide, values, count);
  }

  /** Widths are whole numbers, so a power of two has a single bit set. */
  private static boolean isPowerOfTwo(double divisor) {
    long whole = (long) divisor;
    return whole == divisor && whole > 0 && (whole & (whole - 1)) == 0;
  }

  /**
   * On the bits as ints, without masks: for floats of one sign, int order is float order, so each
   * test is a difference that is positive where it holds, and a row may need the fallback where the
   * largest difference is. NaN (and a stale lane past count) can only say yes, which the kernels'
   * exact check then clears.
   */
  static boolean anyUnsafe(float[] sums, float[] scales, int count, float smallest, float largest) {
    int largestBits = Float.floatToRawIntBits(largest);
    int smallestBits = Float.floatToRawIntBits(smallest);
    int normalBits = Float.floatToRawIntBits(Float.MIN_NORMAL);
    int infinityBits = Float.floatToRawIntBits(Float.POSITIVE_INFINITY);
    for (int i = 0; i < count; i += FLOAT_LANES) {
      IntVector sum = (IntVector) FloatVector.fromArray(FLOATS, sums, i).reinterpretShape(INTS, 0);
      IntVector scale =
          (IntVector) FloatVector.fromArray(FLOATS, scales, i).reinterpretShape(INTS, 0);
      IntVector excess =
          sum.sub(largestBits)
              .max(IntVector.broadcast(INTS, smallestBits).sub(sum))
              .max(IntVector.broadcast(INTS, normalBits).sub(scale))
              .max(scale.sub(infinityBits - 1));
      if (excess.reduceLanes(VectorOperators.MAX) > 0) {
        return true;
      }
    }
    return false;
  }

  // ---- float64: two 4-lane registers stand for the eight accumulators ----

  static double maximum(double[] values, int offset, int count) {
    int full = count & ~(DOUBLE_LANES - 1);
    double maximum = values[offset];
    if (full > 0) {
      DoubleVector lanes = DoubleVector.fromArray(DOUBLES, values, offset);
      for (int index = offset + DOUBLE_LANES, end = offset + full;
          index < end;
          index += DOUBLE_LANES) {
        lanes = lanes.max(DoubleVector.fromArray(DOUBLES, values, index));
      }
      maximum = Math.max(maximum, lanes.reduceLanes(VectorOperators.MAX));
    }
    for (int index = offset + full, end = offset + count; index < end; index++) {
      maximum = Math.max(maximum, values[index]);
    }
    return maximum;
  }

  static double sumOfSquares(double[] values, int offset, int count) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfSquares(values, offset, half) + sumOfSquares(values, offset + half, count - half);
    }
    DoubleVector low = DoubleVector.zero(DOUBLES);
    DoubleVector high = DoubleVector.zero(DOUBLES);
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      DoubleVector first = DoubleVector.fromArray(DOUBLES, values, index);
      DoubleVector second = DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES);
      low = low.add(first.mul(first));
      high = high.add(second.mul(second));
    }
    int rest = count - full;
    if (rest > 0) {
      VectorMask<Double> lowRest = DOUBLES.indexInRange(0, rest);
      DoubleVector first = DoubleVector.fromArray(DOUBLES, values, index, lowRest);
      low = low.add(first.mul(first), lowRest);
      if (rest > DOUBLE_LANES) {
        VectorMask<Double> highRest = DOUBLES.indexInRange(DOUBLE_LANES, rest);
        DoubleVector second =
            DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES, highRest);
        high = high.add(second.mul(second), highRest);
      }
    }
    // ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as DoubleSums.
    return ((low.lane(0) + low.lane(1)) + (low.lane(2) + low.lane(3)))
        + ((high.lane(0) + high.lane(1)) + (high.lane(2) + high.lane(3)));
  }
}

package io.embednorm.engine.cpu;

import static io.embednorm.engine.cpu.VectorShapes.BLOCK;
import static io.embednorm.engine.cpu.VectorShapes.DOUBLES;
import static io.embednorm.engine.cpu.VectorShapes.DOUBLE_LANES;
import static io.embednorm.engine.cpu.VectorShapes.FLOATS;
import static io.embednorm.engine.cpu.VectorShapes.FLOAT_CLASS;
import static io.embednorm.engine.cpu.VectorShapes.FLOAT_LANES;
import static io.embednorm.engine.cpu.VectorShapes.STEP;
import static io.embednorm.engine.cpu.VectorShapes.UPPER_OF_FOURS;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;

/**
 * LayerNorm's passes in {@link VectorRowPasses}: the shifts, the one pass of Σ (x − shift) and Σ (x
 * − shift)² ({@link LayerNormStatistics}), the second pass for rows whose shift was far from the
 * mean, the centers, rows of 32 eight at a time in one pass, and the float64 sums of a row. The
 * output pass, (((x − high) − low) · r) · γ + β, is {@link VectorElementwise#standardizeRows}.
 * Keeps {@link VectorRowPasses}' rules for the Vector API.
 */
final class VectorLayerNorm {
  private VectorLayerNorm() {}

  /**
   * Rows of 32 (with or without γ and β), up to a group at a time: the shifts and both sums as for
   * {@link LayerNormStatistics} (lanes added eight rows at a time by {@link
   * VectorShapes#sumsOfEightRows}), the statistics of eight rows in float64 registers ({@link
   * #plainStatistics}), and the output, with the scratch found once and no per-row call: at 32
   * elements a row that per-row work, not the elements, is most of LayerNorm's time. Each step runs
   * over the whole group before the next, so that the eight-row blocks' latencies overlap.
   */
  static int layerNormInEights(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      double epsilon,
      float smallest,
      float largest,
      float[] gamma,
      float[] beta) {
    if (width != STEP) {
      return 0;
    }
    RowScratch scratch = RowScratch.current();
    float[] shifts = scratch.rowScalars(0);
    float[] sums = scratch.rowScalars(1);
    float[] squares = scratch.rowScalars(2);
    float[] high = scratch.rowScalars(3);
    float[] low = scratch.rowScalars(4);
    float[] inverseDeviations = scratch.rowScalars(5);
    float[] sumLanes = scratch.lanes(FloatRowKernels.GROUP_ROWS * FLOAT_LANES);
    float[] squareLanes = scratch.squareLanes(FloatRowKernels.GROUP_ROWS * FLOAT_LANES);
    int done = 0;
    while (count - done >= FLOAT_LANES) {
      int rows = Math.min(count - done, FloatRowKernels.GROUP_ROWS) & ~(FLOAT_LANES - 1);
      int in = inputOffset + done * STEP;
      layerNormShifts(input, in, STEP, rows, shifts);
      stepDifferenceLanes(input, in, rows, shifts, sumLanes, squareLanes);
      int plain = 0;
      for (; plain < rows; plain += FLOAT_LANES) {
        VectorShapes.sumsOfEightRows(sumLanes, plain * FLOAT_LANES, FLOAT_LANES, 1f, sums, plain);
        VectorShapes.sumsOfEightRows(
            squareLanes, plain * FLOAT_LANES, FLOAT_LANES, 1f, squares, plain);
        if (!plainStatistics(
            plain,
            shifts,
            sums,
            squares,
            epsilon,
            smallest,
            largest,
            high,
            low,
            inverseDeviations)) {
          break;
        }
      }
      if (gamma == null && beta == null) {
        VectorElementwise.standardizeSteps(
            input, in, output, outputOffset + done * STEP, plain, high, low, inverseDeviations);
      } else {
        VectorElementwise.standardizeAffineSteps(
            input,
            in,
            output,
            outputOffset + done * STEP,
            plain,
            high,
            low,
            inverseDeviations,
            gamma == null ? scratch.ones(STEP) : gamma,
            beta == null ? scratch.negativeZeros(STEP) : beta);
      }
      done += plain;
      if (plain < rows) {
        break;
      }
    }
    return done;
  }

  /**
   * For the eight rows of 32 from {@code from}: {@link LayerNormStatistics#compute}'s variance,
   * {@link #centers} and {@link VectorReductions#inverseSquareRoots} with the same float64
   * operations (÷ 32 as × 2^-5: the same bits), into high, low and inverseDeviations; false,
   * leaving them unspecified, where any row would take another path there. In registers throughout:
   * through arrays, each change between scalar and vector stores and loads stalled on store
   * forwarding (about 40 % of the kernel's samples).
   */
  private static boolean plainStatistics(
      int from,
      float[] shifts,
      float[] sums,
      float[] squares,
      double epsilon,
      float smallest,
      float largest,
      float[] high,
      float[] low,
      float[] inverseDeviations) {
    double inverseWidth = 1.0 / STEP;
    FloatVector sum = FloatVector.fromArray(FLOATS, sums, from);
    FloatVector square = FloatVector.fromArray(FLOATS, squares, from);
    FloatVector shift = FloatVector.fromArray(FLOATS, shifts, from);
    DoubleVector sumLow = (DoubleVector) sum.convertShape(VectorOperators.F2D, DOUBLES, 0);
    DoubleVector sumHigh = (DoubleVector) sum.convertShape(VectorOperators.F2D, DOUBLES, 1);
    DoubleVector squareLow = (DoubleVector) square.convertShape(VectorOperators.F2D, DOUBLES, 0);
    DoubleVector squareHigh = (DoubleVector) square.convertShape(VectorOperators.F2D, DOUBLES, 1);
    DoubleVector deviationsLow = squareLow.sub(sumLow.mul(sumLow).mul(inverseWidth));
    DoubleVector deviationsHigh = squareHigh.sub(sumHigh.mul(sumHigh).mul(inverseWidth));
    // LayerNormStatistics' second pass where Σd² is not finite or (Σd)²/D is over half of it.
    if (!square.compare(VectorOperators.LT, Float.POSITIVE_INFINITY).allTrue()
        || deviationsLow.add(deviationsLow).compare(VectorOperators.LT, squareLow).anyTrue()
        || deviationsHigh.add(deviationsHigh).compare(VectorOperators.LT, squareHigh).anyTrue()) {
      return false;
    }
    FloatVector variance =
        ((FloatVector) deviationsLow.convertShape(VectorOperators.D2F, FLOATS, 0))
            .blend(
                (FloatVector) deviationsHigh.convertShape(VectorOperators.D2F, FLOATS, -1),
                UPPER_OF_FOURS);
    DoubleVector one = DoubleVector.broadcast(DOUBLES, 1.0);
    DoubleVector inverseLow =
        one.div(
            ((DoubleVector) variance.convertShape(VectorOperators.F2D, DOUBLES, 0))
                .mul(inverseWidth)
                .add(epsilon)
                .lanewise(VectorOperators.SQRT));
    DoubleVector inverseHigh =
        one.div(
            ((DoubleVector) variance.convertShape(VectorOperators.F2D, DOUBLES, 1))
                .mul(inverseWidth)
                .add(epsilon)
                .lanewise(VectorOperators.SQRT));
    FloatVector inverse =
        ((FloatVector) inverseLow.convertShape(VectorOperators.D2F, FLOATS, 0))
            .blend(
                (FloatVector) inverseHigh.convertShape(VectorOperators.D2F, FLOATS, -1),
                UPPER_OF_FOURS);
    DoubleVector centerLow =
        ((DoubleVector) shift.convertShape(VectorOperators.F2D, DOUBLES, 0))
            .add(sumLow.mul(inverseWidth));
    DoubleVector centerHigh =
        ((DoubleVector) shift.convertShape(VectorOperators.F2D, DOUBLES, 1))
            .add(sumHigh.mul(inverseWidth));
    FloatVector center =
        ((FloatVector) centerLow.convertShape(VectorOperators.D2F, FLOATS, 0))
            .blend(
                (FloatVector) centerHigh.convertShape(VectorOperators.D2F, FLOATS, -1),
                UPPER_OF_FOURS);
    ((FloatVector) FLOAT_CLASS.cast(center)).intoArray(high, from);
    FloatVector remainder =
        ((FloatVector)
                centerLow
                    .sub(center.convertShape(VectorOperators.F2D, DOUBLES, 0))
                    .convertShape(VectorOperators.D2F, FLOATS, 0))
            .blend(
                (FloatVector)
                    centerHigh
                        .sub(center.convertShape(VectorOperators.F2D, DOUBLES, 1))
                        .convertShape(VectorOperators.D2F, FLOATS, -1),
                UPPER_OF_FOURS);
    ((FloatVector) FLOAT_CLASS.cast(remainder)).intoArray(low, from);
    ((FloatVector) FLOAT_CLASS.cast(inverse)).intoArray(inverseDeviations, from);
    // FloatRowKernels' float64 fallback: the variance outside [smallest, largest], or an inverse
    // deviation that is not a normal float.
    return variance
        .compare(VectorOperators.LE, largest)
        .and(variance.compare(VectorOperators.GE, smallest))
        .and(inverse.compare(VectorOperators.GE, Float.MIN_NORMAL))
        .and(inverse.compare(VectorOperators.LT, Float.POSITIVE_INFINITY))
        .allTrue();
  }

  /**
   * Block by block ({@link SumTree}), a register per block and the block's tail in scalar code into
   * its lanes, as the other reductions. LayerNorm over rows that all take this pass (first eight
   * elements far from the rest): about 1.8 times the scalar pass's speed at width 768, 2.4 times at
   * 4096.
   */
  static float sumOfSquaredDeviations(
      float[] values, int offset, int width, float shift, float center) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(blocks * FLOAT_LANES);
    int index = offset;
    for (int block = 0, at = 0; block < blocks; block++, at += FLOAT_LANES) {
      int end = offset + ends[block];
      int full = index + ((end - index) & ~(FLOAT_LANES - 1));
      FloatVector sum = FloatVector.zero(FLOATS);
      for (; index < full; index += FLOAT_LANES) {
        FloatVector deviation =
            FloatVector.fromArray(FLOATS, values, index)
                .sub(FloatVector.broadcast(FLOATS, shift))
                .sub(FloatVector.broadcast(FLOATS, center));
        sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(deviation.mul(deviation));
      }
      ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, at);
      // The tail, element j to lane j, in scalar code (VectorRowPasses says why).
      for (int lane = at; index < end; index++, lane++) {
        float deviation = values[index] - shift - center;
        lanes[lane] += deviation * deviation;
      }
    }
    return tree.sum(lanes, 0);
  }

  /** Eight rows at a time where rows hold eight elements ({@link VectorShapes#sumsOfEightRows}). */
  static void layerNormShifts(float[] values, int offset, int width, int count, float[] shifts) {
    int row = 0;
    for (; width >= FLOAT_LANES && row + FLOAT_LANES <= count; row += FLOAT_LANES) {
      VectorShapes.sumsOfEightRows(values, offset + row * width, width, 0.125f, shifts, row);
    }
    for (; row < count; row++) {
      shifts[row] = FloatSums.layerNormShift(values, offset + row * width, width);
    }
  }

  /**
   * Three shapes, one method each (so that none holds more than two vector loops): rows of 32 (one
   * step), whose loop runs over the whole group so that the rows' short chains overlap; other flat
   * rows, a register pair per row; and the rest block by block, four equal blocks side by side
   * where a row has them.
   */
  static void sumsAndSquaresOfDifferences(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sums,
      float[] squares) {
    if (!VectorShapes.isFlat(width)) {
      sumsAndSquaresByBlocks(values, offset, width, count, shifts, sums, squares);
      return;
    }
    RowScratch scratch = RowScratch.current();
    float[] sumLanes = scratch.lanes(count * FLOAT_LANES);
    float[] squareLanes = scratch.squareLanes(count * FLOAT_LANES);
    if (width == STEP) {
      stepDifferenceLanes(values, offset, count, shifts, sumLanes, squareLanes);
    } else {
      flatDifferenceLanes(values, offset, width, count, shifts, sumLanes, squareLanes);
    }
    VectorShapes.sumsOfLanes(sumLanes, count, sums);
    VectorShapes.sumsOfLanes(squareLanes, count, squares);
  }

  /**
   * The eight lanes of Σ (x − shifts[row]) and of Σ (x − shifts[row])² of each row of 32, into
   * {@code sumLanes} and {@code squareLanes} from {@code 8 · row}: one loop over the group, so that
   * the rows' short chains overlap.
   */
  private static void stepDifferenceLanes(
      float[] values,
      int offset,
      int count,
      float[] shifts,
      float[] sumLanes,
      float[] squareLanes) {
    for (int row = 0, index = offset; row < count; row++, index += STEP) {
      FloatVector shift = FloatVector.broadcast(FLOATS, shifts[row]);
      FloatVector a = FloatVector.fromArray(FLOATS, values, index).sub(shift);
      FloatVector b = FloatVector.fromArray(FLOATS, values, index + 8).sub(shift);
      FloatVector c = FloatVector.fromArray(FLOATS, values, index + 16).sub(shift);
      FloatVector d = FloatVector.fromArray(FLOATS, values, index + 24).sub(shift);
      ((FloatVector) FLOAT_CLASS.cast(FloatVector.zero(FLOATS).add(a).add(b).add(c).add(d)))
          .intoArray(sumLanes, row * FLOAT_LANES);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.zero(FLOATS).add(a.mul(a)).add(b.mul(b)).add(c.mul(c)).add(d.mul(d))))
          .intoArray(squareLanes, row * FLOAT_LANES);
    }
  }

  /** {@link #stepDifferenceLanes} for other flat widths: a register pair per row. */
  private static void flatDifferenceLanes(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sumLanes,
      float[] squareLanes) {
    for (int row = 0, start = offset; row < count; row++, start += width) {
      FloatVector shift = FloatVector.broadcast(FLOATS, shifts[row]);
      FloatVector sum = FloatVector.zero(FLOATS);
      FloatVector square = FloatVector.zero(FLOATS);
      for (int index = start, end = start + width; index < end; index += STEP) {
        FloatVector a = FloatVector.fromArray(FLOATS, values, index).sub(shift);
        FloatVector b = FloatVector.fromArray(FLOATS, values, index + 8).sub(shift);
        FloatVector c = FloatVector.fromArray(FLOATS, values, index + 16).sub(shift);
        FloatVector d = FloatVector.fromArray(FLOATS, values, index + 24).sub(shift);
        sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(a).add(b).add(c).add(d);
        square =
            ((FloatVector) FLOAT_CLASS.cast(square))
                .add(a.mul(a))
                .add(b.mul(b))
                .add(c.mul(c))
                .add(d.mul(d));
      }
      ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(sumLanes, row * FLOAT_LANES);
      ((FloatVector) FLOAT_CLASS.cast(square)).intoArray(squareLanes, row * FLOAT_LANES);
    }
  }

  private static void sumsAndSquaresByBlocks(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sums,
      float[] squares) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] sumLanes = scratch.lanes(count * blocks * FLOAT_LANES);
    float[] squareLanes = scratch.squareLanes(count * blocks * FLOAT_LANES);
    int uniform = tree.uniformLength();
    int at = 0;
    for (int row = 0, start = offset; row < count; row++, start += width) {
      float shift = shifts[row];
      int index = start;
      int block = 0;
      for (; uniform > 0 && block + 4 <= blocks; block += 4, at += 4 * FLOAT_LANES) {
        FloatVector a = FloatVector.zero(FLOATS);
        FloatVector b = FloatVector.zero(FLOATS);
        FloatVector c = FloatVector.zero(FLOATS);
        FloatVector d = FloatVector.zero(FLOATS);
        FloatVector aa = FloatVector.zero(FLOATS);
        FloatVector bb = FloatVector.zero(FLOATS);
        FloatVector cc = FloatVector.zero(FLOATS);
        FloatVector dd = FloatVector.zero(FLOATS);
        for (int end = index + uniform; index < end; index += FLOAT_LANES) {
          FloatVector x =
              FloatVector.fromArray(FLOATS, values, index)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          FloatVector y =
              FloatVector.fromArray(FLOATS, values, index + uniform)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          FloatVector z =
              FloatVector.fromArray(FLOATS, values, index + 2 * uniform)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          FloatVector w =
              FloatVector.fromArray(FLOATS, values, index + 3 * uniform)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          a = ((FloatVector) FLOAT_CLASS.cast(a)).add(x);
          b = ((FloatVector) FLOAT_CLASS.cast(b)).add(y);
          c = ((FloatVector) FLOAT_CLASS.cast(c)).add(z);
          d = ((FloatVector) FLOAT_CLASS.cast(d)).add(w);
          aa = ((FloatVector) FLOAT_CLASS.cast(aa)).add(x.mul(x));
          bb = ((FloatVector) FLOAT_CLASS.cast(bb)).add(y.mul(y));
          cc = ((FloatVector) FLOAT_CLASS.cast(cc)).add(z.mul(z));
          dd = ((FloatVector) FLOAT_CLASS.cast(dd)).add(w.mul(w));
        }
        index += 3 * uniform;
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(sumLanes, at);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(sumLanes, at + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(sumLanes, at + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(sumLanes, at + 24);
        ((FloatVector) FLOAT_CLASS.cast(aa)).intoArray(squareLanes, at);
        ((FloatVector) FLOAT_CLASS.cast(bb)).intoArray(squareLanes, at + 8);
        ((FloatVector) FLOAT_CLASS.cast(cc)).intoArray(squareLanes, at + 16);
        ((FloatVector) FLOAT_CLASS.cast(dd)).intoArray(squareLanes, at + 24);
      }
      for (; block < blocks; block++, at += FLOAT_LANES) {
        int end = start + ends[block];
        int full = index + ((end - index) & ~(FLOAT_LANES - 1));
        FloatVector sum = FloatVector.zero(FLOATS);
        FloatVector square = FloatVector.zero(FLOATS);
        for (; index < full; index += FLOAT_LANES) {
          FloatVector difference =
              FloatVector.fromArray(FLOATS, values, index)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(difference);
          square = ((FloatVector) FLOAT_CLASS.cast(square)).add(difference.mul(difference));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(sumLanes, at);
        ((FloatVector) FLOAT_CLASS.cast(square)).intoArray(squareLanes, at);
        // The tail, element j to lane j, in scalar code (VectorRowPasses says why).
        for (int lane = at; index < end; index++, lane++) {
          float difference = values[index] - shift;
          sumLanes[lane] += difference;
          squareLanes[lane] += difference * difference;
        }
      }
    }
    VectorShapes.treeSums(scratch, tree, sumLanes, count, sums);
    VectorShapes.treeSums(scratch, tree, squareLanes, count, squares);
  }

  static void centers(
      float[] shifts,
      float[] sums,
      int count,
      double divisor,
      float[] means,
      float[] high,
      float[] low) {
    if (count < DOUBLE_LANES) {
      ScalarRowPasses.centers(shifts, sums, 0, count, divisor, means, high, low);
      return;
    }
    RowScratch scratch = RowScratch.current();
    double[] wideMeans = scratch.rowDoubles(0);
    double[] wideCenters = scratch.rowDoubles(1);
    for (int i = 0; i < count; i++) {
      wideMeans[i] = sums[i];
      wideCenters[i] = shifts[i];
    }
    for (int i = 0; i < count; i += DOUBLE_LANES) {
      DoubleVector mean = DoubleVector.fromArray(DOUBLES, wideMeans, i).div(divisor);
      mean.intoArray(wideMeans, i);
      DoubleVector.fromArray(DOUBLES, wideCenters, i).add(mean).intoArray(wideCenters, i);
    }
    for (int i = 0; i < count; i++) {
      double center = wideCenters[i];
      float centerHigh = (float) center;
      means[i] = (float) wideMeans[i];
      high[i] = centerHigh;
      low[i] = (float) (center - centerHigh);
    }
  }

  static double sumOfDifferences(double[] values, int offset, int count, double shift) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfDifferences(values, offset, half, shift)
          + sumOfDifferences(values, offset + half, count - half, shift);
    }
    DoubleVector low = DoubleVector.zero(DOUBLES);
    DoubleVector high = DoubleVector.zero(DOUBLES);
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      low = low.add(DoubleVector.fromArray(DOUBLES, values, index).sub(shift));
      high = high.add(DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES).sub(shift));
    }
    int rest = count - full;
    if (rest > 0) {
      VectorMask<Double> lowRest = DOUBLES.indexInRange(0, rest);
      low = low.add(DoubleVector.fromArray(DOUBLES, values, index, lowRest).sub(shift), lowRest);
      if (rest > DOUBLE_LANES) {
        VectorMask<Double> highRest = DOUBLES.indexInRange(DOUBLE_LANES, rest);
        high =
            high.add(
                DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES, highRest).sub(shift),
                highRest);
      }
    }
    // ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as DoubleSums.
    return ((low.lane(0) + low.lane(1)) + (low.lane(2) + low.lane(3)))
        + ((high.lane(0) + high.lane(1)) + (high.lane(2) + high.lane(3)));
  }

  static double sumOfSquaredDeviations(
      double[] values, int offset, int count, double shift, double center) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfSquaredDeviations(values, offset, half, shift, center)
          + sumOfSquaredDeviations(values, offset + half, count - half, shift, center);
    }
    DoubleVector low = DoubleVector.zero(DOUBLES);
    DoubleVector high = DoubleVector.zero(DOUBLES);
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      DoubleVector first = DoubleVector.fromArray(DOUBLES, values, index).sub(shift).sub(center);
      DoubleVector second =
          DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES).sub(shift).sub(center);
      low = low.add(first.mul(first));
      high = high.add(second.mul(second));
    }
    int rest = count - full;
    if (rest > 0) {
      VectorMask<Double> lowRest = DOUBLES.indexInRange(0, rest);
      DoubleVector first =
          DoubleVector.fromArray(DOUBLES, values, index, lowRest).sub(shift).sub(center);
      low = low.add(first.mul(first), lowRest);
      if (rest > DOUBLE_LANES) {
        VectorMask<Double> highRest = DOUBLES.indexInRange(DOUBLE_LANES, rest);
        DoubleVector second =
            DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES, highRest)
                .sub(shift)
                .sub(center);
        high = high.add(second.mul(second), highRest);
      }
    }
    // ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as DoubleSums.
    return ((low.lane(0) + low.lane(1)) + (low.lane(2) + low.lane(3)))
        + ((high.lane(0) + high.lane(1)) + (high.lane(2) + high.lane(3)));
  }
}

package io.embednorm.kernels.cpu;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The passes with the JDK Vector API (jdk.incubator.vector). Loaded only by {@link
 * RowPassSelection}, reflectively and only when the JVM has the module, so that no other class
 * links against it.
 *
 * <p>Always 256-bit registers, whatever the machine prefers: eight float32 lanes are exactly the
 * eight accumulators of {@link FloatSums} (element i in lane i % 8), and float64 uses two 4-lane
 * registers as lanes 0–3 and 4–7. Blocks, split points, the final pairwise combination and every
 * element-wise operation are those of {@link ScalarRowPasses}, so both give the same bits; a row
 * tail shorter than a register goes through masked lanes (reductions) or scalar code
 * (element-wise).
 */
final class VectorRowPasses implements RowPasses {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final VectorSpecies<Double> DOUBLES = DoubleVector.SPECIES_256;
  private static final VectorSpecies<Float> FOUR_FLOATS = FloatVector.SPECIES_128;
  private static final int FLOAT_LANES = 8;
  private static final int DOUBLE_LANES = 4;
  private static final int BLOCK = FloatSums.BLOCK;

  private VectorRowPasses() {}

  /**
   * The SIMD passes, or null when this machine's preferred vectors are narrower than 256 bits
   * (where 256-bit ones would be emulated and slower than scalar code). Called reflectively.
   */
  static RowPasses createIfSupported() {
    if (FloatVector.SPECIES_PREFERRED.vectorBitSize() < 256
        || DoubleVector.SPECIES_PREFERRED.vectorBitSize() < 256) {
      return null;
    }
    return new VectorRowPasses();
  }

  @Override
  public String description() {
    return "java simd, 256-bit";
  }

  // ---- float32 reductions ----

  @Override
  public float maximum(float[] values, int offset, int count) {
    int full = count & ~(FLOAT_LANES - 1);
    float maximum = values[offset];
    if (full > 0) {
      FloatVector lanes = FloatVector.fromArray(FLOATS, values, offset);
      for (int index = offset + FLOAT_LANES, end = offset + full; index < end; index += 8) {
        lanes = lanes.max(FloatVector.fromArray(FLOATS, values, index));
      }
      maximum = Math.max(maximum, lanes.reduceLanes(VectorOperators.MAX));
    }
    for (int index = offset + full, end = offset + count; index < end; index++) {
      maximum = Math.max(maximum, values[index]);
    }
    return maximum;
  }

  @Override
  public float sumOfSquares(float[] values, int offset, int count) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfSquares(values, offset, half) + sumOfSquares(values, offset + half, count - half);
    }
    FloatVector lanes = FloatVector.zero(FLOATS);
    int full = count & ~(FLOAT_LANES - 1);
    int index = offset;
    for (int end = offset + full; index < end; index += FLOAT_LANES) {
      FloatVector value = FloatVector.fromArray(FLOATS, values, index);
      lanes = lanes.add(value.mul(value));
    }
    if (full < count) {
      VectorMask<Float> rest = FLOATS.indexInRange(0, count - full);
      FloatVector value = FloatVector.fromArray(FLOATS, values, index, rest);
      lanes = lanes.add(value.mul(value), rest);
    }
    return combine(lanes);
  }

  @Override
  public float sumOfDifferences(float[] values, int offset, int count, float shift) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfDifferences(values, offset, half, shift)
          + sumOfDifferences(values, offset + half, count - half, shift);
    }
    FloatVector lanes = FloatVector.zero(FLOATS);
    int full = count & ~(FLOAT_LANES - 1);
    int index = offset;
    for (int end = offset + full; index < end; index += FLOAT_LANES) {
      lanes = lanes.add(FloatVector.fromArray(FLOATS, values, index).sub(shift));
    }
    if (full < count) {
      VectorMask<Float> rest = FLOATS.indexInRange(0, count - full);
      lanes = lanes.add(FloatVector.fromArray(FLOATS, values, index, rest).sub(shift), rest);
    }
    return combine(lanes);
  }

  @Override
  public float sumOfSquaredDeviations(
      float[] values, int offset, int count, float shift, float center) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfSquaredDeviations(values, offset, half, shift, center)
          + sumOfSquaredDeviations(values, offset + half, count - half, shift, center);
    }
    FloatVector lanes = FloatVector.zero(FLOATS);
    int full = count & ~(FLOAT_LANES - 1);
    int index = offset;
    for (int end = offset + full; index < end; index += FLOAT_LANES) {
      FloatVector deviation = FloatVector.fromArray(FLOATS, values, index).sub(shift).sub(center);
      lanes = lanes.add(deviation.mul(deviation));
    }
    if (full < count) {
      VectorMask<Float> rest = FLOATS.indexInRange(0, count - full);
      FloatVector deviation =
          FloatVector.fromArray(FLOATS, values, index, rest).sub(shift).sub(center);
      lanes = lanes.add(deviation.mul(deviation), rest);
    }
    return combine(lanes);
  }

  @Override
  public float sumOfExponentials(float[] values, int offset, int count, float maximum) {
    return storeExponentials(values, offset, null, 0, count, maximum);
  }

  /**
   * With a null output, only sums. The exponential ({@link FloatExponential#exp} lane by lane, the
   * same operations in the same order) is written out in the loop rather than called: C2 will not
   * inline a callee whose own compiled code is large, and a vector method that is not inlined
   * allocates its vectors, which made it slower than scalar code.
   */
  @Override
  public float storeExponentials(
      float[] input, int inputOffset, float[] output, int outputOffset, int count, float maximum) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return storeExponentials(input, inputOffset, output, outputOffset, half, maximum)
          + storeExponentials(
              input,
              inputOffset + half,
              output,
              output == null ? 0 : outputOffset + half,
              count - half,
              maximum);
    }
    FloatVector lanes = FloatVector.zero(FLOATS);
    int full = count & ~(FLOAT_LANES - 1);
    int i = 0;
    for (; i < full; i += FLOAT_LANES) {
      FloatVector x = FloatVector.fromArray(FLOATS, input, inputOffset + i).sub(maximum);
      FloatVector rounded = x.mul(FloatExponential.LOG2_E).add(FloatExponential.ROUNDING);
      FloatVector n = rounded.sub(FloatExponential.ROUNDING);
      FloatVector r = x.sub(n.mul(FloatExponential.LN2_HIGH)).sub(n.mul(FloatExponential.LN2_LOW));
      FloatVector polynomial =
          r.mul(FloatExponential.P0)
              .add(FloatExponential.P1)
              .mul(r)
              .add(FloatExponential.P2)
              .mul(r)
              .add(FloatExponential.P3)
              .mul(r)
              .add(FloatExponential.P4)
              .mul(r)
              .add(FloatExponential.P5);
      FloatVector mantissa = polynomial.mul(r.mul(r)).add(r).add(1f);
      FloatVector power =
          ((IntVector) rounded.reinterpretAsInts())
              .add(127 - FloatExponential.ROUNDING_BITS)
              .lanewise(VectorOperators.LSHL, 23)
              .reinterpretAsFloats();
      FloatVector exponential = mantissa.mul(power).blend(0f, x.lt(FloatExponential.LOWEST));
      if (output != null) {
        exponential.intoArray(output, outputOffset + i);
      }
      lanes = lanes.add(exponential);
    }
    // The tail, element j to lane j, in scalar code: the same bits, no masks, no allocation.
    for (int lane = 0; i < count; i++, lane++) {
      float exponential = FloatExponential.exp(input[inputOffset + i] - maximum);
      if (output != null) {
        output[outputOffset + i] = exponential;
      }
      lanes = lanes.withLane(lane, lanes.lane(lane) + exponential);
    }
    return combine(lanes);
  }

  /** ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as {@link FloatSums}. */
  private static float combine(FloatVector lanes) {
    return ((lanes.lane(0) + lanes.lane(1)) + (lanes.lane(2) + lanes.lane(3)))
        + ((lanes.lane(4) + lanes.lane(5)) + (lanes.lane(6) + lanes.lane(7)));
  }

  // ---- float32 element-wise passes ----

  @Override
  public void scale(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float scale,
      float[] weight) {
    int full = count & ~(FLOAT_LANES - 1);
    int i = 0;
    if (weight == null) {
      for (; i < full; i += FLOAT_LANES) {
        FloatVector.fromArray(FLOATS, input, inputOffset + i)
            .mul(scale)
            .intoArray(output, outputOffset + i);
      }
      for (; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale;
      }
    } else {
      for (; i < full; i += FLOAT_LANES) {
        FloatVector.fromArray(FLOATS, input, inputOffset + i)
            .mul(scale)
            .mul(FloatVector.fromArray(FLOATS, weight, i))
            .intoArray(output, outputOffset + i);
      }
      for (; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale * weight[i];
      }
    }
  }

  @Override
  public void standardize(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float centerHigh,
      float centerLow,
      float inverseDeviation,
      float[] gamma,
      float[] beta) {
    int full = count & ~(FLOAT_LANES - 1);
    int i = 0;
    for (; i < full; i += FLOAT_LANES) {
      FloatVector value =
          FloatVector.fromArray(FLOATS, input, inputOffset + i)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      if (gamma != null) {
        value = value.mul(FloatVector.fromArray(FLOATS, gamma, i));
      }
      if (beta != null) {
        value = value.add(FloatVector.fromArray(FLOATS, beta, i));
      }
      value.intoArray(output, outputOffset + i);
    }
    for (; i < count; i++) {
      float value = (input[inputOffset + i] - centerHigh - centerLow) * inverseDeviation;
      if (gamma != null) {
        value *= gamma[i];
      }
      if (beta != null) {
        value += beta[i];
      }
      output[outputOffset + i] = value;
    }
  }

  @Override
  public void subtract(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float maximum,
      float logSum) {
    int full = count & ~(FLOAT_LANES - 1);
    int i = 0;
    for (; i < full; i += FLOAT_LANES) {
      FloatVector.fromArray(FLOATS, input, inputOffset + i)
          .sub(maximum)
          .sub(logSum)
          .intoArray(output, outputOffset + i);
    }
    for (; i < count; i++) {
      output[outputOffset + i] = input[inputOffset + i] - maximum - logSum;
    }
  }

  // ---- per-row scalars of a group of rows, four rows at a time in float64 ----

  @Override
  public void inverseSquareRoots(float[] values, int count, double divisor, double epsilon) {
    int i = 0;
    for (; i + DOUBLE_LANES <= count; i += DOUBLE_LANES) {
      DoubleVector root = widen(values, i).div(divisor).add(epsilon).lanewise(VectorOperators.SQRT);
      narrow(DoubleVector.broadcast(DOUBLES, 1.0).div(root), values, i);
    }
    ScalarRowPasses.inverseSquareRoots(values, i, count, divisor, epsilon);
  }

  @Override
  public void inverseNorms(float[] values, int count, double epsilon) {
    int i = 0;
    for (; i + DOUBLE_LANES <= count; i += DOUBLE_LANES) {
      DoubleVector norm = widen(values, i).lanewise(VectorOperators.SQRT).max(epsilon);
      narrow(DoubleVector.broadcast(DOUBLES, 1.0).div(norm), values, i);
    }
    ScalarRowPasses.inverseNorms(values, i, count, epsilon);
  }

  @Override
  public void inverses(float[] values, int count) {
    int i = 0;
    for (; i + DOUBLE_LANES <= count; i += DOUBLE_LANES) {
      narrow(DoubleVector.broadcast(DOUBLES, 1.0).div(widen(values, i)), values, i);
    }
    ScalarRowPasses.inverses(values, i, count);
  }

  /**
   * Four floats as four doubles (exact). The conversions also spare the scalar code's {@code
   * cvtss2sd}, whose merge into a register the JIT reuses chains every row to the one before.
   */
  private static DoubleVector widen(float[] values, int index) {
    return (DoubleVector)
        FloatVector.fromArray(FOUR_FLOATS, values, index)
            .convertShape(VectorOperators.F2D, DOUBLES, 0);
  }

  /** Four doubles rounded to float once, into {@code values[index, index + 4)}. */
  private static void narrow(DoubleVector vector, float[] values, int index) {
    ((FloatVector) vector.convertShape(VectorOperators.D2F, FOUR_FLOATS, 0))
        .intoArray(values, index);
  }

  // ---- float64: two 4-lane registers stand for the eight accumulators ----

  @Override
  public double maximum(double[] values, int offset, int count) {
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

  @Override
  public double sumOfSquares(double[] values, int offset, int count) {
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
    return combine(low, high);
  }

  @Override
  public double sumOfDifferences(double[] values, int offset, int count, double shift) {
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
    return combine(low, high);
  }

  @Override
  public double sumOfSquaredDeviations(
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
    return combine(low, high);
  }

  /** ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as {@link DoubleSums}. */
  private static double combine(DoubleVector low, DoubleVector high) {
    return ((low.lane(0) + low.lane(1)) + (low.lane(2) + low.lane(3)))
        + ((high.lane(0) + high.lane(1)) + (high.lane(2) + high.lane(3)));
  }

  // ---- float64 element-wise passes ----

  @Override
  public void scale(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double scale,
      double[] weight) {
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    if (weight == null) {
      for (; i < full; i += DOUBLE_LANES) {
        DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
            .mul(scale)
            .intoArray(output, outputOffset + i);
      }
      for (; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale;
      }
    } else {
      for (; i < full; i += DOUBLE_LANES) {
        DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
            .mul(scale)
            .mul(DoubleVector.fromArray(DOUBLES, weight, i))
            .intoArray(output, outputOffset + i);
      }
      for (; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale * weight[i];
      }
    }
  }

  @Override
  public void standardize(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double shift,
      double mean,
      double inverseDeviation,
      double[] gamma,
      double[] beta) {
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    for (; i < full; i += DOUBLE_LANES) {
      DoubleVector value =
          DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
              .sub(shift)
              .sub(mean)
              .mul(inverseDeviation);
      if (gamma != null) {
        value = value.mul(DoubleVector.fromArray(DOUBLES, gamma, i));
      }
      if (beta != null) {
        value = value.add(DoubleVector.fromArray(DOUBLES, beta, i));
      }
      value.intoArray(output, outputOffset + i);
    }
    for (; i < count; i++) {
      double value = (input[inputOffset + i] - shift - mean) * inverseDeviation;
      if (gamma != null) {
        value *= gamma[i];
      }
      if (beta != null) {
        value += beta[i];
      }
      output[outputOffset + i] = value;
    }
  }

  @Override
  public void subtract(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double maximum,
      double logSum) {
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    for (; i < full; i += DOUBLE_LANES) {
      DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
          .sub(maximum)
          .sub(logSum)
          .intoArray(output, outputOffset + i);
    }
    for (; i < count; i++) {
      output[outputOffset + i] = input[inputOffset + i] - maximum - logSum;
    }
  }
}

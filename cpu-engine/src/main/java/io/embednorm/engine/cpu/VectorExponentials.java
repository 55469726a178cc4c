package io.embednorm.engine.cpu;

import static io.embednorm.engine.cpu.VectorShapes.DOUBLES;
import static io.embednorm.engine.cpu.VectorShapes.DOUBLE_LANES;
import static io.embednorm.engine.cpu.VectorShapes.FLOATS;
import static io.embednorm.engine.cpu.VectorShapes.FLOAT_CLASS;
import static io.embednorm.engine.cpu.VectorShapes.FLOAT_LANES;
import static io.embednorm.engine.cpu.VectorShapes.INTS;
import static io.embednorm.engine.cpu.VectorShapes.STEP;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.Vector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * softmax's and log_softmax's passes in {@link VectorRowPasses}: exp(x − max) stored and summed in
 * {@link FloatSums}' order ({@link FloatExponential#exp} lane by lane, on 256- or 512-bit
 * registers), the inverses of the sums and their logarithms ({@link FloatLogarithm#log} lane by
 * lane), with the scalar code's operations in the same order. log_softmax's last pass is {@link
 * VectorElementwise#subtractRows}. Keeps {@link VectorRowPasses}' rules for the Vector API.
 */
final class VectorExponentials {
  /** The exponentials' registers where they are wide: sixteen float32 lanes. */
  private static final VectorSpecies<Float> WIDE_FLOATS = FloatVector.SPECIES_512;

  private static final VectorSpecies<Integer> WIDE_INTS = IntVector.SPECIES_512;

  private static final int WIDE_LANES = 16;

  /**
   * The class of {@link #WIDE_FLOATS}' vectors, for the same casts ({@link
   * VectorShapes#FLOAT_CLASS}).
   */
  private static final Class<? extends Vector<Float>> WIDE_FLOAT_CLASS = WIDE_FLOATS.vectorType();

  private VectorExponentials() {}

  // The exponential is FloatExponential.exp lane by lane, the same operations in the same order.
  // storeExponentials, and sumsOfExponentials but for flat rows, compute it in one loop that stores
  // it (exponentialsByRow), then sum the stored values with sumsOfStored: the same additions in the
  // same order as the scalar passes, which do the same (FloatSums with shift 0, x − 0 = x). Summed
  // in the block loops that computed them, C2 boxed the exponential's vectors in some compilations
  // (width 300: 30 to 75 times slower). Flat rows of
  // sumsOfExponentials keep a register per row on 256-bit exponentials (storing to scratch first
  // measured 15-20 % slower at widths 32-128); 512-bit ones store first, as the other rows do.

  static void sumsOfExponentials(
      boolean wideExponentials,
      float[] input,
      int inputOffset,
      int width,
      int count,
      float[] maxima,
      float[] sums) {
    RowScratch scratch = RowScratch.current();
    if (!wideExponentials && VectorShapes.isFlat(width)) {
      SumTree tree = scratch.sumTree(width);
      float[] lanes = scratch.lanes(count * tree.blocks() * FLOAT_LANES);
      // A register per row (its lanes reach the array once), rather than one loop over the
      // group adding into the array: that chained each row's additions through memory.
      for (int row = 0, start = inputOffset; row < count; row++, start += width) {
        float maximum = maxima[row];
        FloatVector sum = FloatVector.zero(FLOATS);
        for (int index = start, end = start + width; index < end; index += FLOAT_LANES) {
          FloatVector x =
              FloatVector.fromArray(FLOATS, input, index)
                  .sub(FloatVector.broadcast(FLOATS, maximum))
                  .max(FloatVector.broadcast(FLOATS, FloatExponential.FLOOR));
          FloatVector rounded =
              x.mul(FloatVector.broadcast(FLOATS, FloatExponential.LOG2_E))
                  .add(FloatVector.broadcast(FLOATS, FloatExponential.ROUNDING));
          FloatVector n = rounded.sub(FloatVector.broadcast(FLOATS, FloatExponential.ROUNDING));
          FloatVector r =
              x.sub(n.mul(FloatVector.broadcast(FLOATS, FloatExponential.LN2_HIGH)))
                  .sub(n.mul(FloatVector.broadcast(FLOATS, FloatExponential.LN2_LOW)));
          FloatVector polynomial =
              r.mul(FloatVector.broadcast(FLOATS, FloatExponential.P0))
                  .add(FloatVector.broadcast(FLOATS, FloatExponential.P1))
                  .mul(r)
                  .add(FloatVector.broadcast(FLOATS, FloatExponential.P2))
                  .mul(r)
                  .add(FloatVector.broadcast(FLOATS, FloatExponential.P3));
          FloatVector mantissa =
              polynomial.mul(r.mul(r)).add(r).add(FloatVector.broadcast(FLOATS, 1f));
          FloatVector power =
              (FloatVector)
                  ((IntVector) rounded.reinterpretShape(INTS, 0))
                      .add(IntVector.broadcast(INTS, 127 - FloatExponential.ROUNDING_BITS))
                      .lanewise(VectorOperators.LSHL, 23)
                      .reinterpretShape(FLOATS, 0);
          sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(mantissa.mul(power));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, row * FLOAT_LANES);
      }
      VectorShapes.sumsOfLanes(lanes, count, sums);
      return;
    }
    // Other widths, and 512-bit exponentials: stored into scratch (log_softmax's output may be its
    // input), then summed as stored values.
    storeExponentials(
        wideExponentials,
        input,
        inputOffset,
        scratch.exponentials(count * width),
        0,
        width,
        count,
        maxima,
        sums);
  }

  static void storeExponentials(
      boolean wideExponentials,
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima,
      float[] sums) {
    if (wideExponentials) {
      wideExponentials(input, inputOffset, output, outputOffset, width, count, maxima);
    } else {
      exponentialsByRow(input, inputOffset, output, outputOffset, width, count, maxima);
    }
    sumsOfStored(output, outputOffset, width, count, sums);
  }

  /**
   * Stores exp(x − maxima[row]) of every element (FloatExponential.exp lane by lane, the same
   * operations in the same order): a loop per row over its whole registers, then the row's tail in
   * scalar code. Input and output are the same array at the same offset or do not overlap.
   */
  private static void exponentialsByRow(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima) {
    int shift = outputOffset - inputOffset;
    for (int row = 0, start = inputOffset; row < count; row++, start += width) {
      float maximum = maxima[row];
      int end = start + width;
      int index = start;
      for (int full = start + (width & ~(FLOAT_LANES - 1)); index < full; index += FLOAT_LANES) {
        FloatVector x =
            FloatVector.fromArray(FLOATS, input, index)
                .sub(FloatVector.broadcast(FLOATS, maximum))
                .max(FloatVector.broadcast(FLOATS, FloatExponential.FLOOR));
        FloatVector rounded =
            x.mul(FloatVector.broadcast(FLOATS, FloatExponential.LOG2_E))
                .add(FloatVector.broadcast(FLOATS, FloatExponential.ROUNDING));
        FloatVector n = rounded.sub(FloatVector.broadcast(FLOATS, FloatExponential.ROUNDING));
        FloatVector r =
            x.sub(n.mul(FloatVector.broadcast(FLOATS, FloatExponential.LN2_HIGH)))
                .sub(n.mul(FloatVector.broadcast(FLOATS, FloatExponential.LN2_LOW)));
        FloatVector polynomial =
            r.mul(FloatVector.broadcast(FLOATS, FloatExponential.P0))
                .add(FloatVector.broadcast(FLOATS, FloatExponential.P1))
                .mul(r)
                .add(FloatVector.broadcast(FLOATS, FloatExponential.P2))
                .mul(r)
                .add(FloatVector.broadcast(FLOATS, FloatExponential.P3));
        FloatVector mantissa =
            polynomial.mul(r.mul(r)).add(r).add(FloatVector.broadcast(FLOATS, 1f));
        FloatVector power =
            (FloatVector)
                ((IntVector) rounded.reinterpretShape(INTS, 0))
                    .add(IntVector.broadcast(INTS, 127 - FloatExponential.ROUNDING_BITS))
                    .lanewise(VectorOperators.LSHL, 23)
                    .reinterpretShape(FLOATS, 0);
        ((FloatVector) FLOAT_CLASS.cast(mantissa.mul(power))).intoArray(output, index + shift);
      }
      for (; index < end; index++) {
        output[index + shift] = FloatExponential.exp(input[index] - maximum);
      }
    }
  }

  /**
   * {@link #exponentialsByRow} on 16-lane registers: one loop over all rows' whole registers, in
   * which only ints change where a row ends (a loop per row kept its vectors in objects, the
   * broadcast constants allocated on every call at widths 100 and 300; without the group loop,
   * log_softmax at width 32 ran at 12-13 % of the copy against 16-24, softmax at 128 at 17-18 %
   * against 27-28), then the rows' tails in scalar code ({@link #exponentialTails}).
   *
   * <p>The loop calls only methods that each vector class overrides ({@code lanewise} with a
   * vector, {@code reinterpretShape}), with constants broadcast once: the scalar forms ({@code
   * sub(float)}, {@code reinterpretAsInts()}) are FloatVector's own, whose inner calls the 256-bit
   * passes profile too, and C2 then merged both shapes and allocated every vector (4 % of the copy
   * instead of 25). The power of two is (bits + bias) · 2^23 rather than a shift by 23: the same
   * bits, without the shift's scalar form. With a second vector loop in the same method, C2 (JDK
   * 17.0.15) once crashed inlining the Vector API there.
   */
  private static void wideExponentials(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima) {
    FloatVector floor = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.FLOOR);
    FloatVector log2e = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.LOG2_E);
    FloatVector rounding = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.ROUNDING);
    FloatVector ln2High = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.LN2_HIGH);
    FloatVector ln2Low = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.LN2_LOW);
    FloatVector p0 = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.P0);
    FloatVector p1 = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.P1);
    FloatVector p2 = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.P2);
    FloatVector p3 = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.P3);
    FloatVector one = FloatVector.broadcast(WIDE_FLOATS, 1f);
    IntVector exponentBias = IntVector.broadcast(WIDE_INTS, 127 - FloatExponential.ROUNDING_BITS);
    IntVector exponentScale = IntVector.broadcast(WIDE_INTS, 1 << 23);
    int shift = outputOffset - inputOffset;
    int perRow = width / WIDE_LANES;
    int tail = width - perRow * WIDE_LANES;
    int row = 0;
    int left = perRow;
    for (int index = inputOffset, end = inputOffset + count * width - tail;
        perRow > 0 && index < end;
        index += WIDE_LANES) {
      FloatVector x =
          FloatVector.fromArray(WIDE_FLOATS, input, index)
              .lanewise(VectorOperators.SUB, FloatVector.broadcast(WIDE_FLOATS, maxima[row]))
              .lanewise(VectorOperators.MAX, floor);
      FloatVector rounded =
          x.lanewise(VectorOperators.MUL, log2e).lanewise(VectorOperators.ADD, rounding);
      FloatVector n = rounded.lanewise(VectorOperators.SUB, rounding);
      FloatVector r =
          x.lanewise(VectorOperators.SUB, n.lanewise(VectorOperators.MUL, ln2High))
              .lanewise(VectorOperators.SUB, n.lanewise(VectorOperators.MUL, ln2Low));
      FloatVector polynomial =
          r.lanewise(VectorOperators.MUL, p0)
              .lanewise(VectorOperators.ADD, p1)
              .lanewise(VectorOperators.MUL, r)
              .lanewise(VectorOperators.ADD, p2)
              .lanewise(VectorOperators.MUL, r)
              .lanewise(VectorOperators.ADD, p3);
      FloatVector mantissa =
          polynomial
              .lanewise(VectorOperators.MUL, r.lanewise(VectorOperators.MUL, r))
              .lanewise(VectorOperators.ADD, r)
              .lanewise(VectorOperators.ADD, one);
      FloatVector power =
          (FloatVector)
              rounded
                  .reinterpretShape(WIDE_INTS, 0)
                  .lanewise(VectorOperators.ADD, exponentBias)
                  .lanewise(VectorOperators.MUL, exponentScale)
                  .reinterpretShape(WIDE_FLOATS, 0);
      ((FloatVector) WIDE_FLOAT_CLASS.cast(mantissa.lanewise(VectorOperators.MUL, power)))
          .intoArray(output, index + shift);
      if (--left == 0) {
        left = perRow;
        row++;
        index += tail;
      }
    }
    exponentialTails(input, inputOffset, output, outputOffset, width, count, maxima);
  }

  /**
   * The scalar exponentials of each row's last {@code width % 16} elements, after all rows'
   * registers.
   */
  private static void exponentialTails(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima) {
    int shift = outputOffset - inputOffset;
    int tail = width & (WIDE_LANES - 1);
    for (int row = 0, start = inputOffset; row < count; row++, start += width) {
      float maximum = maxima[row];
      for (int index = start + width - tail, end = start + width; index < end; index++) {
        output[index + shift] = FloatExponential.exp(input[index] - maximum);
      }
    }
  }

  /**
   * {@code sums[row]} = Σ x in {@link FloatSums#sumOfDifferences}' order with shift 0, the sums of
   * stored exponentials ({@link #storeExponentials}): x − 0 is x for every float (−0 − +0 is −0),
   * so no subtraction is made; it was one of two operations an element of this pass.
   */
  private static void sumsOfStored(float[] values, int offset, int width, int count, float[] sums) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(count * blocks * FLOAT_LANES);
    if (VectorShapes.isFlat(width)) {
      // A register per row, as in sumsOfExponentials.
      for (int row = 0, start = offset; row < count; row++, start += width) {
        FloatVector sum = FloatVector.zero(FLOATS);
        for (int index = start, end = start + width; index < end; index += STEP) {
          sum =
              ((FloatVector) FLOAT_CLASS.cast(sum))
                  .add(FloatVector.fromArray(FLOATS, values, index))
                  .add(FloatVector.fromArray(FLOATS, values, index + 8))
                  .add(FloatVector.fromArray(FLOATS, values, index + 16))
                  .add(FloatVector.fromArray(FLOATS, values, index + 24));
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
          a = ((FloatVector) FLOAT_CLASS.cast(a)).add(FloatVector.fromArray(FLOATS, values, index));
          b =
              ((FloatVector) FLOAT_CLASS.cast(b))
                  .add(FloatVector.fromArray(FLOATS, values, index + uniform));
          c =
              ((FloatVector) FLOAT_CLASS.cast(c))
                  .add(FloatVector.fromArray(FLOATS, values, index + 2 * uniform));
          d =
              ((FloatVector) FLOAT_CLASS.cast(d))
                  .add(FloatVector.fromArray(FLOATS, values, index + 3 * uniform));
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
          sum =
              ((FloatVector) FLOAT_CLASS.cast(sum))
                  .add(FloatVector.fromArray(FLOATS, values, index));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, at);
        // The tail, element j to lane j, in scalar code (VectorRowPasses says why).
        for (int lane = at; index < end; index++, lane++) {
          lanes[lane] += values[index];
        }
      }
    }
    VectorShapes.treeSums(scratch, tree, lanes, count, sums);
  }

  static void inverses(float[] values, int count) {
    if (count < DOUBLE_LANES) {
      ScalarRowPasses.inverses(values, 0, count);
      return;
    }
    double[] wide = VectorShapes.widen(values, count);
    for (int i = 0; i < count; i += DOUBLE_LANES) {
      DoubleVector.broadcast(DOUBLES, 1.0)
          .div(DoubleVector.fromArray(DOUBLES, wide, i))
          .intoArray(wide, i);
    }
    VectorShapes.narrow(wide, values, count);
  }

  /**
   * {@link FloatLogarithm#log}, eight at a time: the same operations in the same order, in two
   * loops (the reduced argument f and the exponent e, then the polynomial) with f and e stored
   * between them. In one loop, the method passed C2's inlining cutoff (18,000 parse nodes) before
   * its last store, which then ran as a Java call with the vector allocated, in every compilation.
   */
  static void logarithms(float[] values, int count) {
    int full = count & ~(FLOAT_LANES - 1);
    RowScratch scratch = RowScratch.current();
    float[] reduced = scratch.logarithmParts(0);
    float[] exponents = scratch.logarithmParts(1);
    logarithmArguments(values, full, reduced, exponents);
    logarithmPolynomials(values, full, reduced, exponents);
    ScalarRowPasses.logarithms(values, full, count);
  }

  /**
   * For x at {@code values[i]}, i below {@code full} (a multiple of eight): x = 2^e · (1 + f) with
   * 1 + f in [√½, √2), as {@link FloatLogarithm#log} reduces it.
   */
  private static void logarithmArguments(
      float[] values, int full, float[] reduced, float[] exponents) {
    IntVector mantissaBits = IntVector.broadcast(INTS, FloatLogarithm.MANTISSA_BITS);
    IntVector halfBits = IntVector.broadcast(INTS, FloatLogarithm.HALF_BITS);
    IntVector exponentShift = IntVector.broadcast(INTS, 23);
    IntVector exponentBias = IntVector.broadcast(INTS, 126);
    FloatVector sqrtHalf = FloatVector.broadcast(FLOATS, FloatLogarithm.SQRT_HALF);
    FloatVector zero = FloatVector.zero(FLOATS);
    FloatVector one = FloatVector.broadcast(FLOATS, 1f);
    for (int i = 0; i < full; i += FLOAT_LANES) {
      IntVector bits =
          (IntVector) FloatVector.fromArray(FLOATS, values, i).reinterpretShape(INTS, 0);
      FloatVector m =
          (FloatVector)
              bits.lanewise(VectorOperators.AND, mantissaBits)
                  .lanewise(VectorOperators.OR, halfBits)
                  .reinterpretShape(FLOATS, 0);
      VectorMask<Float> belowRoot = m.compare(VectorOperators.LT, sqrtHalf);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  m.lanewise(VectorOperators.SUB, one)
                      .blend(
                          m.lanewise(VectorOperators.ADD, m).lanewise(VectorOperators.SUB, one),
                          belowRoot)))
          .intoArray(reduced, i);
      ((FloatVector)
              FLOAT_CLASS
                  .cast( // e − 0 is e (never −0: it comes from an int), e − 1 below the root, as
                      // the scalar branch.
                      ((FloatVector)
                              bits.lanewise(VectorOperators.LSHR, exponentShift)
                                  .lanewise(VectorOperators.SUB, exponentBias)
                                  .convertShape(VectorOperators.I2F, FLOATS, 0))
                          .lanewise(VectorOperators.SUB, zero.blend(one, belowRoot))))
          .intoArray(exponents, i);
    }
  }

  /**
   * log x = f + (f³ · P(f) + e · ln2Low − f²/2) + e · ln2High, NaN for NaN, into {@code values}.
   */
  private static void logarithmPolynomials(
      float[] values, int full, float[] reduced, float[] exponents) {
    FloatVector minusHalf = FloatVector.broadcast(FLOATS, -0.5f);
    FloatVector notANumber = FloatVector.broadcast(FLOATS, Float.NaN);
    FloatVector ln2Low = FloatVector.broadcast(FLOATS, FloatLogarithm.LN2_LOW);
    FloatVector ln2High = FloatVector.broadcast(FLOATS, FloatLogarithm.LN2_HIGH);
    FloatVector q0 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q0);
    FloatVector q1 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q1);
    FloatVector q2 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q2);
    FloatVector q3 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q3);
    FloatVector q4 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q4);
    FloatVector q5 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q5);
    FloatVector q6 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q6);
    FloatVector q7 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q7);
    FloatVector q8 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q8);
    for (int i = 0; i < full; i += FLOAT_LANES) {
      FloatVector f = FloatVector.fromArray(FLOATS, reduced, i);
      FloatVector e = FloatVector.fromArray(FLOATS, exponents, i);
      FloatVector z = f.lanewise(VectorOperators.MUL, f);
      FloatVector polynomial =
          f.lanewise(VectorOperators.MUL, q0)
              .lanewise(VectorOperators.ADD, q1)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q2)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q3)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q4)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q5)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q6)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q7)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q8);
      FloatVector y =
          polynomial
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.MUL, z)
              .lanewise(VectorOperators.ADD, e.lanewise(VectorOperators.MUL, ln2Low))
              .lanewise(VectorOperators.ADD, z.lanewise(VectorOperators.MUL, minusHalf));
      ((FloatVector)
              FLOAT_CLASS.cast(
                  f.lanewise(VectorOperators.ADD, y)
                      .lanewise(VectorOperators.ADD, e.lanewise(VectorOperators.MUL, ln2High))
                      .blend(
                          notANumber,
                          FloatVector.fromArray(FLOATS, values, i).test(VectorOperators.IS_NAN))))
          .intoArray(values, i);
    }
  }
}

package io.embednorm.engine.cpu;

import io.embednorm.engine.Float16;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.Vector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * binary16 to and from float32 eight lanes at a time, with the bits of {@link Float16#toFloat} and
 * {@link Float16#fromFloat}: the scalar conversions took several times as long as the float32
 * kernels between them. Used by {@link VectorRowPasses} only, so that it loads only where the JVM
 * has the Vector API; keeps VectorRowPasses' rules for the Vector API.
 *
 * <p>Widening: the magnitude's bits moved up by 13 are a float32 whose value is the half's times
 * 2^-112, exact for normal and subnormal halves alike, so one multiplication by 2^112 gives the
 * value; exponent 31 (infinities, NaN with their payload) gets float32's exponent instead.
 *
 * <p>Narrowing, round to nearest even: normal results as in Float16.fromFloat (add 0xfff plus the
 * lowest kept bit, then shift); results below 2^-14 as the bits of |x| + 0.5 less those of 0.5,
 * where the float32 addition itself rounds |x| to a multiple of 2^-24 (0.5's ulp), ties to even
 * since 0.5 / 2^-24 is even: the integer rounding of the scalar code, and 0 from 2^-25 down.
 */
final class VectorHalves {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;
  private static final VectorSpecies<Short> SHORTS = ShortVector.SPECIES_128;
  private static final int LANES = 8;
  private static final Class<? extends Vector<Float>> FLOAT_CLASS = FLOATS.vectorType();
  private static final Class<? extends Vector<Short>> SHORT_CLASS = SHORTS.vectorType();
  private static final Class<? extends Vector<Integer>> INT_CLASS = INTS.vectorType();

  private VectorHalves() {}

  /** {@link RowPasses#halvesToFloats}. */
  static void toFloats(short[] halves, float[] floats, int count) {
    int index = 0;
    for (int full = count & ~(LANES - 1); index < full; index += LANES) {
      IntVector bits =
          (IntVector)
              INT_CLASS.cast(
                  ShortVector.fromArray(SHORTS, halves, index)
                      .convertShape(VectorOperators.S2I, INTS, 0));
      IntVector magnitude = bits.and(IntVector.broadcast(INTS, 0x7fff));
      FloatVector value =
          ((FloatVector)
                  FLOAT_CLASS.cast(
                      magnitude
                          .lanewise(VectorOperators.LSHL, IntVector.broadcast(INTS, 13))
                          .reinterpretShape(FLOATS, 0)))
              .mul(FloatVector.broadcast(FLOATS, 0x1p112f));
      IntVector special =
          magnitude
              .and(IntVector.broadcast(INTS, 0x3ff))
              .lanewise(VectorOperators.LSHL, IntVector.broadcast(INTS, 13))
              .or(IntVector.broadcast(INTS, 0x7f800000));
      VectorMask<Integer> infiniteOrNaN =
          magnitude.compare(VectorOperators.GE, IntVector.broadcast(INTS, 0x7c00));
      IntVector result =
          ((IntVector) INT_CLASS.cast(value.reinterpretShape(INTS, 0)))
              .blend(special, infiniteOrNaN)
              .or(
                  bits.and(IntVector.broadcast(INTS, 0x8000))
                      .lanewise(VectorOperators.LSHL, IntVector.broadcast(INTS, 16)));
      ((FloatVector) FLOAT_CLASS.cast(result.reinterpretShape(FLOATS, 0))).intoArray(floats, index);
    }
    for (; index < count; index++) {
      floats[index] = Float16.toFloat(halves[index]);
    }
  }

  /**
   * The binary16 bits of eight float32 values in the low 16 bits of their lanes (see the class
   * comment, narrowing); {@link VectorEncodings} shares it.
   */
  static IntVector narrowBits(FloatVector value) {
    IntVector bits = (IntVector) INT_CLASS.cast(value.reinterpretShape(INTS, 0));
    IntVector magnitude = bits.and(IntVector.broadcast(INTS, 0x7fffffff));
    IntVector small =
        ((IntVector)
                INT_CLASS.cast(
                    ((FloatVector) FLOAT_CLASS.cast(magnitude.reinterpretShape(FLOATS, 0)))
                        .add(FloatVector.broadcast(FLOATS, 0.5f))
                        .reinterpretShape(INTS, 0)))
            .sub(IntVector.broadcast(INTS, 0x3f000000));
    IntVector normal =
        magnitude
            .sub(IntVector.broadcast(INTS, (127 - 15) << 23))
            .add(IntVector.broadcast(INTS, 0xfff))
            .add(
                magnitude
                    .lanewise(VectorOperators.LSHR, IntVector.broadcast(INTS, 13))
                    .and(IntVector.broadcast(INTS, 1)))
            .lanewise(VectorOperators.LSHR, IntVector.broadcast(INTS, 13));
    IntVector notANumber =
        magnitude
            .lanewise(VectorOperators.LSHR, IntVector.broadcast(INTS, 13))
            .and(IntVector.broadcast(INTS, 0x3ff))
            .or(IntVector.broadcast(INTS, 0x7e00));
    return small
        .blend(normal, magnitude.compare(VectorOperators.GE, IntVector.broadcast(INTS, 0x38800000)))
        .blend(
            IntVector.broadcast(INTS, 0x7c00),
            magnitude.compare(VectorOperators.GE, IntVector.broadcast(INTS, 0x477ff000)))
        .blend(
            notANumber,
            magnitude.compare(VectorOperators.GT, IntVector.broadcast(INTS, 0x7f800000)))
        .or(
            bits.lanewise(VectorOperators.LSHR, IntVector.broadcast(INTS, 16))
                .and(IntVector.broadcast(INTS, 0x8000)));
  }

  /** {@link RowPasses#floatsToHalves}. */
  static void toHalves(float[] floats, short[] halves, int count) {
    int index = 0;
    for (int full = count & ~(LANES - 1); index < full; index += LANES) {
      FloatVector value = FloatVector.fromArray(FLOATS, floats, index);
      IntVector result = narrowBits(value);
      ((ShortVector) SHORT_CLASS.cast(result.convertShape(VectorOperators.I2S, SHORTS, 0)))
          .intoArray(halves, index);
    }
    for (; index < count; index++) {
      halves[index] = Float16.fromFloat(floats[index]);
    }
  }
}

package io.embednorm.engine.cpu;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.RowEncoder;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.Vector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The encodings of a float32 row eight lanes at a time, with the bytes of {@link RowEncoder}, which
 * also writes every row's tail shorter than a register. Used by {@link VectorRowPasses} only; keeps
 * VectorRowPasses' rules for the Vector API (one loop per method, casts before every store).
 *
 * <p>float16 as {@link VectorHalves}; bfloat16 as BFloat16 (add 0x7fff plus the lowest kept bit,
 * NaN keeps its upper bits with the quiet bit set). The 16-bit lanes go out through their bytes,
 * which are little-endian where the machine is (elsewhere RowEncoder writes the whole row).
 *
 * <p>int8: the scale from the largest magnitude's bits (as ints, a finite magnitude orders below
 * infinity and NaN), and q from the true float32 division: the quotient clamped to ±127 (rint is
 * monotone and ±127 are integers, so clamping first changes no q) plus 1.5 · 2^23, where the
 * float32 sum lies in [2^23, 2^24), whose ulp is 1, so the addition itself rounds the quotient to
 * an integer, ties to even (1.5 · 2^23 is even); the sum's low byte is then q's byte.
 *
 * <p>binary: y ≥ 0 as the IEEE comparison (−0 true, NaN false) picks each lane's bit, 1 << lane;
 * the lanes' OR is the byte.
 */
final class VectorEncodings {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;
  private static final VectorSpecies<Short> SHORTS = ShortVector.SPECIES_128;
  private static final VectorSpecies<Byte> SIXTEEN_BYTES = ByteVector.SPECIES_128;
  private static final VectorSpecies<Byte> EIGHT_BYTES = ByteVector.SPECIES_64;
  private static final int LANES = 8;
  private static final Class<? extends Vector<Float>> FLOAT_CLASS = FLOATS.vectorType();
  private static final Class<? extends Vector<Integer>> INT_CLASS = INTS.vectorType();
  private static final Class<? extends Vector<Short>> SHORT_CLASS = SHORTS.vectorType();
  private static final Class<? extends Vector<Byte>> SIXTEEN_BYTE_CLASS =
      SIXTEEN_BYTES.vectorType();
  private static final Class<? extends Vector<Byte>> EIGHT_BYTE_CLASS = EIGHT_BYTES.vectorType();
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

  /** 1.5 · 2^23: added to |x| ≤ 127 it rounds x to an integer held in the sum's low bits. */
  private static final float ROUNDING_BIAS = 0x1.8p23f;

  /** The bit of each lane in a binary byte, as the float with those bits. */
  private static final float[] LANE_BITS = new float[LANES];

  static {
    for (int lane = 0; lane < LANES; lane++) {
      LANE_BITS[lane] = Float.intBitsToFloat(1 << lane);
    }
  }

  private VectorEncodings() {}

  /** {@link RowPasses#encodeRow}. */
  static float encode(
      Encoding encoding, float[] values, int offset, int width, byte[] target, int targetOffset) {
    if (!LITTLE_ENDIAN && (encoding == Encoding.FLOAT16 || encoding == Encoding.BFLOAT16)) {
      return RowEncoder.encode(encoding, values, offset, width, target, targetOffset);
    }
    Objects.checkFromIndexSize(offset, width, values.length);
    Objects.checkFromIndexSize(targetOffset, (int) encoding.rowBytes(width), target.length);
    int full = width & ~(LANES - 1);
    switch (encoding) {
      case FLOAT16 -> {
        halves(values, offset, full, target, targetOffset);
        return RowEncoder.encode(
            encoding, values, offset + full, width - full, target, targetOffset + 2 * full);
      }
      case BFLOAT16 -> {
        brainHalves(values, offset, full, target, targetOffset);
        return RowEncoder.encode(
            encoding, values, offset + full, width - full, target, targetOffset + 2 * full);
      }
      case INT8 -> {
        float scale = int8Scale(values, offset, width, full);
        if (scale > 0f) {
          quantize(values, offset, full, scale, target, targetOffset);
          for (int i = full; i < width; i++) {
            target[targetOffset + i] = RowEncoder.quantize(values[offset + i], scale);
          }
        } else {
          Arrays.fill(target, targetOffset, targetOffset + width, (byte) 0);
        }
        return scale;
      }
      default -> {
        signs(values, offset, full, target, targetOffset);
        return RowEncoder.encode(
            encoding, values, offset + full, width - full, target, targetOffset + full / 8);
      }
    }
  }

  /** float16 of {@code count} (a multiple of 8) values. */
  private static void halves(float[] values, int offset, int count, byte[] target, int at) {
    for (int i = 0; i < count; i += LANES) {
      FloatVector value = FloatVector.fromArray(FLOATS, values, offset + i);
      IntVector result = VectorHalves.narrowBits(value);
      ShortVector shorts =
          (ShortVector) SHORT_CLASS.cast(result.convertShape(VectorOperators.I2S, SHORTS, 0));
      ((ByteVector) SIXTEEN_BYTE_CLASS.cast(shorts.reinterpretShape(SIXTEEN_BYTES, 0)))
          .intoArray(target, at + 2 * i);
    }
  }

  /** bfloat16 of {@code count} (a multiple of 8) values. */
  private static void brainHalves(float[] values, int offset, int count, byte[] target, int at) {
    for (int i = 0; i < count; i += LANES) {
      FloatVector value = FloatVector.fromArray(FLOATS, values, offset + i);
      IntVector bits = (IntVector) INT_CLASS.cast(value.reinterpretShape(INTS, 0));
      IntVector upper = bits.lanewise(VectorOperators.LSHR, IntVector.broadcast(INTS, 16));
      IntVector rounded =
          bits.add(IntVector.broadcast(INTS, 0x7fff))
              .add(upper.and(IntVector.broadcast(INTS, 1)))
              .lanewise(VectorOperators.LSHR, IntVector.broadcast(INTS, 16));
      IntVector result =
          rounded.blend(
              upper.or(IntVector.broadcast(INTS, 0x0040)),
              bits.and(IntVector.broadcast(INTS, 0x7fffffff))
                  .compare(VectorOperators.GT, IntVector.broadcast(INTS, 0x7f800000)));
      ShortVector shorts =
          (ShortVector) SHORT_CLASS.cast(result.convertShape(VectorOperators.I2S, SHORTS, 0));
      ((ByteVector) SIXTEEN_BYTE_CLASS.cast(shorts.reinterpretShape(SIXTEEN_BYTES, 0)))
          .intoArray(target, at + 2 * i);
    }
  }

  /**
   * {@link RowEncoder#int8Scale}: the largest magnitude's bits over the registers, then the tail;
   * NaN where they pass infinity's.
   */
  private static float int8Scale(float[] values, int offset, int width, int full) {
    IntVector largest = IntVector.zero(INTS);
    for (int i = 0; i < full; i += LANES) {
      IntVector bits =
          (IntVector)
              INT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, values, offset + i).reinterpretShape(INTS, 0));
      largest =
          ((IntVector) INT_CLASS.cast(largest))
              .max(bits.and(IntVector.broadcast(INTS, 0x7fffffff)));
    }
    int largestBits = ((IntVector) INT_CLASS.cast(largest)).reduceLanes(VectorOperators.MAX);
    for (int i = full; i < width; i++) {
      largestBits = Math.max(largestBits, Float.floatToRawIntBits(values[offset + i]) & 0x7fffffff);
    }
    if (largestBits >= 0x7f800000) {
      return Float.NaN;
    }
    return Float.intBitsToFloat(largestBits) / 127f;
  }

  /** int8 q of {@code count} (a multiple of 8) values of a row of {@code scale} above 0. */
  private static void quantize(
      float[] values, int offset, int count, float scale, byte[] target, int at) {
    for (int i = 0; i < count; i += LANES) {
      FloatVector quotient =
          FloatVector.fromArray(FLOATS, values, offset + i)
              .div(FloatVector.broadcast(FLOATS, scale))
              .max(FloatVector.broadcast(FLOATS, -127f))
              .min(FloatVector.broadcast(FLOATS, 127f))
              .add(FloatVector.broadcast(FLOATS, ROUNDING_BIAS));
      IntVector bits = (IntVector) INT_CLASS.cast(quotient.reinterpretShape(INTS, 0));
      ((ByteVector) EIGHT_BYTE_CLASS.cast(bits.convertShape(VectorOperators.I2B, EIGHT_BYTES, 0)))
          .intoArray(target, at + i);
    }
  }

  /**
   * binary bytes of {@code count} (a multiple of 8) values: each lane's bit picked bit for bit from
   * {@link #LANE_BITS} as floats, under the float comparison's mask (a mask cast to ints is no
   * intrinsic on JDK 17), then OR-ed as ints.
   */
  private static void signs(float[] values, int offset, int count, byte[] target, int at) {
    for (int i = 0; i < count; i += LANES) {
      FloatVector value = FloatVector.fromArray(FLOATS, values, offset + i);
      FloatVector picked =
          FloatVector.zero(FLOATS)
              .blend(
                  FloatVector.fromArray(FLOATS, LANE_BITS, 0),
                  value.compare(VectorOperators.GE, FloatVector.broadcast(FLOATS, 0f)));
      IntVector bits =
          (IntVector)
              INT_CLASS.cast(((FloatVector) FLOAT_CLASS.cast(picked)).reinterpretShape(INTS, 0));
      target[at + i / LANES] = (byte) bits.reduceLanes(VectorOperators.OR);
    }
  }
}

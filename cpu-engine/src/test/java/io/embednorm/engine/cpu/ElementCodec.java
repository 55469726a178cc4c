package io.embednorm.engine.cpu;

import io.embednorm.engine.BFloat16;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Float16;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Element-at-a-time little-endian access for the engine tests, written independently of the
 * engine's bulk views; values travel as raw bit patterns in a long.
 */
final class ElementCodec {
  private ElementCodec() {}

  /** The bits of {@code value} in {@code type} (float16 and bfloat16 rounded). */
  static long narrow(ElementType type, float value) {
    return switch (type) {
      case FLOAT64 -> Double.doubleToRawLongBits(value);
      case FLOAT32 -> Float.floatToRawIntBits(value) & 0xffffffffL;
      case FLOAT16 -> Float16.fromFloat(value) & 0xffff;
      case BFLOAT16 -> BFloat16.fromFloat(value) & 0xffff;
    };
  }

  /** The float32 value of 16- or 32-bit {@code bits}. */
  static float widen(ElementType type, long bits) {
    return switch (type) {
      case FLOAT64 -> (float) Double.longBitsToDouble(bits);
      case FLOAT32 -> Float.intBitsToFloat((int) bits);
      case FLOAT16 -> Float16.toFloat((short) bits);
      case BFLOAT16 -> BFloat16.toFloat((short) bits);
    };
  }

  static void put(ElementType type, ByteBuffer buffer, int index, long bits) {
    ByteBuffer view = buffer.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
    int at = index * type.byteWidth();
    switch (type) {
      case FLOAT64 -> view.putLong(at, bits);
      case FLOAT32 -> view.putInt(at, (int) bits);
      default -> view.putShort(at, (short) bits);
    }
  }

  static long get(ElementType type, ByteBuffer buffer, int index) {
    ByteBuffer view = buffer.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
    int at = index * type.byteWidth();
    return switch (type) {
      case FLOAT64 -> view.getLong(at);
      case FLOAT32 -> view.getInt(at) & 0xffffffffL;
      default -> view.getShort(at) & 0xffff;
    };
  }
}

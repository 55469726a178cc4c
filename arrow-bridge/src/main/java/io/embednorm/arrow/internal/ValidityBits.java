package io.embednorm.arrow.internal;

import java.nio.ByteBuffer;

/**
 * Arrow validity bitmaps in byte buffers (bit i is bit {@code i % 8} of byte {@code i / 8}; 1 means
 * valid), read and written a byte or a word at a time. Absolute indexing: the buffers' positions
 * are ignored.
 */
final class ValidityBits {
  private ValidityBits() {}

  static boolean isSet(ByteBuffer bits, long bit) {
    return ((bits.get((int) (bit >>> 3)) >>> (bit & 7)) & 1) != 0;
  }

  /** Whether bits {@code [from, to)} are all 1. */
  static boolean allSet(ByteBuffer bits, long from, long to) {
    long bit = from;
    for (; bit < to && (bit & 7) != 0; bit++) {
      if (!isSet(bits, bit)) {
        return false;
      }
    }
    for (; bit + Long.SIZE <= to; bit += Long.SIZE) {
      if (bits.getLong((int) (bit >>> 3)) != -1L) {
        return false;
      }
    }
    for (; bit < to; bit++) {
      if (!isSet(bits, bit)) {
        return false;
      }
    }
    return true;
  }

  /** Sets bits {@code [from, to)} to 1. */
  static void set(ByteBuffer bits, long from, long to) {
    fill(bits, from, to, (byte) 0xFF);
  }

  /** Sets bits {@code [from, to)} to 0. */
  static void clear(ByteBuffer bits, long from, long to) {
    fill(bits, from, to, (byte) 0);
  }

  private static void fill(ByteBuffer bits, long from, long to, byte pattern) {
    long bit = from;
    for (; bit < to && (bit & 7) != 0; bit++) {
      setBit(bits, bit, pattern);
    }
    for (; bit + Byte.SIZE <= to; bit += Byte.SIZE) {
      bits.put((int) (bit >>> 3), pattern);
    }
    for (; bit < to; bit++) {
      setBit(bits, bit, pattern);
    }
  }

  private static void setBit(ByteBuffer bits, long bit, byte pattern) {
    int index = (int) (bit >>> 3);
    int mask = 1 << (bit & 7);
    byte current = bits.get(index);
    bits.put(index, (byte) (pattern == 0 ? current & ~mask : current | mask));
  }
}

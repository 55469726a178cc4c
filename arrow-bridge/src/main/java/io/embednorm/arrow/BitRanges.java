package io.embednorm.arrow;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BitVectorHelper;

/** Ranges of validity bits, read and set a byte or a word at a time. */
final class BitRanges {
  private BitRanges() {}

  /** Whether bits {@code [from, to)} of {@code bits} are all 1. */
  static boolean allSet(ArrowBuf bits, long from, long to) {
    long bit = from;
    while (bit < to && (bit & 7) != 0) {
      if (!isSet(bits, bit++)) {
        return false;
      }
    }
    for (; bit + Long.SIZE <= to; bit += Long.SIZE) {
      if (bits.getLong(bit >>> 3) != -1L) {
        return false;
      }
    }
    for (; bit + Byte.SIZE <= to; bit += Byte.SIZE) {
      if (bits.getByte(bit >>> 3) != (byte) 0xFF) {
        return false;
      }
    }
    while (bit < to) {
      if (!isSet(bits, bit++)) {
        return false;
      }
    }
    return true;
  }

  /** Sets bits {@code [from, to)} of {@code bits} to 1. */
  static void set(ArrowBuf bits, long from, long to) {
    long bit = from;
    while (bit < to && (bit & 7) != 0) {
      BitVectorHelper.setBit(bits, bit++);
    }
    long wholeBytes = (to - bit) >>> 3;
    if (wholeBytes > 0) {
      bits.setOne(bit >>> 3, wholeBytes);
      bit += wholeBytes << 3;
    }
    while (bit < to) {
      BitVectorHelper.setBit(bits, bit++);
    }
  }

  /** Sets bits {@code [from, to)} of {@code bits} to 0. */
  static void clear(ArrowBuf bits, long from, long to) {
    long bit = from;
    while (bit < to && (bit & 7) != 0) {
      BitVectorHelper.unsetBit(bits, (int) bit++);
    }
    long wholeBytes = (to - bit) >>> 3;
    if (wholeBytes > 0) {
      bits.setZero(bit >>> 3, wholeBytes);
      bit += wholeBytes << 3;
    }
    while (bit < to) {
      BitVectorHelper.unsetBit(bits, (int) bit++);
    }
  }

  static boolean isSet(ArrowBuf bits, long bit) {
    return ((bits.getByte(bit >>> 3) >>> (bit & 7)) & 1) != 0;
  }
}

package io.embednorm.arrow;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;
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
    long words = (to - bit) / Long.SIZE;
    if (words > 0) {
      // One bounds check for the range, then plain reads: ArrowBuf.getLong checks every word, which
      // made this scan of a large batch's element validity take as long as the batch's GPU copies.
      long first = bit >>> 3;
      bits.checkBytes(first, first + words * Long.BYTES);
      long address = bits.memoryAddress() + first;
      for (long word = 0; word < words; word++) {
        if (MemoryUtil.getLong(address + word * Long.BYTES) != -1L) {
          return false;
        }
      }
      bit += words * Long.SIZE;
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

package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BitVectorHelper;
import org.junit.jupiter.api.Test;

class BitRangesTest {
  private static final int BITS = 300;

  @Test
  void allSetAgreesWithBitByBitReading() {
    long seed = 21;
    Random random = new Random(seed);
    try (BufferAllocator allocator = new RootAllocator();
        ArrowBuf bits = allocator.buffer(BITS / 8 + 1)) {
      for (int trial = 0; trial < 2000; trial++) {
        bits.setOne(0, bits.capacity());
        if (random.nextBoolean()) {
          BitVectorHelper.unsetBit(bits, random.nextInt(BITS));
        }
        int from = random.nextInt(BITS);
        int to = from + random.nextInt(BITS - from + 1);
        boolean expected = true;
        for (int bit = from; bit < to; bit++) {
          expected &= BitVectorHelper.get(bits, bit) == 1;
        }
        assertThat(BitRanges.allSet(bits, from, to))
            .as("seed %d trial %d [%d, %d)", seed, trial, from, to)
            .isEqualTo(expected);
      }
    }
  }

  @Test
  void setTouchesExactlyTheRange() {
    long seed = 22;
    Random random = new Random(seed);
    try (BufferAllocator allocator = new RootAllocator();
        ArrowBuf bits = allocator.buffer(BITS / 8 + 1)) {
      for (int trial = 0; trial < 2000; trial++) {
        bits.setZero(0, bits.capacity());
        int from = random.nextInt(BITS);
        int to = from + random.nextInt(BITS - from + 1);
        BitRanges.set(bits, from, to);
        for (int bit = 0; bit < BITS; bit++) {
          assertThat(BitVectorHelper.get(bits, bit))
              .as("seed %d trial %d [%d, %d) bit %d", seed, trial, from, to, bit)
              .isEqualTo(bit >= from && bit < to ? 1 : 0);
        }
      }
    }
  }

  @Test
  void clearTouchesExactlyTheRange() {
    long seed = 23;
    Random random = new Random(seed);
    try (BufferAllocator allocator = new RootAllocator();
        ArrowBuf bits = allocator.buffer(BITS / 8 + 1)) {
      for (int trial = 0; trial < 2000; trial++) {
        bits.setOne(0, bits.capacity());
        int from = random.nextInt(BITS);
        int to = from + random.nextInt(BITS - from + 1);
        BitRanges.clear(bits, from, to);
        for (int bit = 0; bit < BITS; bit++) {
          assertThat(BitVectorHelper.get(bits, bit))
              .as("seed %d trial %d [%d, %d) bit %d", seed, trial, from, to, bit)
              .isEqualTo(bit >= from && bit < to ? 0 : 1);
        }
      }
    }
  }
}

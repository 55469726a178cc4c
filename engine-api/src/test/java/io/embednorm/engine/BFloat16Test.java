package io.embednorm.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class BFloat16Test {
  private static final NarrowReference REFERENCE = NarrowReference.BFLOAT16;

  @Test
  void widensEveryPatternToItsExactValue() {
    for (int pattern = 0; pattern < 65536; pattern++) {
      short bits = (short) pattern;
      float widened = BFloat16.toFloat(bits);
      double expected = REFERENCE.value(bits);
      if (Double.isNaN(expected)) {
        assertThat(widened).as("pattern %04x", pattern).isNaN();
      } else {
        assertThat(Float.floatToRawIntBits(widened))
            .as("pattern %04x", pattern)
            .isEqualTo(Float.floatToRawIntBits((float) expected));
      }
    }
  }

  @Test
  void everyPatternSurvivesARoundTrip() {
    for (int pattern = 0; pattern < 65536; pattern++) {
      short bits = (short) pattern;
      short back = BFloat16.fromFloat(BFloat16.toFloat(bits));
      if (REFERENCE.isNaN(bits)) {
        assertThat(REFERENCE.isNaN(back)).as("pattern %04x stays NaN", pattern).isTrue();
      } else {
        assertThat(back & 0xffff).as("pattern %04x", pattern).isEqualTo(pattern);
      }
    }
  }

  @Test
  void roundsRandomFloatsCorrectly() {
    for (long seed : TestSeeds.seeds()) {
      Random random = new Random(seed);
      for (int i = 0; i < 500_000; i++) {
        float value = Float.intBitsToFloat(random.nextInt());
        assertRoundsCorrectly(value, seed);
      }
    }
  }

  @Test
  void roundsEveryHalfwayCaseToEven() {
    // The float whose upper half is a pattern and lower half 0x8000 lies exactly between that
    // pattern and the next; check it and its neighbours for every finite pattern.
    for (int pattern = 0; pattern < 65536; pattern++) {
      if ((pattern & 0x7f80) == 0x7f80) {
        continue;
      }
      int midpoint = (pattern << 16) | 0x8000;
      for (int bits : new int[] {midpoint, midpoint - 1, midpoint + 1, pattern << 16}) {
        assertRoundsCorrectly(Float.intBitsToFloat(bits), 0);
      }
    }
  }

  @Test
  void knownValues() {
    assertThat(BFloat16.fromFloat(1f)).isEqualTo((short) 0x3f80);
    assertThat(BFloat16.fromFloat(1f + 0x1p-8f))
        .as("tie goes to even 1.0")
        .isEqualTo((short) 0x3f80);
    assertThat(BFloat16.fromFloat(1f + 3 * 0x1p-8f))
        .as("tie goes to even")
        .isEqualTo((short) 0x3f82);
    assertThat(BFloat16.fromFloat(Float.MAX_VALUE)).as("overflows").isEqualTo((short) 0x7f80);
    assertThat(BFloat16.fromFloat(-Float.MAX_VALUE)).isEqualTo((short) 0xff80);
    assertThat(BFloat16.fromFloat(Float.MIN_VALUE)).as("ties to 0").isEqualTo((short) 0);
    assertThat(BFloat16.fromFloat(-0f)).isEqualTo((short) 0x8000);
    assertThat(REFERENCE.isNaN(BFloat16.fromFloat(Float.intBitsToFloat(0x7f800001))))
        .as("a NaN whose payload lies only in dropped bits")
        .isTrue();
    assertThat(REFERENCE.isNaN(BFloat16.fromFloat(Float.intBitsToFloat(0xffffffff)))).isTrue();
    assertThat(BFloat16.toFloat((short) 0xc040)).isEqualTo(-3f);
  }

  @Test
  void bulkConversionsMatchTheScalarOnes() {
    short[] bits = {0x3f80, (short) 0xc040};
    float[] floats = new float[3];
    BFloat16.toFloats(bits, 0, floats, 1, 2);
    assertThat(floats).containsExactly(0f, 1f, -3f);
    short[] back = new short[2];
    BFloat16.fromFloats(floats, 1, back, 0, 2);
    assertThat(back).containsExactly((short) 0x3f80, (short) 0xc040);
  }

  private static void assertRoundsCorrectly(float value, long seed) {
    short actual = BFloat16.fromFloat(value);
    if (Float.isNaN(value)) {
      assertThat(REFERENCE.isNaN(actual))
          .as("seed %d, NaN %08x", seed, Float.floatToRawIntBits(value))
          .isTrue();
      return;
    }
    assertThat(actual & 0xffff)
        .as("seed %d, value %s (%08x)", seed, value, Float.floatToRawIntBits(value))
        .isEqualTo(REFERENCE.round(value) & 0xffff);
  }
}

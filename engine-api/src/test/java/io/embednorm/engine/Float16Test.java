package io.embednorm.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class Float16Test {
  private static final NarrowReference REFERENCE = NarrowReference.FLOAT16;

  @Test
  void widensEveryPatternToItsExactValue() {
    for (int pattern = 0; pattern < 65536; pattern++) {
      short bits = (short) pattern;
      float widened = Float16.toFloat(bits);
      double expected = REFERENCE.value(bits);
      if (Double.isNaN(expected)) {
        assertThat(widened).as("pattern %04x", pattern).isNaN();
        int payload = (Float.floatToRawIntBits(widened) >>> 13) & 0x3ff;
        assertThat(payload).as("payload of pattern %04x", pattern).isEqualTo(pattern & 0x3ff);
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
      short back = Float16.fromFloat(Float16.toFloat(bits));
      if (REFERENCE.isNaN(bits)) {
        assertThat(REFERENCE.isNaN(back)).as("pattern %04x stays NaN", pattern).isTrue();
        assertThat(back & 0x8000).as("sign of NaN %04x", pattern).isEqualTo(pattern & 0x8000);
      } else {
        assertThat(back & 0xffff).as("pattern %04x", pattern).isEqualTo(pattern);
      }
    }
  }

  @Test
  void roundsRandomFloatsCorrectly() {
    for (long seed : TestSeeds.seeds()) {
      Random random = new Random(seed);
      for (int i = 0; i < 300_000; i++) {
        float anyFloat = Float.intBitsToFloat(random.nextInt());
        assertRoundsCorrectly(anyFloat, seed);
        // Concentrate on the half range, subnormals and overflow included: exponents 2^-26..2^17.
        int exponent = 127 - 26 + random.nextInt(44);
        int bits = (random.nextInt() & 0x807fffff) | (exponent << 23);
        assertRoundsCorrectly(Float.intBitsToFloat(bits), seed);
      }
    }
  }

  @Test
  void roundsEveryHalfwayCaseToEven() {
    // Between each pair of adjacent non-negative halves (the largest finite one and 65536
    // included):
    // the midpoint is exact in float32; it and its float32 neighbours on either side, both signs.
    for (int pattern = 0; pattern < 0x7c00; pattern++) {
      double low = REFERENCE.value((short) pattern);
      double high = pattern == 0x7bff ? 65536.0 : REFERENCE.value((short) (pattern + 1));
      float midpoint = (float) ((low + high) / 2);
      assertThat((double) midpoint).isEqualTo((low + high) / 2);
      for (float value :
          new float[] {midpoint, Math.nextDown(midpoint), Math.nextUp(midpoint), (float) low}) {
        assertRoundsCorrectly(value, 0);
        assertRoundsCorrectly(-value, 0);
      }
    }
  }

  @Test
  void knownValues() {
    assertThat(Float16.fromFloat(1f)).isEqualTo((short) 0x3c00);
    assertThat(Float16.fromFloat(-2f)).isEqualTo((short) 0xc000);
    assertThat(Float16.fromFloat(65504f)).isEqualTo((short) 0x7bff);
    assertThat(Float16.fromFloat(65519.996f)).isEqualTo((short) 0x7bff);
    assertThat(Float16.fromFloat(65520f)).isEqualTo(Float16.POSITIVE_INFINITY);
    assertThat(Float16.fromFloat(-1e9f)).isEqualTo(Float16.NEGATIVE_INFINITY);
    assertThat(Float16.fromFloat(1f + 0x1p-11f))
        .as("tie goes to even 1.0")
        .isEqualTo((short) 0x3c00);
    assertThat(Float16.fromFloat(1f + 3 * 0x1p-11f))
        .as("tie goes to even")
        .isEqualTo((short) 0x3c02);
    assertThat(Float16.fromFloat(0x1p-24f)).as("smallest subnormal").isEqualTo((short) 1);
    assertThat(Float16.fromFloat(0x1p-25f)).as("half of it ties to 0").isEqualTo((short) 0);
    assertThat(Float16.fromFloat(Math.nextUp(0x1p-25f))).isEqualTo((short) 1);
    assertThat(Float16.fromFloat(1.5f * 0x1p-24f)).as("1.5 units tie to 2").isEqualTo((short) 2);
    assertThat(Float16.fromFloat(2.5f * 0x1p-24f)).as("2.5 units tie to 2").isEqualTo((short) 2);
    assertThat(Float16.fromFloat(-0f)).isEqualTo((short) 0x8000);
    assertThat(Float16.fromFloat(Float.POSITIVE_INFINITY)).isEqualTo(Float16.POSITIVE_INFINITY);
    assertThat(REFERENCE.isNaN(Float16.fromFloat(Float.NaN))).isTrue();
    assertThat(REFERENCE.isNaN(Float16.fromFloat(Float.intBitsToFloat(0x7f800001))))
        .as("a NaN whose payload lies only in dropped bits")
        .isTrue();
    assertThat(Float16.toFloat(Float16.NAN)).isNaN();
    assertThat(Float16.toFloat((short) 0x3555)).isEqualTo(0.333251953125f);
  }

  @Test
  void bulkConversionsMatchTheScalarOnes() {
    short[] bits = {0x3c00, (short) 0xc000, 0x0001, 0x7bff};
    float[] floats = new float[6];
    Float16.toFloats(bits, 1, floats, 2, 3);
    assertThat(floats).containsExactly(0f, 0f, -2f, 0x1p-24f, 65504f, 0f);
    short[] back = new short[4];
    Float16.fromFloats(floats, 2, back, 0, 3);
    assertThat(back).containsExactly((short) 0xc000, (short) 0x0001, (short) 0x7bff, (short) 0);
  }

  private static void assertRoundsCorrectly(float value, long seed) {
    short actual = Float16.fromFloat(value);
    short expected = REFERENCE.round(value);
    if (Float.isNaN(value)) {
      assertThat(REFERENCE.isNaN(actual)).as("seed %d, NaN %08x", seed, bitsOf(value)).isTrue();
    } else {
      assertThat(actual & 0xffff)
          .as("seed %d, value %s (%08x)", seed, value, bitsOf(value))
          .isEqualTo(expected & 0xffff);
    }
  }

  private static int bitsOf(float value) {
    return Float.floatToRawIntBits(value);
  }
}

package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.Float16;
import io.embednorm.engine.TestSeeds;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The SIMD binary16 conversions give the bits of {@link Float16}'s scalar ones: every half widened,
 * and every float's rounding neighbourhood narrowed (each 13-bit rounding step of every half value,
 * at its ends, its middle and around it), plus random floats.
 */
class VectorHalvesTest {
  private static final RowPasses SCALAR = ScalarRowPasses.INSTANCE;

  @Test
  void everyHalfWidensToTheScalarBits() {
    short[] halves = new short[1 << 16];
    for (int i = 0; i < halves.length; i++) {
      halves[i] = (short) i;
    }
    // The whole table, and one element less so that the last seven go through the scalar tail.
    for (int count : new int[] {halves.length, halves.length - 1}) {
      float[] fromVector = new float[count];
      float[] fromScalar = new float[count];
      VectorHalves.toFloats(halves, fromVector, count);
      SCALAR.halvesToFloats(halves, fromScalar, count);
      for (int i = 0; i < count; i++) {
        assertThat(Float.floatToRawIntBits(fromVector[i]))
            .as("half 0x%04x", i)
            .isEqualTo(Float.floatToRawIntBits(fromScalar[i]));
      }
    }
  }

  @Test
  void floatsAroundEveryRoundingStepNarrowToTheScalarBits() {
    // Low 13 bits (what rounding drops for normal results): both ends, the halfway point and
    // its neighbours; the upper 19 bits (sign, exponent, kept mantissa) take every value.
    int[] lows = {0, 1, 0x7ff, 0xfff, 0x1000, 0x1001, 0x17ff, 0x1fff};
    float[] floats = new float[(1 << 19) * lows.length];
    int at = 0;
    for (int high = 0; high < 1 << 19; high++) {
      for (int low : lows) {
        floats[at++] = Float.intBitsToFloat((high << 13) | low);
      }
    }
    assertNarrowsAsScalar(floats, floats.length, "rounding steps");
    assertNarrowsAsScalar(floats, floats.length - 3, "rounding steps, scalar tail");
  }

  @Test
  void randomFloatsNarrowToTheScalarBits() {
    for (long seed : TestSeeds.seeds()) {
      System.out.println("VectorHalvesTest seed " + seed);
      Random random = new Random(seed);
      float[] floats = new float[1 << 20];
      for (int i = 0; i < floats.length; i++) {
        floats[i] =
            switch (random.nextInt(3)) {
              case 0 -> Float.intBitsToFloat(random.nextInt());
              // Where halves live, normal and subnormal, either sign.
              case 1 -> (float) (random.nextGaussian() * Math.scalb(1.0, random.nextInt(40) - 28));
              default -> (float) random.nextGaussian();
            };
      }
      assertNarrowsAsScalar(floats, floats.length, "seed " + seed);
    }
  }

  private static void assertNarrowsAsScalar(float[] floats, int count, String what) {
    short[] fromVector = new short[count];
    short[] fromScalar = new short[count];
    VectorHalves.toHalves(floats, fromVector, count);
    SCALAR.floatsToHalves(floats, fromScalar, count);
    for (int i = 0; i < count; i++) {
      if (fromVector[i] != fromScalar[i]) {
        assertThat(fromVector[i])
            .as(
                "%s: float 0x%08x (%s) at %d",
                what, Float.floatToRawIntBits(floats[i]), floats[i], i)
            .isEqualTo(fromScalar[i]);
      }
    }
  }
}

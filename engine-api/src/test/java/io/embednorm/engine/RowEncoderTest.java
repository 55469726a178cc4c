package io.embednorm.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class RowEncoderTest {

  @ParameterizedTest
  @EnumSource(Encoding.class)
  void encodesRandomRowsAsTheReferenceDoes(Encoding encoding) {
    for (long seed : TestSeeds.seeds()) {
      Random random = new Random(seed);
      for (int trial = 0; trial < 200; trial++) {
        int width = random.nextInt(40);
        float[] row = new float[width + 3];
        for (int i = 0; i < row.length; i++) {
          row[i] = (float) (random.nextGaussian() * Math.pow(10, random.nextInt(9) - 4));
        }
        assertEncodes(encoding, row, 3, width, "seed " + seed + " trial " + trial);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Encoding.class)
  void nastyRows(Encoding encoding) {
    float nan = Float.NaN;
    float infinity = Float.POSITIVE_INFINITY;
    float[][] rows = {
      {},
      {0f, 0f, -0f},
      {1f, nan, -1f},
      {1f, -infinity, 2f},
      {1e-44f, -1e-45f, 0f},
      {-0f, 0f, nan, -1f, 1f, 3f, -3f, 0f, 5f},
      {Float.MAX_VALUE, -Float.MAX_VALUE, 1f},
      // Rounding ties: of int8 (scale 1: 0.5, 1.5, 2.5), float16 (1 + 2^-11) and bfloat16 (1 +
      // 2^-8).
      {127f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 126.5f, 1f + 0x1p-11f, 1f + 0x1p-8f, 1f + 3 * 0x1p-8f},
    };
    for (int i = 0; i < rows.length; i++) {
      assertEncodes(encoding, rows[i], 0, rows[i].length, "row " + i);
    }
  }

  @Test
  void tiesRoundToEven() {
    ByteBuffer target = ByteBuffer.allocate(16);
    float scale =
        RowEncoder.encode(
            Encoding.INT8, new float[] {127f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f}, 0, 6, target, 0);
    assertThat(scale).isEqualTo(1f);
    assertThat(
            new byte[] {target.get(1), target.get(2), target.get(3), target.get(4), target.get(5)})
        .containsExactly(0, 2, 2, 0, -2);
    RowEncoder.encode(Encoding.BINARY, new float[] {-0f, Float.NaN, 1f, -1f, 0f}, 0, 5, target, 0);
    assertThat(target.get(0)).as("-0 and 0 give 1, NaN 0, padding 0").isEqualTo((byte) 0b10101);
  }

  @Test
  void layoutAndNames() {
    assertThat(Encoding.BINARY.rowBytes(9)).isEqualTo(2);
    assertThat(Encoding.INT8.rowBytes(9)).isEqualTo(9);
    assertThat(Encoding.FLOAT16.rowBytes(9)).isEqualTo(18);
    assertThat(Encoding.named(" BFloat16")).isEqualTo(Encoding.BFLOAT16);
    assertThatThrownBy(() -> Encoding.named("int4"))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot choose encoding: 'int4' is not one of float16, bfloat16, int8, binary");
  }

  private static void assertEncodes(
      Encoding encoding, float[] row, int offset, int width, String context) {
    int bytes = (int) encoding.rowBytes(width);
    ByteBuffer target = ByteBuffer.allocate(bytes + 5);
    for (int i = 0; i < target.capacity(); i++) {
      target.put(i, (byte) 0x5a);
    }
    float scale = RowEncoder.encode(encoding, row, offset, width, target, 2);
    EncodingReference.assertRow(encoding, row, offset, width, target, 2, scale, context);
    assertThat(target.get(1)).as("%s byte before the row", context).isEqualTo((byte) 0x5a);
    assertThat(target.get(2 + bytes)).as("%s byte after the row", context).isEqualTo((byte) 0x5a);
  }
}

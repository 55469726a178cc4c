package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.EncodingReference;
import io.embednorm.engine.RowEncoder;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The SIMD encoders write the bytes of {@link RowEncoder} and what the plain float64 {@link
 * EncodingReference} expects: random rows of every width up to 33 and a few wider ones (tails of
 * every length), and rows of nasty values: NaN with payloads, infinities, zeros, subnormals,
 * float16 and bfloat16 rounding ties and their neighbours, int8 quotients at half-way points.
 */
class VectorEncodingsTest {
  private static final byte SENTINEL = 0x5a;

  @ParameterizedTest
  @EnumSource(Encoding.class)
  void randomRowsEncodeAsTheReference(Encoding encoding) {
    for (long seed : TestSeeds.seeds()) {
      System.out.println("VectorEncodingsTest seed " + seed);
      Random random = new Random(TestSeeds.mix(seed, encoding.ordinal()));
      for (int trial = 0; trial < 400; trial++) {
        int width = trial < 340 ? trial % 34 : 34 + random.nextInt(800);
        float[] row = new float[width + 5];
        double magnitude = Math.scalb(1.0, random.nextInt(60) - 40);
        for (int i = 0; i < row.length; i++) {
          row[i] =
              random.nextInt(50) == 0
                  ? Float.intBitsToFloat(random.nextInt())
                  : (float) (random.nextGaussian() * magnitude);
        }
        assertEncodes(encoding, row, 5, width, "seed " + seed + " trial " + trial);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Encoding.class)
  void nastyRowsEncodeAsTheReference(Encoding encoding) {
    List<float[]> rows = nastyRows();
    for (int i = 0; i < rows.size(); i++) {
      float[] row = rows.get(i);
      // Every offset into the row's registers, so that each value meets every lane and the tail.
      for (int skip = 0; skip < Math.min(8, row.length + 1); skip++) {
        assertEncodes(encoding, row, skip, row.length - skip, "nasty row " + i + " from " + skip);
      }
    }
  }

  private static List<float[]> nastyRows() {
    float nan = Float.NaN;
    float infinity = Float.POSITIVE_INFINITY;
    List<float[]> rows = new ArrayList<>();
    rows.add(new float[] {});
    rows.add(new float[17]);
    rows.add(new float[] {-0f, 0f, -0f, 0f, -0f, 0f, -0f, 0f, -0f});
    rows.add(
        new float[] {
          1f,
          nan,
          -1f,
          Float.intBitsToFloat(0x7f800001),
          Float.intBitsToFloat(0xffc01234),
          0f,
          2f,
          Float.intBitsToFloat(0x7fbfffff),
          3f
        });
    rows.add(new float[] {1f, -infinity, 2f, 3f, 4f, 5f, 6f, 7f, 8f, 9f});
    rows.add(new float[] {infinity, 1f, 2f, 3f, 4f, 5f, 6f, 7f});
    rows.add(new float[] {Float.MAX_VALUE, -Float.MAX_VALUE, 1f, 65504f, 65519.99f, 65520f, 1e-8f});
    // Subnormal floats, and rows whose scale is subnormal or underflows to 0.
    float[] subnormals = new float[19];
    for (int i = 0; i < subnormals.length; i++) {
      subnormals[i] = Float.intBitsToFloat((i % 2 == 0 ? 0 : 0x80000000) | (i * 37 + 1));
    }
    rows.add(subnormals);
    rows.add(new float[] {1e-44f, -1e-45f, 0f, 3e-45f, 1e-43f, -1e-43f, 2e-42f, 1e-45f, 0f});
    // float16: around every rounding step of normal and subnormal halves, and the overflow edge.
    float[] halves = new float[8 * 64];
    int at = 0;
    for (int step = 0; step < 64; step++) {
      int high = (step * 0x1f1f) & 0x7ffff;
      for (int low : new int[] {0, 1, 0x7ff, 0xfff, 0x1000, 0x1001, 0x17ff, 0x1fff}) {
        halves[at++] = Float.intBitsToFloat((high << 13) | low);
      }
    }
    rows.add(halves);
    rows.add(
        new float[] {
          1f + 0x1p-11f,
          1f + 3 * 0x1p-11f,
          0x1p-25f,
          0x1.8p-25f,
          0x1p-24f + 0x1p-25f,
          65520f,
          -65520f,
          Math.nextDown(65520f),
          0x1.ffcp-15f,
          0x1p-14f - 0x1p-25f
        });
    // bfloat16 ties: 1 + 2^-8 (to even: down), 1 + 3·2^-8 (up), and the carry into infinity.
    rows.add(
        new float[] {
          1f + 0x1p-8f,
          1f + 3 * 0x1p-8f,
          -(1f + 0x1p-8f),
          Float.intBitsToFloat(0x7f7f8000),
          Float.intBitsToFloat(0x7f7fffff),
          Float.intBitsToFloat(0x00008000),
          1f + 0x1p-9f,
          2f
        });
    // int8 half-way quotients at scale 1 and at scales that are not powers of two.
    float[] ties = new float[1 + 2 * 127];
    ties[0] = 127f;
    for (int k = 0; k < 127; k++) {
      ties[1 + 2 * k] = k + 0.5f;
      ties[2 + 2 * k] = -(k + 0.5f);
    }
    rows.add(ties);
    for (float largest : new float[] {3f, 0.1f, 1e-30f, 1e30f, 7.77f, 1e-38f}) {
      float scale = largest / 127f;
      float[] row = new float[3 * 40 + 1];
      row[0] = largest;
      for (int k = 0; k < 40; k++) {
        float tie = (k * 3 + 0.5f) * scale;
        row[1 + 3 * k] = tie;
        row[2 + 3 * k] = Math.nextUp(k % 2 == 0 ? tie : -tie);
        row[3 + 3 * k] = Math.nextDown(tie);
      }
      rows.add(row);
    }
    return rows;
  }

  /**
   * The SIMD row equals RowEncoder's byte for byte and passes the reference; the bytes around it
   * are untouched.
   */
  private static void assertEncodes(
      Encoding encoding, float[] row, int offset, int width, String context) {
    int bytes = (int) encoding.rowBytes(width);
    byte[] simd = new byte[bytes + 6];
    byte[] scalar = new byte[bytes + 6];
    Arrays.fill(simd, SENTINEL);
    Arrays.fill(scalar, SENTINEL);
    float simdScale = VectorEncodings.encode(encoding, row, offset, width, simd, 3);
    float scalarScale = RowEncoder.encode(encoding, row, offset, width, scalar, 3);
    EncodingReference.assertRow(
        encoding, row, offset, width, ByteBuffer.wrap(simd), 3, simdScale, context);
    assertThat(Float.floatToRawIntBits(simdScale))
        .as("%s scale", context)
        .isEqualTo(Float.floatToRawIntBits(scalarScale));
    if (!Arrays.equals(simd, scalar)) {
      assertThat(simd).as("%s bytes against RowEncoder", context).containsExactly(scalar);
    }
  }
}

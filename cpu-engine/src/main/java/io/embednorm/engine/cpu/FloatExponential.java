package io.embednorm.engine.cpu;

/**
 * exp(x) for x ≤ 0 (and NaN) in float32 arithmetic, the softmax exponential: Math.exp in float64
 * was most of softmax's time, and this form vectorizes. Cody–Waite reduction x = n·ln2 + r with |r|
 * ≤ ln2/2, exp(r) = 1 + r + r²·P(r) with P of degree 3, and 2^n built from exponent bits.
 *
 * <p>P is a minimax fit of (exp(r) − 1 − r) / r² for exp's relative error
 * (benchmarks/scripts/exp_polynomial.py): over every float in [−87.68, 0] the result is within 2.26
 * ulp (1.82e-7 relative) of exp in float64, 55 times inside the 1e-5 of docs/SEMANTICS.md,
 * Accuracy. Cephes' degree-5 P is within 0.98 ulp but costs two more multiplications and additions
 * an element, and those set the exponentials' speed: 17 % more time on 512-bit registers.
 *
 * <p>Only multiplications and additions, no fused multiply-add, in an order that {@code
 * VectorRowPasses} repeats lane by lane: scalar and SIMD results are the same bits. Inputs are
 * first raised to {@link #FLOOR}, where n = −127 and 2^n's exponent bits are 0: every x ≤ −87.68
 * (including −inf) gives +0, without a comparison. Those exponentials are below float32's normal
 * range and far below the tolerance of a softmax whose largest term is exp(0) = 1. exp(0) = 1
 * exactly; NaN stays NaN.
 */
final class FloatExponential {
  /**
   * The least argument: x · log2(e) rounds to −127 here (−126.96), so 2^n is +0 and so is exp(x),
   * as for every smaller x.
   */
  static final float FLOOR = -88f;

  static final float LOG2_E = 1.44269504088896341f;

  /** 1.5·2^23: adding it rounds a float of magnitude below 2^22 to an integer in the low bits. */
  static final float ROUNDING = 0x1.8p23f;

  static final int ROUNDING_BITS = Float.floatToRawIntBits(ROUNDING);

  /** ln 2 split so that n · LN2_HIGH is exact for |n| below 2^15. */
  static final float LN2_HIGH = 0.693359375f;

  static final float LN2_LOW = -2.12194440e-4f;

  static final float P0 = 8.3125019446e-3f;
  static final float P1 = 4.1890129447e-2f;
  static final float P2 = 1.6667114198e-1f;
  static final float P3 = 4.9999231100e-1f;

  /**
   * Most elements per piece of {@link #exponentialsAndSums}: its scratch of arguments fits the L1
   * cache.
   */
  static final int PIECE = 512;

  private FloatExponential() {}

  /** exp(x) for x ≤ 0 or NaN. */
  static float exp(float x) {
    float floored = Math.max(x, FLOOR);
    float rounded = floored * LOG2_E + ROUNDING;
    float n = rounded - ROUNDING;
    float r = floored - n * LN2_HIGH - n * LN2_LOW;
    float polynomial = ((P0 * r + P1) * r + P2) * r + P3;
    float mantissa = polynomial * (r * r) + r + 1f;
    return mantissa * power(rounded);
  }

  /** 2^n from {@code rounded} = n + {@link #ROUNDING}, n in [−127, 0]: +0 for −127. */
  private static float power(float rounded) {
    return Float.intBitsToFloat((Float.floatToRawIntBits(rounded) + (127 - ROUNDING_BITS)) << 23);
  }

  /**
   * Row by row, e = exp(x − shifts[row]) for the {@code rows} rows of {@code width} elements from
   * {@code inputOffset} (the bits of {@link #exp} element by element), stored into the same layout
   * from {@code outputOffset} unless {@code output} is null, and {@code sums[row]} = Σ e in {@link
   * FloatSums#sumOfDifferences}' order with shift 0 (its blocks and lanes, {@link SumTree}): the
   * bits of summing the stored values. Input and output may be the same array at the same offset;
   * sums may be the shifts array.
   *
   * <p>Why not one loop of {@link #exp}: C2 (JDK 17) vectorizes no loop that moves bits between
   * float and int, nor one that loads and stores at two different offsets, and that loop alone took
   * longer than all of softmax's scalar passes take now. Here each piece of whole sum blocks (at
   * most {@link #PIECE} elements) is copied to the scratch of arguments, the polynomial runs there
   * (offsets from zero: vectorized) and stores n + ROUNDING and the mantissa, and a scalar loop per
   * block multiplies by the powers of two and adds each exponential to its lane as it goes, instead
   * of a second pass that reads them back.
   */
  static void exponentialsAndSums(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int rows,
      float[] shifts,
      float[] sums,
      RowScratch scratch) {
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(Math.multiplyExact(rows * blocks, 8));
    float[] arguments = scratch.exponentArguments();
    float[] mantissas = scratch.exponentMantissas();
    int row = 0;
    int block = 0;
    while (row < rows) {
      int pieceStart = row * width + (block == 0 ? 0 : ends[block - 1]);
      int length = 0;
      int lastRow = row;
      int lastBlock = block;
      do {
        length += blockLength(ends, lastBlock);
        if (++lastBlock == blocks) {
          lastBlock = 0;
          lastRow++;
        }
      } while (lastRow < rows && length + blockLength(ends, lastBlock) <= PIECE);
      System.arraycopy(input, inputOffset + pieceStart, arguments, 0, length);
      for (int from = 0; from < length; ) {
        int rowOfPiece = (pieceStart + from) / width;
        int to = Math.min(length, (rowOfPiece + 1) * width - pieceStart);
        subtract(arguments, from, to, shifts[rowOfPiece]);
        from = to;
      }
      mantissas(arguments, mantissas, length);
      for (int at = 0; row != lastRow || block != lastBlock; ) {
        int size = blockLength(ends, block);
        int lane = (row * blocks + block) * 8;
        blockLanes(arguments, mantissas, at, size, output, outputOffset + pieceStart, lanes, lane);
        at += size;
        if (++block == blocks) {
          block = 0;
          row++;
        }
      }
    }
    tree.sums(lanes, rows, sums);
  }

  /** The length of a row's block, from the block ends of its {@link SumTree}. */
  private static int blockLength(int[] ends, int block) {
    return ends[block] - (block == 0 ? 0 : ends[block - 1]);
  }

  /**
   * The eight lanes of one sum block (its element j in lane j % 8, a tail in lanes 0 to 6) of the
   * exponentials mantissas[i] · 2^n, n from arguments[i], for i in [from, from + length); each also
   * stored at output[outputOffset + i] unless output is null (a test C2 takes out of the loop).
   */
  private static void blockLanes(
      float[] arguments,
      float[] mantissas,
      int from,
      int length,
      float[] output,
      int outputOffset,
      float[] lanes,
      int lane) {
    float lane0 = 0f;
    float lane1 = 0f;
    float lane2 = 0f;
    float lane3 = 0f;
    float lane4 = 0f;
    float lane5 = 0f;
    float lane6 = 0f;
    float lane7 = 0f;
    int index = from;
    for (int end = from + (length & ~7); index < end; index += 8) {
      float e0 = mantissas[index] * power(arguments[index]);
      float e1 = mantissas[index + 1] * power(arguments[index + 1]);
      float e2 = mantissas[index + 2] * power(arguments[index + 2]);
      float e3 = mantissas[index + 3] * power(arguments[index + 3]);
      float e4 = mantissas[index + 4] * power(arguments[index + 4]);
      float e5 = mantissas[index + 5] * power(arguments[index + 5]);
      float e6 = mantissas[index + 6] * power(arguments[index + 6]);
      float e7 = mantissas[index + 7] * power(arguments[index + 7]);
      if (output != null) {
        int at = outputOffset + index;
        output[at] = e0;
        output[at + 1] = e1;
        output[at + 2] = e2;
        output[at + 3] = e3;
        output[at + 4] = e4;
        output[at + 5] = e5;
        output[at + 6] = e6;
        output[at + 7] = e7;
      }
      lane0 += e0;
      lane1 += e1;
      lane2 += e2;
      lane3 += e3;
      lane4 += e4;
      lane5 += e5;
      lane6 += e6;
      lane7 += e7;
    }
    lanes[lane] = lane0;
    lanes[lane + 1] = lane1;
    lanes[lane + 2] = lane2;
    lanes[lane + 3] = lane3;
    lanes[lane + 4] = lane4;
    lanes[lane + 5] = lane5;
    lanes[lane + 6] = lane6;
    lanes[lane + 7] = lane7;
    for (int end = from + length; index < end; index++, lane++) {
      float e = mantissas[index] * power(arguments[index]);
      if (output != null) {
        output[outputOffset + index] = e;
      }
      lanes[lane] += e;
    }
  }

  /** arguments[i] −= shift for i in [from, to): one row's part of a piece. */
  private static void subtract(float[] arguments, int from, int to, float shift) {
    for (int i = from; i < to; i++) {
      arguments[i] -= shift;
    }
  }

  /**
   * For x = arguments[i], i below {@code length}: n + ROUNDING stored back into arguments and exp's
   * polynomial part into mantissas. One loop over the whole piece, apart from the subtraction of
   * each row's shift: in loops as short as a narrow row, the floor's Math.max cost C2's vector
   * loops their speed (width 32: 15-35 % slower).
   */
  private static void mantissas(float[] arguments, float[] mantissas, int length) {
    for (int i = 0; i < length; i++) {
      float floored = Math.max(arguments[i], FLOOR);
      float rounded = floored * LOG2_E + ROUNDING;
      float n = rounded - ROUNDING;
      float r = floored - n * LN2_HIGH - n * LN2_LOW;
      float polynomial = ((P0 * r + P1) * r + P2) * r + P3;
      arguments[i] = rounded;
      mantissas[i] = polynomial * (r * r) + r + 1f;
    }
  }
}

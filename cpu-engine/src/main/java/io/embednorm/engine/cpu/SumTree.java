package io.embednorm.engine.cpu;

/**
 * The shape of {@link FloatSums}' reduction of a row of one width, written out: its blocks in order
 * (each at most {@link FloatSums#BLOCK} elements, starting at a multiple of 8) and, after each
 * block, how many pairs of subtrees close there. With it the SIMD passes accumulate every block of
 * every row of a group in one loop, without recursion, and add the block sums afterwards in exactly
 * FloatSums' order: a row's bits are the scalar loop's.
 *
 * <p>Per thread (in {@link RowScratch}), rebuilt only when the width changes.
 */
final class SumTree {
  private int width = -1;
  private int blocks;
  private int uniformLength;
  private boolean halving;
  private int[] ends = new int[1];
  private int[] closes = new int[1];
  private float[] stack = new float[64];
  private float[] combined = new float[1];

  /** This tree for rows of {@code width} elements (at least 1). */
  SumTree forWidth(int width) {
    if (width != this.width) {
      int most = width / 64 + 2;
      if (ends.length < most) {
        ends = new int[most];
        closes = new int[most];
        combined = new float[most];
      }
      blocks = 0;
      build(0, width);
      uniformLength = ends[0] % 8 == 0 ? ends[0] : 0;
      for (int block = 1; block < blocks && uniformLength > 0; block++) {
        if (ends[block] - ends[block - 1] != uniformLength) {
          uniformLength = 0;
        }
      }
      // 2^k blocks of one block length: FloatSums halves the row exactly at every level.
      halving =
          uniformLength == FloatSums.BLOCK
              && Integer.bitCount(blocks) == 1
              && blocks * FloatSums.BLOCK == width;
      this.width = width;
    }
    return this;
  }

  /** Blocks per row. */
  int blocks() {
    return blocks;
  }

  /**
   * The length of every block when all blocks of the row have one length, a multiple of 8 (as for
   * widths 256, 768, 1024, 4096, 32768), else 0.
   */
  int uniformLength() {
    return uniformLength;
  }

  /** Where each block ends, counted from the start of the row; {@code blocks()} entries. */
  int[] ends() {
    return ends;
  }

  /**
   * {@code sums[row]} for each row below {@code count}, from the eight lanes of every block of
   * every row, stored row by row and block by block from {@code lanes[0]}: each block's lanes
   * combined as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), the blocks as FloatSums'
   * recursive halving adds them.
   */
  void sums(float[] lanes, int count, float[] sums) {
    for (int row = 0; row < count; row++) {
      sums[row] = sum(lanes, row * blocks * 8);
    }
  }

  /** One row's sum, as {@link #sums} adds it, from the lanes of its blocks at {@code at}. */
  float sum(float[] lanes, int at) {
    if (blocks == 1) {
      return combine(lanes, at);
    }
    for (int block = 0; block < blocks; block++, at += 8) {
      combined[block] = combine(lanes, at);
    }
    return sumOfBlocks(combined, 0);
  }

  /**
   * {@code sums[row]} for each row below {@code count}, as {@link #sums} adds them, from each
   * block's sum (its eight lanes already combined), stored row by row from {@code blockSums[0]}.
   * Overwrites {@code blockSums}.
   */
  void sumsOfBlocks(float[] blockSums, int count, float[] sums) {
    for (int row = 0, at = 0; row < count; row++, at += blocks) {
      sums[row] = sumOfBlocks(blockSums, at);
    }
  }

  /**
   * One row's sum from its block sums at {@code at}: the blocks as FloatSums' recursive halving
   * adds them. Overwrites them where the tree is complete.
   */
  private float sumOfBlocks(float[] blockSums, int at) {
    if (blocks == 1) {
      return blockSums[at];
    }
    if (halving) {
      return sumByHalving(blockSums, at);
    }
    int depth = 0;
    for (int block = 0; block < blocks; block++) {
      float sum = blockSums[at + block];
      for (int close = closes[block]; close > 0; close--) {
        sum = stack[--depth] + sum;
      }
      stack[depth++] = sum;
    }
    return stack[0];
  }

  /**
   * {@link #sumOfBlocks} where the tree is complete (2^k blocks, each pair of neighbours closing
   * before the next level): level by level in place, the same additions with no chain through the
   * stack.
   */
  private float sumByHalving(float[] blockSums, int at) {
    for (int length = blocks; length > 1; length >>>= 1) {
      for (int pair = 0, half = length >>> 1; pair < half; pair++) {
        blockSums[at + pair] = blockSums[at + 2 * pair] + blockSums[at + 2 * pair + 1];
      }
    }
    return blockSums[at];
  }

  /** ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) of the lanes at {@code at}. */
  static float combine(float[] lanes, int at) {
    return ((lanes[at] + lanes[at + 1]) + (lanes[at + 2] + lanes[at + 3]))
        + ((lanes[at + 4] + lanes[at + 5]) + (lanes[at + 6] + lanes[at + 7]));
  }

  /**
   * The blocks of elements [start, start + count), as FloatSums splits them: the left half's
   * blocks, then the right half's, then one more pair closes after the last block.
   */
  private void build(int start, int count) {
    if (count <= FloatSums.BLOCK) {
      ends[blocks] = start + count;
      closes[blocks] = 0;
      blocks++;
      return;
    }
    int half = FloatSums.firstHalf(count);
    build(start, half);
    build(start + half, count - half);
    closes[blocks - 1]++;
  }
}

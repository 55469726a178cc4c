package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.TestSeeds;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The tree of block sums that the SIMD reductions share with {@link FloatSums}: both ways of adding
 * a row's blocks must give the bits of FloatSums' recursive halving, written out plainly here.
 */
class SumTreeTest {
  // 2^k blocks of 128 (1024, 2048, 4096, 32768) take the level-by-level halving; the others the
  // stack; 1 to 128 one block.
  private static final int[] WIDTHS = {
    1, 8, 100, 128, 129, 256, 300, 384, 768, 1000, 1024, 2048, 4096, 4099, 6000, 32768
  };

  @Test
  void blockSumsAddUpInFloatSumsOrder() {
    for (long seed : TestSeeds.seeds()) {
      for (int width : WIDTHS) {
        for (int count : new int[] {1, 3, 9}) {
          Random random = new Random(TestSeeds.mix(seed, width, count));
          SumTree tree = new SumTree().forWidth(width);
          int blocks = tree.blocks();
          float[] lanes = new float[count * blocks * 8];
          for (int i = 0; i < lanes.length; i++) {
            // Magnitudes spread over 2^±20, so that the order of the additions shows in the bits.
            lanes[i] = (float) (random.nextGaussian() * Math.scalb(1.0, random.nextInt(41) - 20));
          }
          float[] blockSums = new float[count * blocks];
          for (int block = 0; block < blockSums.length; block++) {
            blockSums[block] = SumTree.combine(lanes, 8 * block);
          }
          float[] fromLanes = new float[count];
          float[] fromBlocks = new float[count];
          tree.sums(lanes, count, fromLanes);
          tree.sumsOfBlocks(blockSums, count, fromBlocks);
          for (int row = 0; row < count; row++) {
            int[] next = {row * blocks};
            float expected = halvings(lanes, next, width);
            String what = "seed " + seed + ", width " + width + ", row " + row + " of " + count;
            assertThat(next[0]).as(what).isEqualTo((row + 1) * blocks);
            assertThat(fromLanes[row]).as(what).isEqualTo(expected);
            assertThat(fromBlocks[row]).as(what).isEqualTo(expected);
          }
        }
      }
    }
  }

  /**
   * FloatSums' order: rows of up to 128 elements are one block (its lanes combined in pairs),
   * longer ones split at about half, a multiple of 8, and the halves added; {@code next[0]} is the
   * next block's index.
   */
  private static float halvings(float[] lanes, int[] next, int count) {
    if (count <= 128) {
      int at = 8 * next[0]++;
      return ((lanes[at] + lanes[at + 1]) + (lanes[at + 2] + lanes[at + 3]))
          + ((lanes[at + 4] + lanes[at + 5]) + (lanes[at + 6] + lanes[at + 7]));
    }
    int half = (count / 2) / 8 * 8;
    float first = halvings(lanes, next, half);
    return first + halvings(lanes, next, count - half);
  }
}

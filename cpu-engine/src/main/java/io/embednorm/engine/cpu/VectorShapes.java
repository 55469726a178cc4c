package io.embednorm.engine.cpu;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.Vector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * What the other Vector API classes share: the species and lane counts, the masks and shuffles of
 * the lane folds, the lane folds themselves (a row's eight lanes to its sum or maximum, eight rows
 * at a time in registers; the lanes of a row's blocks in {@link SumTree}'s order), and float32 to
 * float64 and back through a per-thread array, which keeps shape changes out of the loops. Keeps
 * {@link VectorRowPasses}' rules for the Vector API.
 */
final class VectorShapes {
  static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  static final VectorSpecies<Double> DOUBLES = DoubleVector.SPECIES_256;
  static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;
  static final int FLOAT_LANES = 8;
  static final int DOUBLE_LANES = 4;
  static final int BLOCK = FloatSums.BLOCK;

  /** Elements per step of a flat loop: four registers, in order. */
  static final int STEP = 4 * 8;

  /**
   * Lanes 1, 3, 5, 7; 2, 3, 6, 7; 4-7: the upper lane of each pair that a round of {@link
   * #sumsOfEightRows} adds.
   */
  static final VectorMask<Float> UPPER_OF_ONES =
      VectorMask.fromValues(FLOATS, false, true, false, true, false, true, false, true);

  static final VectorMask<Float> UPPER_OF_TWOS =
      VectorMask.fromValues(FLOATS, false, false, true, true, false, false, true, true);

  static final VectorMask<Float> UPPER_OF_FOURS =
      VectorMask.fromValues(FLOATS, false, false, false, false, true, true, true, true);

  /** Lane i from lane i ^ 1, i ^ 2 and i ^ 4. */
  static final VectorShuffle<Float> SWAP_ONES =
      VectorShuffle.fromValues(FLOATS, 1, 0, 3, 2, 5, 4, 7, 6);

  static final VectorShuffle<Float> SWAP_TWOS =
      VectorShuffle.fromValues(FLOATS, 2, 3, 0, 1, 6, 7, 4, 5);

  static final VectorShuffle<Float> SWAP_FOURS =
      VectorShuffle.fromValues(FLOATS, 4, 5, 6, 7, 0, 1, 2, 3);

  /**
   * The class of {@link #FLOATS}' vectors, a constant to C2, which every store and every call on a
   * loop's running register casts to first ({@link VectorRowPasses} says why).
   */
  static final Class<? extends Vector<Float>> FLOAT_CLASS = FLOATS.vectorType();

  private VectorShapes() {}

  /**
   * Rows of one block and whole registers, where a pass runs as one loop over all the registers of
   * the group, counting where each row ends: a separate loop per narrow row costs C2's loop set-up
   * (several dozen instructions) for a few registers of work. In such a loop only ints may change
   * at a row's end (C2 boxes a vector assigned in a branch): partial sums accumulate in the lanes
   * array, and each register reads its row's factors from their arrays.
   */
  static boolean isFlat(int width) {
    return width <= BLOCK && width % STEP == 0;
  }

  /**
   * The maximum of each row's eight lanes (any order gives the same value): eight rows at a time
   * ({@link #maximaOfEightRows}), then one reduction per row, where seven Math.max cost about four
   * times as much.
   */
  static void maximaOfLanes(float[] lanes, int count, float[] maxima) {
    int row = 0;
    for (; row + FLOAT_LANES <= count; row += FLOAT_LANES) {
      maximaOfEightRows(lanes, row * FLOAT_LANES, maxima, row);
    }
    for (; row < count; row++) {
      maxima[row] =
          FloatVector.fromArray(FLOATS, lanes, row * FLOAT_LANES).reduceLanes(VectorOperators.MAX);
    }
  }

  /**
   * {@code maxima[to + r]} = the maximum of the eight floats at {@code lanes[at + 8r]}, r = 0 … 7:
   * {@link #sumsOfEightRows}' three folds with max for add, 7 register folds for 8 rows instead of
   * 8 reductions. Written out again rather than shared: a fold taking its operator would pass C2 an
   * operator it sees as constant only where the call is inlined, and the Vector API falls back to
   * Java objects where it is not.
   */
  private static void maximaOfEightRows(float[] lanes, int at, float[] maxima, int to) {
    FloatVector r0 = FloatVector.fromArray(FLOATS, lanes, at);
    FloatVector r1 = FloatVector.fromArray(FLOATS, lanes, at + 8);
    FloatVector r2 = FloatVector.fromArray(FLOATS, lanes, at + 16);
    FloatVector r3 = FloatVector.fromArray(FLOATS, lanes, at + 24);
    FloatVector r4 = FloatVector.fromArray(FLOATS, lanes, at + 32);
    FloatVector r5 = FloatVector.fromArray(FLOATS, lanes, at + 40);
    FloatVector r6 = FloatVector.fromArray(FLOATS, lanes, at + 48);
    FloatVector r7 = FloatVector.fromArray(FLOATS, lanes, at + 56);
    FloatVector p01 =
        r0.blend(r1, UPPER_OF_ONES).max(r1.blend(r0, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p23 =
        r2.blend(r3, UPPER_OF_ONES).max(r3.blend(r2, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p45 =
        r4.blend(r5, UPPER_OF_ONES).max(r5.blend(r4, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p67 =
        r6.blend(r7, UPPER_OF_ONES).max(r7.blend(r6, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector q0123 =
        p01.blend(p23, UPPER_OF_TWOS).max(p23.blend(p01, UPPER_OF_TWOS).rearrange(SWAP_TWOS));
    FloatVector q4567 =
        p45.blend(p67, UPPER_OF_TWOS).max(p67.blend(p45, UPPER_OF_TWOS).rearrange(SWAP_TWOS));
    FloatVector eightMaxima =
        q0123
            .blend(q4567, UPPER_OF_FOURS)
            .max(q4567.blend(q0123, UPPER_OF_FOURS).rearrange(SWAP_FOURS));
    ((FloatVector) FLOAT_CLASS.cast(eightMaxima)).intoArray(maxima, to);
  }

  /**
   * {@code sums[row]} as {@link SumTree#sums} adds them from a group's block lanes. From 16 blocks
   * in the group the lanes of each block are combined eight blocks at a time ({@link #sumsOfLanes})
   * before the blocks are added in the tree's order: the same additions, without a scalar combine
   * per block and a chain through the tree's stack. Σd and Σd² of a row took a tenth less time at
   * width 4096 and a fifth less at 32768; at 8 blocks (width 1024) the scalar combine was 8 %
   * faster.
   */
  static void treeSums(RowScratch scratch, SumTree tree, float[] lanes, int count, float[] sums) {
    int blocks = count * tree.blocks();
    if (blocks < 2 * FLOAT_LANES) {
      tree.sums(lanes, count, sums);
      return;
    }
    float[] blockSums = scratch.blockSums(blocks);
    sumsOfLanes(lanes, blocks, blockSums);
    tree.sumsOfBlocks(blockSums, count, sums);
  }

  /**
   * {@code sums[row]} = {@link SumTree#combine} of the eight lanes at {@code lanes[8 · row]}, for
   * each row below {@code count}: eight rows at a time ({@link #sumsOfEightRows}), the rest one by
   * one.
   */
  static void sumsOfLanes(float[] lanes, int count, float[] sums) {
    int row = 0;
    for (; row + FLOAT_LANES <= count; row += FLOAT_LANES) {
      sumsOfEightRows(lanes, row * FLOAT_LANES, FLOAT_LANES, 1f, sums, row);
    }
    for (; row < count; row++) {
      sums[row] = SumTree.combine(lanes, row * FLOAT_LANES);
    }
  }

  /**
   * {@code sums[to + r]} = {@link SumTree#combine} of the eight floats at {@code source[at + r ·
   * stride]}, each multiplied by {@code factor} first, for r = 0 … 7. Three rounds add lanes 1, 2
   * and 4 apart, as combine's three levels do; each round folds two registers into one (rows side
   * by side), so that after the third lane r holds row r. Against a horizontal sum per row this
   * takes 7 register folds for 8 rows instead of 8 stores and 8 × 7 scalar loads and adds.
   */
  static void sumsOfEightRows(
      float[] source, int at, int stride, float factor, float[] sums, int to) {
    FloatVector scale = FloatVector.broadcast(FLOATS, factor);
    FloatVector r0 = FloatVector.fromArray(FLOATS, source, at).mul(scale);
    FloatVector r1 = FloatVector.fromArray(FLOATS, source, at + stride).mul(scale);
    FloatVector r2 = FloatVector.fromArray(FLOATS, source, at + 2 * stride).mul(scale);
    FloatVector r3 = FloatVector.fromArray(FLOATS, source, at + 3 * stride).mul(scale);
    FloatVector r4 = FloatVector.fromArray(FLOATS, source, at + 4 * stride).mul(scale);
    FloatVector r5 = FloatVector.fromArray(FLOATS, source, at + 5 * stride).mul(scale);
    FloatVector r6 = FloatVector.fromArray(FLOATS, source, at + 6 * stride).mul(scale);
    FloatVector r7 = FloatVector.fromArray(FLOATS, source, at + 7 * stride).mul(scale);
    // Lane i of a fold of (a, b): a[i] + a[i ^ s] where bit s of i is clear, b[i] + b[i ^ s] where
    // it is set.
    FloatVector p01 =
        r0.blend(r1, UPPER_OF_ONES).add(r1.blend(r0, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p23 =
        r2.blend(r3, UPPER_OF_ONES).add(r3.blend(r2, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p45 =
        r4.blend(r5, UPPER_OF_ONES).add(r5.blend(r4, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p67 =
        r6.blend(r7, UPPER_OF_ONES).add(r7.blend(r6, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector q0123 =
        p01.blend(p23, UPPER_OF_TWOS).add(p23.blend(p01, UPPER_OF_TWOS).rearrange(SWAP_TWOS));
    FloatVector q4567 =
        p45.blend(p67, UPPER_OF_TWOS).add(p67.blend(p45, UPPER_OF_TWOS).rearrange(SWAP_TWOS));
    FloatVector eightSums =
        q0123
            .blend(q4567, UPPER_OF_FOURS)
            .add(q4567.blend(q0123, UPPER_OF_FOURS).rearrange(SWAP_FOURS));
    ((FloatVector) FLOAT_CLASS.cast(eightSums)).intoArray(sums, to);
  }

  /**
   * The first {@code count} values as doubles, in a per-thread array whose length is a multiple of
   * four and at least {@code count} (the lanes past count hold stale values that are never read
   * back).
   */
  static double[] widen(float[] values, int count) {
    double[] wide = RowScratch.current().rowDoubles(0);
    for (int i = 0; i < count; i++) {
      wide[i] = values[i];
    }
    return wide;
  }

  static void narrow(double[] wide, float[] values, int count) {
    for (int i = 0; i < count; i++) {
      values[i] = (float) wide[i];
    }
  }
}

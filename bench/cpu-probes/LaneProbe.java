import jdk.incubator.vector.*;
import java.util.*;
/**
 * Rows of 32, 24 in the cache: LayerNorm's per-row lane registers (Σd and Σd², stored), then their
 * eight lanes added per row three ways, ns a row: folded eight rows to a register (blend, shuffle,
 * add), in scalar code in FloatSums' order, and by {@code reduceLanes}. Standalone: {@code java
 * --add-modules jdk.incubator.vector LaneProbe.java}.
 */
public class LaneProbe {
  static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
  static final VectorMask<Float> U1 = VectorMask.fromValues(F, false, true, false, true, false, true, false, true);
  static final VectorMask<Float> U2 = VectorMask.fromValues(F, false, false, true, true, false, false, true, true);
  static final VectorMask<Float> U4 = VectorMask.fromValues(F, false, false, false, false, true, true, true, true);
  static final VectorShuffle<Float> S1 = VectorShuffle.fromValues(F, 1, 0, 3, 2, 5, 4, 7, 6);
  static final VectorShuffle<Float> S2 = VectorShuffle.fromValues(F, 2, 3, 0, 1, 6, 7, 4, 5);
  static final VectorShuffle<Float> S4 = VectorShuffle.fromValues(F, 4, 5, 6, 7, 0, 1, 2, 3);

  static void lanes(float[] v, int count, float[] shifts, float[] sl, float[] ql) {
    for (int row = 0, index = 0; row < count; row++, index += 32) {
      FloatVector shift = FloatVector.broadcast(F, shifts[row]);
      FloatVector a = FloatVector.fromArray(F, v, index).sub(shift);
      FloatVector b = FloatVector.fromArray(F, v, index + 8).sub(shift);
      FloatVector c = FloatVector.fromArray(F, v, index + 16).sub(shift);
      FloatVector d = FloatVector.fromArray(F, v, index + 24).sub(shift);
      FloatVector.zero(F).add(a).add(b).add(c).add(d).intoArray(sl, row * 8);
      FloatVector.zero(F).add(a.mul(a)).add(b.mul(b)).add(c.mul(c)).add(d.mul(d)).intoArray(ql, row * 8);
    }
  }
  static void eight(float[] src, int at, float[] sums, int to) {
    FloatVector r0 = FloatVector.fromArray(F, src, at);
    FloatVector r1 = FloatVector.fromArray(F, src, at + 8);
    FloatVector r2 = FloatVector.fromArray(F, src, at + 16);
    FloatVector r3 = FloatVector.fromArray(F, src, at + 24);
    FloatVector r4 = FloatVector.fromArray(F, src, at + 32);
    FloatVector r5 = FloatVector.fromArray(F, src, at + 40);
    FloatVector r6 = FloatVector.fromArray(F, src, at + 48);
    FloatVector r7 = FloatVector.fromArray(F, src, at + 56);
    FloatVector p01 = r0.blend(r1, U1).add(r1.blend(r0, U1).rearrange(S1));
    FloatVector p23 = r2.blend(r3, U1).add(r3.blend(r2, U1).rearrange(S1));
    FloatVector p45 = r4.blend(r5, U1).add(r5.blend(r4, U1).rearrange(S1));
    FloatVector p67 = r6.blend(r7, U1).add(r7.blend(r6, U1).rearrange(S1));
    FloatVector q0 = p01.blend(p23, U2).add(p23.blend(p01, U2).rearrange(S2));
    FloatVector q1 = p45.blend(p67, U2).add(p67.blend(p45, U2).rearrange(S2));
    q0.blend(q1, U4).add(q1.blend(q0, U4).rearrange(S4)).intoArray(sums, to);
  }
  static void butterfly(float[] l, int count, float[] sums) {
    int row = 0;
    for (; row + 8 <= count; row += 8) eight(l, row * 8, sums, row);
  }
  static void scalar(float[] l, int count, float[] sums) {
    for (int row = 0; row < count; row++) {
      int at = row * 8;
      sums[row] = ((l[at] + l[at + 1]) + (l[at + 2] + l[at + 3])) + ((l[at + 4] + l[at + 5]) + (l[at + 6] + l[at + 7]));
    }
  }
  static void reduce(float[] l, int count, float[] sums) {
    for (int row = 0; row < count; row++) sums[row] = FloatVector.fromArray(F, l, row * 8).reduceLanes(VectorOperators.ADD);
  }
  public static void main(String[] a) {
    int rows = 24;
    Random r = new Random(1);
    float[] v = new float[rows * 32];
    for (int i = 0; i < v.length; i++) v[i] = (float) r.nextGaussian();
    float[] sh = new float[64], sl = new float[512], ql = new float[512], s1 = new float[64], s2 = new float[64];
    long reps = 3_000_000L;
    String[] names = {"lanes only", "lanes+butterfly", "lanes+scalar", "lanes+reduceLanes", "butterfly only", "scalar only"};
    double[][] t = new double[names.length][10];
    for (int round = 0; round < 10; round++) {
      for (int p = 0; p < names.length; p++) {
        long t0 = System.nanoTime();
        for (long k = 0; k < reps; k++) {
          switch (p) {
            case 0: lanes(v, rows, sh, sl, ql); break;
            case 1: lanes(v, rows, sh, sl, ql); butterfly(sl, rows, s1); butterfly(ql, rows, s2); break;
            case 2: lanes(v, rows, sh, sl, ql); scalar(sl, rows, s1); scalar(ql, rows, s2); break;
            case 3: lanes(v, rows, sh, sl, ql); reduce(sl, rows, s1); reduce(ql, rows, s2); break;
            case 4: butterfly(sl, rows, s1); butterfly(ql, rows, s2); break;
            case 5: scalar(sl, rows, s1); scalar(ql, rows, s2); break;
          }
        }
        t[p][round] = (System.nanoTime() - t0) / (double) (reps * rows);
      }
    }
    for (int p = 0; p < names.length; p++) {
      double[] x = Arrays.copyOfRange(t[p], 3, 10); Arrays.sort(x);
      System.out.printf("%-20s median %.2f ns/row%n", names[p], x[3]);
    }
  }
}

package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import java.util.*;
/**
 * One op at one width on the 512-bit-exponential SIMD passes, one chunk in the cache, after
 * another op ran in the same JVM (or none): ns per element, min and median of the last rounds.
 * Args: FIRST-OP|none WIDTH OP. Showed stores whose species C2 took from a profile the 512-bit
 * stores share (2026-11-27, docs/PERFORMANCE.md).
 */
public class MixedProbe {
  @SuppressWarnings("unchecked")
  public static void main(String[] a) throws Exception {
    List<RowPasses> passes = (List<RowPasses>) Class.forName("io.embednorm.kernels.cpu.VectorRowPasses").getDeclaredMethod("variants").invoke(null);
    RowPasses pass = passes.get(1);
    int width = Integer.parseInt(a[1]);
    if (!a[0].equals("none")) run(pass, Op.valueOf(a[0].toUpperCase()), width, 6);
    run(pass, Op.valueOf(a[2].toUpperCase()), width, 12);
  }
  static void run(RowPasses pass, Op op, int width, int rounds) {
    int rows = Math.max(1, 768 / width);
    Normalization n = Normalization.of(op);
    Random r = new Random(1);
    float[][] data = new float[64][rows * width];
    for (float[] d : data) for (int i = 0; i < d.length; i++) d[i] = (float) r.nextGaussian();
    float[] v = new float[rows * width];
    long reps = 1_000_000L * 768 / (rows * width);
    double[] t = new double[rounds];
    for (int round = 0; round < rounds; round++) {
      long t0 = System.nanoTime();
      for (long k = 0; k < reps; k++) {
        System.arraycopy(data[(int) (k & 63)], 0, v, 0, v.length);
        CpuKernels.normalizeRows(pass, n, v, 0, v, 0, width, rows);
      }
      t[round] = (System.nanoTime() - t0) / (double) (reps * rows * width);
    }
    double[] s = Arrays.copyOfRange(t, rounds / 2, rounds); Arrays.sort(s);
    System.out.printf("%s %d min %.3f median %.3f ns/element%n", op, width, s[0], s[s.length / 2]);
  }
}

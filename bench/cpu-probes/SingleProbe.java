package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import java.util.*;
/**
 * One form of the SIMD passes (0: 256-bit exponentials, 1: 512-bit) on one chunk in the cache, in a
 * fresh JVM: ns per element, min and median of the rounds after the fourth. Args: OP WIDTH FORM
 * [ROUNDS].
 */
public class SingleProbe {
  @SuppressWarnings("unchecked")
  public static void main(String[] a) throws Exception {
    Op op = Op.valueOf(a[0].toUpperCase());
    int width = Integer.parseInt(a[1]);
    int variant = Integer.parseInt(a[2]);
    int rounds = a.length > 3 ? Integer.parseInt(a[3]) : 12;
    int rows = Math.max(1, 768 / width);
    Normalization n = Normalization.of(op);
    List<RowPasses> passes = (List<RowPasses>) Class.forName("io.embednorm.kernels.cpu.VectorRowPasses").getDeclaredMethod("variants").invoke(null);
    RowPasses pass = passes.get(variant);
    Random r = new Random(1);
    int sets = 64;
    float[][] data = new float[sets][rows * width];
    for (float[] d : data) for (int i = 0; i < d.length; i++) d[i] = (float) r.nextGaussian();
    float[] v = new float[rows * width];
    long reps = 1_000_000L * 768 / (rows * width);
    double[] t = new double[rounds];
    for (int round = 0; round < rounds; round++) {
      long t0 = System.nanoTime();
      for (long k = 0; k < reps; k++) {
        float[] d = data[(int) (k & (sets - 1))];
        System.arraycopy(d, 0, v, 0, v.length);
        CpuKernels.normalizeRows(pass, n, v, 0, v, 0, width, rows);
      }
      t[round] = (System.nanoTime() - t0) / (double) (reps * rows * width);
    }
    double[] s = Arrays.copyOfRange(t, 4, rounds); Arrays.sort(s);
    System.out.printf("%s %d %-45s min %.3f median %.3f ns/element%n", op, width, pass.description(), s[0], s[s.length/2]);
  }
}

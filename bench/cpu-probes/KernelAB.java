package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import java.util.*;
/**
 * The SIMD passes' forms ({@code VectorRowPasses.variants()}: 256-bit, then 512-bit where it
 * applies) in turn in one JVM, on one chunk of rows held in the L1/L2 cache: ns per element of
 * {@code CpuKernels.normalizeRows}, the minimum and median of rounds 5-12. Args: OP WIDTH [CHUNK
 * ELEMENTS, 768]. In one JVM both forms share the host's phase, which separate JVMs do not
 * (2026-11-27, later morning, docs/PERFORMANCE.md).
 */
public class KernelAB {
  @SuppressWarnings("unchecked")
  public static void main(String[] a) throws Exception {
    Op op = Op.valueOf(a[0].toUpperCase());
    int width = Integer.parseInt(a[1]);
    int chunk = a.length > 2 ? Integer.parseInt(a[2]) : 768;
    int rows = Math.max(1, chunk / width);
    Normalization n = Normalization.of(op);
    List<RowPasses> passes = (List<RowPasses>) Class.forName("io.embednorm.kernels.cpu.VectorRowPasses").getDeclaredMethod("variants").invoke(null);
    Random r = new Random(1);
    int sets = 64;
    float[][] data = new float[sets][rows * width];
    for (float[] d : data) for (int i = 0; i < d.length; i++) d[i] = (float) r.nextGaussian();
    float[] v = new float[rows * width];
    long reps = 1_000_000L * 768 / (rows * width);
    double[][] t = new double[passes.size()][12];
    for (int round = 0; round < 12; round++) {
      for (int p = 0; p < passes.size(); p++) {
        RowPasses pass = passes.get(p);
        long t0 = System.nanoTime();
        for (long k = 0; k < reps; k++) {
          float[] d = data[(int) (k & (sets - 1))];
          System.arraycopy(d, 0, v, 0, v.length);
          CpuKernels.normalizeRows(pass, n, v, 0, v, 0, width, rows);
        }
        t[p][round] = (System.nanoTime() - t0) / (double) (reps * rows * width);
      }
    }
    for (int p = 0; p < passes.size(); p++) {
      double[] s = Arrays.copyOfRange(t[p], 4, 12); Arrays.sort(s);
      System.out.printf("%s %d %-45s min %.3f median %.3f ns/element%n", op, width, passes.get(p).description(), s[0], s[s.length/2]);
    }
  }
}

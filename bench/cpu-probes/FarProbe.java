package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import java.util.*;
/**
 * One op on one chunk of rows in the cache (768 elements, or one row if wider), the SIMD passes the
 * JVM selects, ns an element (median of rounds 4-10). Args: OP WIDTH; {@code -Dfar=true} adds 100 to
 * each row's first eight elements, so that every LayerNorm row takes the second pass.
 */
public class FarProbe {
  public static void main(String[] a) {
    Op op = Op.valueOf(a[0].toUpperCase());
    int width = Integer.parseInt(a[1]);
    int rows = Math.max(1, 768 / width);
    RowPasses pass = RowPassSelection.VECTOR;
    Normalization n = Normalization.of(op);
    Random r = new Random(1);
    float[][] data = new float[64][rows * width];
    for (float[] d : data) for (int i = 0; i < d.length; i++) d[i] = (float) r.nextGaussian() + (Boolean.getBoolean("far") && i % width < 8 ? 100f : 0f);
    float[] v = new float[rows * width];
    long reps = Math.max(1, 1_500_000_000L / (rows * width));
    double[] t = new double[10];
    for (int round = 0; round < 10; round++) {
      long t0 = System.nanoTime();
      for (long k = 0; k < reps; k++) {
        System.arraycopy(data[(int) (k & 63)], 0, v, 0, v.length);
        CpuKernels.normalizeRows(pass, n, v, 0, v, 0, width, rows);
      }
      t[round] = (System.nanoTime() - t0) / (double) (reps * rows * width);
    }
    double[] s = Arrays.copyOfRange(t, 3, 10); Arrays.sort(s);
    System.out.printf("%s %d %s median %.3f ns/element%n", op, width, pass.description(), s[3]);
  }
}

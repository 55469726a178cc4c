package io.embednorm.kernels.cpu;
import java.util.*;
/**
 * LayerNorm's statistics on one chunk of rows in the cache (768 elements, SIMD passes), ns a row:
 * the shifts, Σd and Σd², and {@code LayerNormStatistics.compute} in all. Args: WIDTH. For the
 * scalar shifts before 2026-11-27 the first loop called {@code FloatSums.layerNormShift} per row.
 */
public class StatsProbe {
  public static void main(String[] a) throws Exception {
    int width = Integer.parseInt(a[0]);
    int rows = Math.max(1, 768 / width);
    long reps = Long.getLong("reps", 2_000_000L * 768 / (rows * width));
    RowPasses pass = RowPassSelection.VECTOR;
    Random r = new Random(1);
    float[] v = new float[rows * width];
    for (int i = 0; i < v.length; i++) v[i] = (float) r.nextGaussian();
    float[][] s = new float[5][64];
    double[][] t = new double[3][12];
    for (int round = 0; round < 12; round++) {
      long t0 = System.nanoTime();
      for (long k = 0; k < reps; k++) pass.layerNormShifts(v, 0, width, rows, s[0]);
      long t1 = System.nanoTime();
      for (long k = 0; k < reps; k++) pass.sumsAndSquaresOfDifferences(v, 0, width, rows, s[0], s[1], s[2]);
      long t2 = System.nanoTime();
      for (long k = 0; k < reps; k++) LayerNormStatistics.compute(pass, v, 0, width, rows, s[0], s[1], s[2], s[3], s[4]);
      long t3 = System.nanoTime();
      t[0][round] = (t1 - t0) / (double) (reps * rows);
      t[1][round] = (t2 - t1) / (double) (reps * rows);
      t[2][round] = (t3 - t2) / (double) (reps * rows);
    }
    String[] names = {"shifts", "sums+squares", "statistics"};
    for (int p = 0; p < 3; p++) {
      double[] x = Arrays.copyOfRange(t[p], 4, 12); Arrays.sort(x);
      System.out.printf("%-14s width %d median %.2f ns/row%n", names[p], width, x[4]);
    }
  }
}

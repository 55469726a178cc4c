// Probe (bench/cpu-probes/README.md): ns per element of single passes over a group of rows in L1/L2 (maxima, storeExponentials, scaleRows, sumsOfSquares; -Dwidth, -Drows, -Dscalar).
package io.embednorm.kernels.cpu;

public class PassProbe {
  public static void main(String[] args) {
    int width = Integer.getInteger("width", 32);
    int rows = Integer.getInteger("rows", 1024 / width);
    RowPasses p = System.getProperty("scalar") != null ? ScalarRowPasses.INSTANCE : RowPassSelection.VECTOR;
    float[] a = new float[rows * width], o = new float[rows * width], s = new float[64], t = new float[64];
    java.util.Random rnd = new java.util.Random(1);
    for (int i = 0; i < a.length; i++) a[i] = (float) rnd.nextGaussian();
    int iters = (64 << 20) / (rows * width); // 64M elements
    for (int round = 0; round < 6; round++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < iters; i++) p.maxima(a, 0, width, rows, s);
      long t1 = System.nanoTime();
      for (int i = 0; i < iters; i++) p.storeExponentials(a, 0, o, 0, width, rows, s, t);
      long t2 = System.nanoTime();
      for (int i = 0; i < iters; i++) { p.maxima(a, 0, width, rows, s); p.inverses(s, rows); }
      long t3 = System.nanoTime();
      for (int i = 0; i < iters; i++) p.scaleRows(o, 0, o, 0, width, rows, s, null);
      long t4 = System.nanoTime();
      for (int i = 0; i < iters; i++) p.sumsOfSquares(a, 0, width, rows, s);
      long t5 = System.nanoTime();
      double el = (double) rows * width * iters;
      System.out.printf("w%d ns/element: maxima %.3f storeExp %.3f (maxima+inverses) %.3f scaleRows %.3f sumsOfSquares %.3f%n", width,
          (t1 - t0) / el, (t2 - t1) / el, (t3 - t2) / el, (t4 - t3) / el, (t5 - t4) / el);
    }
  }
}

// Probe (bench/cpu-probes/README.md): the scalar softmax pass by pass at width args[0], ns an element.
package io.embednorm.kernels.cpu;
public class SoftmaxPhases {
  public static void main(String[] a) {
    int width = Integer.parseInt(a[0]);
    int rows = 64;
    int n = width * rows;
    float[] in = new float[n], out = new float[n];
    java.util.Random r = new java.util.Random(7);
    for (int i = 0; i < n; i++) in[i] = (float) r.nextGaussian();
    float[] maxima = new float[rows], sums = new float[rows];
    RowScratch scratch = RowScratch.current();
    ScalarRowPasses p = ScalarRowPasses.INSTANCE;
    long reps = (1L << 31) / (4L * n); // 2 GiB of input elements worth
    for (int round = 0; round < 4; round++) {
      long t0 = System.nanoTime();
      for (long k = 0; k < reps; k++) p.maxima(in, 0, width, rows, maxima);
      long t1 = System.nanoTime();
      for (long k = 0; k < reps; k++) FloatExponential.exponentialsAndSums(in, 0, out, 0, width, rows, maxima, sums, scratch);
      long t2 = System.nanoTime();
      long t3 = t2; // since 2026-11-27 the sums come with the exponentials

      for (long k = 0; k < reps; k++) p.scaleRows(out, 0, out, 0, width, rows, sums, null);
      long t4 = System.nanoTime();
      for (long k = 0; k < reps; k++) FloatRowKernels.softmax(p, in, 0, out, 0, width, rows);
      long t5 = System.nanoTime();
      double e = (double) reps * n;
      if (round >= 2) System.out.printf("w=%d max %.3f exp %.3f sum %.3f scale %.3f | whole %.3f ns/elt%n", width, (t1-t0)/e, (t2-t1)/e, (t3-t2)/e, (t4-t3)/e, (t5-t4)/e);
    }
  }
}

package io.embednorm.kernels.cpu;
public class CountProbe {
  public static void main(String[] a) {
    int width = Integer.parseInt(a[0]);
    RowPasses pass = RowPassSelection.VECTOR;
    float[] v = new float[8 * width];
    java.util.Random r = new java.util.Random(1);
    for (int i = 0; i < v.length; i++) v[i] = (float) r.nextGaussian();
    float[] shifts = new float[64], sums = new float[64], squares = new float[64];
    for (int round = 0; round < 6; round++) {
      StringBuilder line = new StringBuilder("width " + width + ":");
      for (int count : new int[] {1, 2, 4, 8}) {
        long reps = 100_000_000L / (count * width);
        long t0 = System.nanoTime();
        for (long k = 0; k < reps; k++) pass.sumsAndSquaresOfDifferences(v, 0, width, count, shifts, sums, squares);
        long t1 = System.nanoTime();
        line.append(String.format(" count %d %.1f ns/row", count, (t1 - t0) / (double) (reps * count)));
      }
      if (round > 2) System.out.println(line);
    }
  }
}

package io.embednorm.kernels.cpu;
public class TreeProbe {
  public static void main(String[] a) {
    int width = Integer.parseInt(a[0]);
    SumTree tree = new SumTree().forWidth(width);
    float[] lanes = new float[tree.blocks() * 8 * 2];
    for (int i = 0; i < lanes.length; i++) lanes[i] = i * 0.25f;
    float[] sums = new float[4];
    long reps = 20_000_000L * 1024 / width;
    float sink = 0;
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      for (long k = 0; k < reps; k++) { tree.sums(lanes, 1, sums); sink += sums[0]; lanes[0] = sink * 1e-30f; }
      long t1 = System.nanoTime();
      if (round > 3) System.out.printf("width %d blocks %d: tree.sums %.1f ns a row (one sum)%n", width, tree.blocks(), (t1 - t0) / (double) reps);
    }
  }
}

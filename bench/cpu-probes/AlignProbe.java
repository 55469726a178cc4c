package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
public class AlignProbe {
  public static void main(String[] a) {
    Op op = Op.valueOf(a[0].toUpperCase());
    int width = Integer.parseInt(a[1]);
    int rows = Math.max(1, 768 / width);
    java.util.List<RowPasses> passes = VectorRowPasses.variants();
    RowPasses pass = passes.get(passes.size() - 1);
    Normalization n = Normalization.of(op);
    float[] data = new float[rows * width + 16];
    java.util.Random r = new java.util.Random(1);
    for (int i = 0; i < data.length; i++) data[i] = (float) r.nextGaussian();
    float[] v = new float[data.length];
    long reps = 2_000_000L * 768 / (rows * width);
    for (int round = 0; round < 4; round++) {
      StringBuilder line = new StringBuilder(op + " " + width + ":");
      for (int offset = 0; offset < 16; offset += 2) {
        long t0 = System.nanoTime();
        for (long k = 0; k < reps; k++) { System.arraycopy(data, 0, v, 0, v.length); CpuKernels.normalizeRows(pass, n, v, offset, v, offset, width, rows); }
        long t1 = System.nanoTime();
        line.append(String.format(" %d:%.3f", offset, (t1 - t0) / (double) (reps * rows * width)));
      }
      if (round > 0) System.out.println(line);
    }
  }
}

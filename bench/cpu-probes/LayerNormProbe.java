// Probe (bench/cpu-probes/README.md): ns per row of LayerNorm's passes on one chunk in the L1 cache (-Dwidth, default 32), beside the whole kernel and rms_norm's.
package io.embednorm.kernels.cpu;

import io.embednorm.kernels.*;

public class LayerNormProbe {
  public static void main(String[] args) {
    int width = Integer.getInteger("width", 32);
    int rows = Math.max(1, 1024 / width);
    RowPasses p = System.getProperty("scalar") != null ? ScalarRowPasses.INSTANCE : RowPassSelection.VECTOR;
    java.util.Random rnd = new java.util.Random(5);
    float[] in = new float[rows * width], out = new float[rows * width];
    for (int i = 0; i < in.length; i++) in[i] = (float) rnd.nextGaussian();
    float[] shifts = new float[64], means = new float[64], high = new float[64], low = new float[64], sums = new float[64], inv = new float[64];
    Normalization ln = Normalization.of(Op.LAYER_NORM), rms = Normalization.of(Op.RMS_NORM);
    int calls = 200_000;
    for (int round = 0; round < 6; round++) {
      long t0 = System.nanoTime();
      for (int c = 0; c < calls; c++) LayerNormStatistics.compute(p, in, 0, width, rows, shifts, means, high, low, sums);
      long t1 = System.nanoTime();
      for (int c = 0; c < calls; c++) { System.arraycopy(sums, 0, inv, 0, rows); p.inverseSquareRoots(inv, rows, width, 1e-5); }
      long t2 = System.nanoTime();
      boolean any = false;
      for (int c = 0; c < calls; c++) any |= p.anyUnsafe(sums, inv, rows, 0x1p-100f, 0x1p100f);
      long t3 = System.nanoTime();
      for (int c = 0; c < calls; c++) p.standardizeRows(in, 0, out, 0, width, rows, high, low, inv, null, null);
      long t4 = System.nanoTime();
      for (int c = 0; c < calls; c++) CpuKernels.normalizeRows(p, ln, in, 0, out, 0, width, rows);
      long t5 = System.nanoTime();
      for (int c = 0; c < calls; c++) CpuKernels.normalizeRows(p, rms, in, 0, out, 0, width, rows);
      long t6 = System.nanoTime();
      double per = (double) calls * rows;
      System.out.printf("w%d ns/row: statistics %.1f inverseSquareRoots %.1f anyUnsafe %.1f standardize %.1f | layer_norm %.1f rms_norm %.1f %s%n",
          width, (t1 - t0) / per, (t2 - t1) / per, (t3 - t2) / per, (t4 - t3) / per, (t5 - t4) / per, (t6 - t5) / per, any ? "!" : "");
    }
  }
}

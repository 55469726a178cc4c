// Probe (bench/cpu-probes/README.md): CpuKernels.normalizeRows on the SIMD against the scalar passes, 1000 rows of 300 (-Dop; -DsimdOnly=true skips the scalar calls).
package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
public class Rms300 {
  public static void main(String[] a) {
    Op op = Op.valueOf(System.getProperty("op", "RMS_NORM"));
    int width = 300, rows = 1000;
    float[] v = new float[width * rows]; java.util.Random r = new java.util.Random(1);
    for (int i = 0; i < v.length; i++) v[i] = (float) r.nextGaussian();
    float[] o = new float[v.length];
    Normalization n = Normalization.of(op);
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      for (int k = 0; k < 200; k++) CpuKernels.normalizeRows(RowPassSelection.VECTOR, n, v, 0, o, 0, width, rows);
      long t1 = System.nanoTime();
      if (!Boolean.getBoolean("simdOnly")) for (int k = 0; k < 200; k++) CpuKernels.normalizeRows(ScalarRowPasses.INSTANCE, n, v, 0, o, 0, width, rows);
      long t2 = System.nanoTime();
      System.out.printf("%s simd %.2f ms scalar %.2f ms%n", op, (t1 - t0) / 1e6, (t2 - t1) / 1e6);
    }
  }
}

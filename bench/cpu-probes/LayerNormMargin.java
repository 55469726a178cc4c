// Probe (bench/cpu-probes/README.md): worst LayerNorm error as a share of the tolerance over random rows whose first eight values sit 0-3 spreads (scaled by sqrt(width/8)) from the rest.
package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import java.util.*;
public class LayerNormMargin {
  public static void main(String[] a) {
    Random random = new Random(3);
    Normalization n = Normalization.of(Op.LAYER_NORM);
    for (int width : new int[] {16, 32, 128, 768, 4096, 32768}) {
      double worst = 0, worstK = 0;
      for (int trial = 0; trial < (width > 4096 ? 200 : 2000); trial++) {
        double dist = random.nextDouble() * 3 * Math.sqrt(width / 8.0);
        double center = random.nextBoolean() ? 0 : 1e6; double spread = center == 0 ? 1 : 0.1;
        float[] row = new float[width];
        for (int i = 0; i < width; i++) row[i] = (float) (center + spread * (random.nextGaussian() + (i < 8 ? dist : 0)));
        double[] w = new double[width]; for (int i = 0; i < width; i++) w[i] = row[i];
        double shift = Arrays.stream(w, 0, 8).average().orElseThrow();
        double mean = Arrays.stream(w).average().orElseThrow();
        double sq = Arrays.stream(w).map(x -> (x - shift) * (x - shift)).sum();
        double var = Arrays.stream(w).map(x -> (x - mean) * (x - mean)).sum();
        double k = sq / var;
        float[] out = new float[width];
        CpuKernels.normalizeRow(ScalarRowPasses.INSTANCE, n, row.clone(), 0, out, 0, width);
        double rstd = 1 / Math.sqrt(var / width + 1e-5);
        double max = 0; double[] ref = new double[width];
        for (int i = 0; i < width; i++) { ref[i] = (w[i] - mean) * rstd; max = Math.max(max, Math.abs(ref[i])); }
        for (int i = 0; i < width; i++) {
          double r = Math.abs(out[i] - ref[i]) / (1e-5 * Math.abs(ref[i]) + 1e-6 * max);
          if (r > worst) { worst = r; worstK = k; }
        }
      }
      System.out.printf("width %d worst error / tolerance %.3f at K %.2f%n", width, worst, worstK);
    }
  }
}

package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import java.util.*;
/**
 * LayerNorm's kernel with some of its steps left out, in turn in one JVM (the output is then
 * wrong: this times, it does not check). Needs {@code layer-norm-ablation.diff} applied, whose
 * static {@code LayerNormStatistics.skip} masks: 1 shifts, 2 sums and squares, 4 everything after
 * them, 8 centers, 16 inverse deviations, 32 the output pass. Args: OP WIDTH CLASS MASKS, e.g.
 * {@code layer_norm 32 io.embednorm.kernels.cpu.LayerNormStatistics 0,1,2,8,16,32,63}.
 */
public class SkipAB {
  public static void main(String[] a) throws Exception {
    Op op = Op.valueOf(a[0].toUpperCase());
    int width = Integer.parseInt(a[1]);
    int rows = Math.max(1, 768 / width);
    Normalization n = Normalization.of(op);
    RowPasses pass = RowPassSelection.DEFAULT;
    java.lang.reflect.Field flag = Class.forName(a[2]).getDeclaredField("skip");
    Random r = new Random(1);
    int sets = 64;
    float[][] data = new float[sets][rows * width];
    for (float[] d : data) for (int i = 0; i < d.length; i++) d[i] = (float) r.nextGaussian();
    float[] v = new float[rows * width];
    long reps = 1_000_000L * 768 / (rows * width);
    int[] masks = Arrays.stream(a[3].split(",")).mapToInt(Integer::parseInt).toArray(); double[][] t = new double[masks.length][12];
    for (int round = 0; round < 12; round++) {
      for (int p = 0; p < masks.length; p++) {
        flag.setInt(null, masks[p]);
        long t0 = System.nanoTime();
        for (long k = 0; k < reps; k++) {
          float[] d = data[(int) (k & (sets - 1))];
          System.arraycopy(d, 0, v, 0, v.length);
          CpuKernels.normalizeRows(pass, n, v, 0, v, 0, width, rows);
        }
        t[p][round] = (System.nanoTime() - t0) / (double) (reps * rows * width);
      }
    }
    for (int p = 0; p < masks.length; p++) {
      double[] s = Arrays.copyOfRange(t[p], 4, 12); Arrays.sort(s);
      System.out.printf("%s %d skip=%d min %.3f median %.3f ns/element%n", op, width, masks[p], s[0], s[s.length/2]);
    }
  }
}

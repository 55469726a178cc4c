package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import java.lang.management.ManagementFactory;
import java.util.*;
/**
 * Bytes allocated per call of the kernels on the selected SIMD passes, op by op and width by width
 * in one JVM (the fewest over up to 40 tries of 1,000 calls after 2,000 more): 0 where the kernels
 * run in registers. Args: [OPS] [WIDTHS], comma lists (default all five ops at 32 to 4096).
 */
public class AllocProbe {
  public static void main(String[] a) throws Exception {
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    RowPasses pass = RowPassSelection.VECTOR;
    System.out.println(pass.description());
    long tid = Thread.currentThread().getId();
    Op[] ops = Arrays.stream((a.length > 0 ? a[0] : "softmax,log_softmax,rms_norm,layer_norm,l2_normalize").split(",")).map(x -> Op.valueOf(x.toUpperCase())).toArray(Op[]::new);
    int[] widths = Arrays.stream((a.length > 1 ? a[1] : "32,64,100,300,768,4096").split(",")).mapToInt(Integer::parseInt).toArray();
    Random r = new Random(1);
    for (Op op : ops) for (int w : widths) {
      int rows = Math.max(1, 768 / w);
      float[] d = new float[rows * w];
      for (int i = 0; i < d.length; i++) d[i] = (float) r.nextGaussian();
      float[] v = new float[d.length];
      Normalization n = Normalization.of(op);
      long best = Long.MAX_VALUE; int tries = 0;
      for (; tries < 40 && best > 0; tries++) {
        for (int k = 0; k < 2000; k++) { System.arraycopy(d, 0, v, 0, v.length); CpuKernels.normalizeRows(pass, n, v, 0, v, 0, w, rows); }
        long before = mx.getThreadAllocatedBytes(tid);
        for (int k = 0; k < 1000; k++) { System.arraycopy(d, 0, v, 0, v.length); CpuKernels.normalizeRows(pass, n, v, 0, v, 0, w, rows); }
        best = Math.min(best, mx.getThreadAllocatedBytes(tid) - before);
      }
      System.out.printf("%s %d: %d bytes per 1000 calls after %d tries%n", op, w, best, tries);
    }
  }
}

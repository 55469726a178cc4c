// Probe (bench/cpu-probes/README.md): time split of the engine at one width: chunk copies alone, the kernels on one chunk in L1, the engine, a bulk copy (-Dop, -Dwidth).
package io.embednorm.kernels.cpu;

import io.embednorm.kernels.*;
import java.nio.*;

public class SplitProbe {
  public static void main(String[] args) {
    int width = Integer.getInteger("width", 32);
    String op = System.getProperty("op", "rms_norm");
    int chunk = 1024;
    int bytes = 256 << 20;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    java.util.Random rnd = new java.util.Random(3);
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, (float) rnd.nextGaussian());
    FloatBuffer fi = in.asFloatBuffer(), fo = out.asFloatBuffer();
    int n = bytes / 4;
    RowPasses p = RowPassSelection.VECTOR;
    Normalization norm = Normalization.of(Op.valueOf(op.toUpperCase()));
    float[] a = new float[Math.max(chunk, width)];
    int per = Math.max(chunk, width);
    int rows = per / width;
    CpuEngine engine = new CpuEngine(1, p);
    RowBatch batch = RowBatch.fixedWidth(ElementType.FLOAT32, n / width, width, in, out);
    for (int round = 0; round < 6; round++) {
      long t0 = System.nanoTime();
      for (int at = 0; at < n; at += per) { fi.get(at, a, 0, per); fo.put(at, a, 0, per); }
      long t1 = System.nanoTime();
      fi.get(0, a, 0, per);
      for (int at = 0; at < n; at += per) { CpuKernels.normalizeRows(p, norm, a, 0, a, 0, width, rows); if ((at & 0xfffff) == 0) fi.get(0, a, 0, per); }
      long t2 = System.nanoTime();
      engine.normalize(norm, batch);
      long t3 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t4 = System.nanoTime();
      double gb = 2.0 * bytes / 1e9;
      System.out.printf("%s %d: chunk copies %.1f GB/s (%.1f ms), compute in L1 %.1f ms, engine %.1f GB/s (%.1f ms), bulk copy %.1f GB/s%n",
          op, width, gb / ((t1 - t0) / 1e9), (t1 - t0) / 1e6, (t2 - t1) / 1e6, gb / ((t3 - t2) / 1e9), (t3 - t2) / 1e6, gb / ((t4 - t3) / 1e9));
    }
  }
}

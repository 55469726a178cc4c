// Probe (README.md, 2026-11-27 evening): the engine (1 thread) on 128 MiB of float16 rows, best of 6, per OP:WIDTH arg.
// javac -cp benchmarks.jar; java --add-modules jdk.incubator.vector -XX:PerMethodTrapLimit=1000 -Dembednorm.cpu.warmup=false ...
import io.embednorm.kernels.*;
import io.embednorm.kernels.cpu.CpuEngine;
import java.nio.*;
public class HalfProbe {
  public static void main(String[] args) {
    int bytes = 128 << 20; int n = bytes / 2;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN), out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    java.util.Random r = new java.util.Random(1);
    for (int i = 0; i < n; i++) in.putShort(2 * i, Float16.fromFloat((float) r.nextGaussian()));
    CpuEngine engine = new CpuEngine(1);
    for (String cell : args) {
      String[] p = cell.split(":"); Op op = Op.valueOf(p[0].toUpperCase()); int w = Integer.parseInt(p[1]);
      Normalization norm = Normalization.of(op);
      RowBatch batch = RowBatch.fixedWidth(ElementType.FLOAT16, n / w, w, in, out);
      long best = Long.MAX_VALUE;
      for (int round = 0; round < 6; round++) { long t = System.nanoTime(); engine.normalize(norm, batch); best = Math.min(best, System.nanoTime() - t); }
      System.out.printf("%s %d float16: %.2f GB/s%n", op, w, 2.0 * bytes / best);
    }
  }
}

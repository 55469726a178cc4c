// The ways a JVM can copy 256 MiB, single thread, GB/s counting bytes read plus bytes written (as
// benchmarks/ does): is CopyBenchmark's baseline (ByteBuffer bulk put) the fastest copy Java has?
// Run: java --add-modules=jdk.incubator.vector -Xmx3g -XX:MaxDirectMemorySize=2g CopyVariants.java
// (on JDK 19 and later, drop the "FloatVector bytebuf" line: fromByteBuffer is gone). Compare with
// the C program beside it: gcc -O2 -o /tmp/memcpy memcpy.c && /tmp/memcpy
import java.nio.*;
import jdk.incubator.vector.*;
public class CopyVariants {
  static final int N = 256 << 20;
  public static void main(String[] a) {
    ByteBuffer in = ByteBuffer.allocateDirect(N).order(ByteOrder.LITTLE_ENDIAN), out = ByteBuffer.allocateDirect(N).order(ByteOrder.LITTLE_ENDIAN);
    float[] fa = new float[N/4], fb = new float[N/4];
    byte[] ba = new byte[N], bb = new byte[N];
    for (int r = 0; r < 3; r++) {
      time("ByteBuffer.put", () -> out.put(0, in, 0, N));
      time("float[] arraycopy", () -> System.arraycopy(fa, 0, fb, 0, fa.length));
      time("byte[] arraycopy", () -> System.arraycopy(ba, 0, bb, 0, ba.length));
      time("FloatVector array", () -> { for (int i = 0; i < fa.length; i += 8) FloatVector.fromArray(FloatVector.SPECIES_256, fa, i).intoArray(fb, i); });
      time("FloatVector bytebuf", () -> { for (int i = 0; i < N; i += 32) FloatVector.fromByteBuffer(FloatVector.SPECIES_256, in, i, ByteOrder.LITTLE_ENDIAN).intoByteBuffer(out, i, ByteOrder.LITTLE_ENDIAN); });
      time("heap->direct put", () -> out.asFloatBuffer().put(0, fa, 0, fa.length));
    }
  }
  static void time(String name, Runnable r) {
    double best = 0; double[] all = new double[7];
    for (int k = 0; k < 7; k++) { long s = System.nanoTime(); r.run(); double g = 2.0 * N / (System.nanoTime() - s); all[k] = g; }
    java.util.Arrays.sort(all);
    System.out.printf("%-22s median %.2f GB/s max %.2f%n", name, all[3], all[6]);
  }
}

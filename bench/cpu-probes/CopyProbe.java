// Probe (bench/cpu-probes/README.md): direct buffer -> float[] -> direct buffer in chunks of 256 to 256 Ki floats (FloatBuffer and Unsafe) against one bulk copy.
import java.nio.*;
import java.lang.reflect.Field;

public class CopyProbe {
  public static void main(String[] args) throws Exception {
    int bytes = 256 << 20;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, i);
    FloatBuffer fi = in.asFloatBuffer(), fo = out.asFloatBuffer();
    Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe"); f.setAccessible(true);
    sun.misc.Unsafe U = (sun.misc.Unsafe) f.get(null);
    long inAddr = ((sun.nio.ch.DirectBuffer) in).address(), outAddr = ((sun.nio.ch.DirectBuffer) out).address();
    long base = U.arrayBaseOffset(float[].class);
    int n = bytes / 4;
    for (int round = 0; round < 4; round++) {
      StringBuilder sb = new StringBuilder();
      for (int chunk : new int[] {256, 1024, 4096, 16384, 262144}) {
        float[] a = new float[chunk];
        long t0 = System.nanoTime();
        for (int at = 0; at < n; at += chunk) { fi.get(at, a, 0, chunk); fo.put(at, a, 0, chunk); }
        long t1 = System.nanoTime();
        for (int at = 0; at < n; at += chunk) { U.copyMemory(null, inAddr + 4L * at, a, base, 4L * chunk); U.copyMemory(a, base, null, outAddr + 4L * at, 4L * chunk); }
        long t2 = System.nanoTime();
        sb.append(String.format("chunk %d: buffer %.1f unsafe %.1f | ", chunk, 2.0 * bytes / (t1 - t0), 2.0 * bytes / (t2 - t1)));
      }
      long t0 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      System.out.println(sb + String.format("bulk %.1f GB/s", 2.0 * bytes / (t1 - t0)));
    }
  }
}

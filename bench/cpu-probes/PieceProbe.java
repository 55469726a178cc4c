// Probe (bench/cpu-probes/README.md): the chunk round trip (direct buffer -> float[] -> direct buffer) by the array's footprint and the size of the copy calls, and with the next chunk's copy-in interleaved with the current one's copy-out ("piped"). No package: javac bench/cpu-probes/PieceProbe.java -d /tmp/p2; java -Xmx2g -XX:MaxDirectMemorySize=2g -cp /tmp/p2 PieceProbe
import java.nio.*;
public class PieceProbe {
  public static void main(String[] args) {
    int bytes = 256 << 20; int n = bytes / 4;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    FloatBuffer fi = in.asFloatBuffer(), fo = out.asFloatBuffer();
    for (int i = 0; i < n; i++) fi.put(i, i * 0.5f);
    for (int rep = 0; rep < 6; rep++) {
      StringBuilder sb = new StringBuilder();
      for (int[] v : new int[][] {{1024, 1024}, {4096, 4096}, {4096, 1024}, {16384, 16384}, {16384, 1024}, {16384, 4096}}) {
        int chunk = v[0], piece = v[1];
        float[] a = new float[chunk];
        long t0 = System.nanoTime();
        for (int at = 0; at < n; at += chunk) {
          for (int p = 0; p < chunk; p += piece) fi.get(at + p, a, p, piece);
          for (int p = 0; p < chunk; p += piece) fo.put(at + p, a, p, piece);
        }
        long t1 = System.nanoTime();
        sb.append(String.format("%d/%d %.1f | ", chunk, piece, 2.0 * bytes / (t1 - t0)));
      }
      for (int[] v : new int[][] {{4096, 1024}, {16384, 1024}, {16384, 4096}}) {
        int chunk = v[0], piece = v[1];
        float[] cur = new float[chunk], next = new float[chunk];
        long t0 = System.nanoTime();
        fi.get(0, cur, 0, chunk);
        for (int at = 0; at < n; at += chunk) {
          int nextAt = at + chunk;
          for (int p = 0; p < chunk; p += piece) {
            if (nextAt < n) fi.get(nextAt + p, next, p, piece);
            fo.put(at + p, cur, p, piece);
          }
          float[] t = cur; cur = next; next = t;
        }
        long t1 = System.nanoTime();
        sb.append(String.format("piped %d/%d %.1f | ", chunk, piece, 2.0 * bytes / (t1 - t0)));
      }
      long t0 = System.nanoTime(); out.put(0, in, 0, bytes); long t1 = System.nanoTime();
      sb.append(String.format("bulk %.1f", 2.0 * bytes / (t1 - t0)));
      System.out.println(sb);
    }
  }
}

// Probe (README.md, 2026-11-27 evening): one thread, 256 MiB of float32 copied buffer -> heap array -> buffer in rows of 768
// through a ring of R arrays, row r stored L rows after it was loaded (pieces of 512 bytes): GB/s against how many KiB of
// arrays the round trip touches. No args.
import java.nio.*;
public class ScratchFootprintProbe {
  static final int BYTES = 256 << 20;
  static FloatBuffer fi, fo;
  // ring of R arrays of w; row r loaded into ring[r % R]; after loading row r, store row r - lag
  static void run(float[][] ring, int w, int piece, int lag) {
    int n = BYTES / 4, rows = n / w, R = ring.length;
    for (int r = 0; r < rows + lag; r++) {
      if (r < rows) { float[] a = ring[r % R]; int at = r * w; for (int d = 0; d < w; d += piece) fi.get(at + d, a, d, piece); }
      int s = r - lag;
      if (s >= 0) { float[] a = ring[s % R]; int at = s * w; for (int d = 0; d < w; d += piece) fo.put(at + d, a, d, piece); }
    }
  }
  static double best(Runnable r) { long b = Long.MAX_VALUE; for (int i = 0; i < 4; i++) { long t = System.nanoTime(); r.run(); b = Math.min(b, System.nanoTime() - t); } return 2.0 * BYTES / b; }
  public static void main(String[] args) {
    int w = 768, piece = 128;
    ByteBuffer in = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
    ByteBuffer out = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
    fi = in.asFloatBuffer(); fo = out.asFloatBuffer();
    for (int round = 0; round < 2; round++) {
      StringBuilder s = new StringBuilder(String.format("bulk %.1f", best(() -> out.put(0, in, 0, BYTES))));
      for (int[] rl : new int[][] {{1,0},{2,0},{4,0},{8,0},{2,1},{4,1},{4,3},{8,1},{8,5},{8,7}}) {
        float[][] ring = new float[rl[0]][w];
        s.append(String.format(" | R%d L%d %.1f", rl[0], rl[1], best(() -> run(ring, w, piece, rl[1]))));
      }
      System.out.println(s);
    }
  }
}

// Probe (README.md, 2026-11-27 evening): read W floats in pieces into one small array, then write W floats from it:
// bursts of reads and writes of a given length with an L1 footprint of 512 bytes. No args.
import java.nio.*;
public class BurstProbe {
  static final int BYTES = 256 << 20;
  static FloatBuffer fi, fo;
  static float sink;
  // bursts of w floats: read w from in in pieces into a small array p; then write w to out from p
  static void run(float[] p, int w) {
    int n = BYTES / 4, piece = p.length; float s = 0;
    for (int at = 0; at + w <= n; at += w) {
      for (int d = 0; d < w; d += piece) { fi.get(at + d, p, 0, piece); }
      s += p[3];
      for (int d = 0; d < w; d += piece) fo.put(at + d, p, 0, piece);
    }
    sink = s;
  }
  static double best(Runnable r) { long b = Long.MAX_VALUE; for (int i = 0; i < 4; i++) { long t = System.nanoTime(); r.run(); b = Math.min(b, System.nanoTime() - t); } return 2.0 * BYTES / b; }
  public static void main(String[] args) {
    ByteBuffer in = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
    ByteBuffer out = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
    fi = in.asFloatBuffer(); fo = out.asFloatBuffer();
    float[] p = new float[128];
    for (int round = 0; round < 2; round++) {
      StringBuilder s = new StringBuilder(String.format("bulk %.1f", best(() -> out.put(0, in, 0, BYTES))));
      for (int w : new int[] {768, 2048, 4096, 8192, 32768}) s.append(String.format(" | burst %d %.1f", w, best(() -> run(p, w))));
      System.out.println(s);
    }
  }
}

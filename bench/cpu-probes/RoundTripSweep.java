// Probe (README.md, 2026-11-27 evening): the engine's round trip (a row loaded into one array in pieces, then stored)
// at row widths 512-8192, GB/s beside a bulk copy. Args: PIECE (floats per copy call).
import java.nio.*;
public class RoundTripSweep {
  static final int BYTES = 256 << 20;
  static FloatBuffer fi, fo;
  static void trip(float[] a, int w, int piece) {
    int n = BYTES / 4;
    for (int at = 0; at + w <= n; at += w) {
      for (int d = 0; d < w; d += piece) fi.get(at + d, a, d, Math.min(piece, w - d));
      for (int d = 0; d < w; d += piece) fo.put(at + d, a, d, Math.min(piece, w - d));
    }
  }
  static double best(Runnable r) { long b = Long.MAX_VALUE; for (int i = 0; i < 4; i++) { long t = System.nanoTime(); r.run(); b = Math.min(b, System.nanoTime() - t); } return 2.0 * BYTES / b; }
  public static void main(String[] args) {
    int piece = Integer.parseInt(args[0]);
    ByteBuffer in = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
    ByteBuffer out = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
    fi = in.asFloatBuffer(); fo = out.asFloatBuffer();
    for (int round = 0; round < 2; round++) {
    StringBuilder s = new StringBuilder(String.format("bulk %.1f", best(() -> out.put(0, in, 0, BYTES))));
    for (int w : new int[] {512, 768, 1024, 1280, 1536, 2048, 3072, 4096, 8192}) {
      float[] a = new float[w];
      s.append(String.format(" | %d %.1f", w, best(() -> trip(a, w, piece))));
    }
    System.out.println(s);
    }
  }
}

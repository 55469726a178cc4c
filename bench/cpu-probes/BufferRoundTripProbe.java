import jdk.incubator.vector.*;
import java.nio.*;

/** rms_norm-like per row: (a) array round trip, (b) copy-in + direct write-out, (c) fully direct. */
public class BufferRoundTripProbe {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  static final ByteOrder O = ByteOrder.nativeOrder();
  static final int CHUNK = 1024;

  static float sumArray(float[] a, int off, int w) {
    FloatVector s = FloatVector.zero(S), t = s, u = s, v = s;
    for (int i = off; i < off + w; i += 32) { FloatVector x = FloatVector.fromArray(S, a, i); s = s.add(x.mul(x));
      FloatVector y = FloatVector.fromArray(S, a, i + 8); t = t.add(y.mul(y));
      FloatVector z = FloatVector.fromArray(S, a, i + 16); u = u.add(z.mul(z));
      FloatVector q = FloatVector.fromArray(S, a, i + 24); v = v.add(q.mul(q)); }
    return s.add(t).add(u.add(v)).reduceLanes(VectorOperators.ADD);
  }
  static float sumBuffer(ByteBuffer b, int off, int w) {
    FloatVector s = FloatVector.zero(S), t = s, u = s, v = s;
    for (int i = off; i < off + w; i += 32) { FloatVector x = FloatVector.fromByteBuffer(S, b, 4 * i, O); s = s.add(x.mul(x));
      FloatVector y = FloatVector.fromByteBuffer(S, b, 4 * i + 32, O); t = t.add(y.mul(y));
      FloatVector z = FloatVector.fromByteBuffer(S, b, 4 * i + 64, O); u = u.add(z.mul(z));
      FloatVector q = FloatVector.fromByteBuffer(S, b, 4 * i + 96, O); v = v.add(q.mul(q)); }
    return s.add(t).add(u.add(v)).reduceLanes(VectorOperators.ADD);
  }
  static void roundTrip(ByteBuffer in, ByteBuffer out, float[] a, int n, int w) {
    FloatBuffer fi = in.asFloatBuffer(), fo = out.asFloatBuffer();
    int step = Math.max(w, CHUNK / w * w);
    for (int at = 0; at < n; at += step) {
      fi.get(at, a, 0, step);
      for (int r = 0; r < step; r += w) {
        float sc = (float) (1 / Math.sqrt(sumArray(a, r, w) / w + 1e-6));
        for (int i = r; i < r + w; i += 8) FloatVector.fromArray(S, a, i).mul(sc).intoArray(a, i);
      }
      fo.put(at, a, 0, step);
    }
  }
  static void directOut(ByteBuffer in, ByteBuffer out, float[] a, int n, int w) {
    FloatBuffer fi = in.asFloatBuffer();
    int step = Math.max(w, CHUNK / w * w);
    for (int at = 0; at < n; at += step) {
      fi.get(at, a, 0, step);
      for (int r = 0; r < step; r += w) {
        float sc = (float) (1 / Math.sqrt(sumArray(a, r, w) / w + 1e-6));
        for (int i = r; i < r + w; i += 8) FloatVector.fromArray(S, a, i).mul(sc).intoByteBuffer(out, 4 * (at + i), O);
      }
    }
  }
  static void direct(ByteBuffer in, ByteBuffer out, int n, int w) {
    for (int r = 0; r < n; r += w) {
      float sc = (float) (1 / Math.sqrt(sumBuffer(in, r, w) / w + 1e-6));
      for (int i = r; i < r + w; i += 8) FloatVector.fromByteBuffer(S, in, 4 * i, O).mul(sc).intoByteBuffer(out, 4 * i, O);
    }
  }
  public static void main(String[] args) {
    int w = Integer.getInteger("width", 768);
    int bytes = 256 << 20; bytes = bytes / (4 * w) * 4 * w;
    int n = bytes / 4;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(O);
    int shift = Integer.getInteger("shift", 0);
    ByteBuffer out = ByteBuffer.allocateDirect(bytes + 8192).position(shift).slice().limit(bytes).slice().order(O);
    System.out.println("in address mod 4096 = " + (((sun.nio.ch.DirectBuffer) in).address() % 4096) + ", out " + (((sun.nio.ch.DirectBuffer) out).address() % 4096));
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, (i % 1000) * 1e-3f);
    float[] a = new float[Math.max(w, CHUNK)];
    for (int round = 0; round < 10; round++) {
      long t0 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      roundTrip(in, out, a, n, w);
      long t2 = System.nanoTime();
      directOut(in, out, a, n, w);
      long t3 = System.nanoTime();
      direct(in, out, n, w);
      long t4 = System.nanoTime();
      double c = (t1 - t0);
      System.out.printf("w=%d copy %.1f GB/s | %% of copy: roundTrip %.0f directOut %.0f direct %.0f%n", w,
          2.0 * bytes / c, 100 * c / (t2 - t1), 100 * c / (t3 - t2), 100 * c / (t4 - t3));
    }
  }
}

import jdk.incubator.vector.*;
import java.nio.*;

public class SumShapes {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  static final ByteOrder O = ByteOrder.nativeOrder();
  static float[] lanes = new float[4096];

  static void consecutive(ByteBuffer b, int off, int w) {
    FloatVector s = FloatVector.zero(S), t = s, u = s, v = s;
    for (int i = off; i < off + w; i += 32) { int at = 4 * i;
      FloatVector x = FloatVector.fromByteBuffer(S, b, at, O); s = s.add(x.mul(x));
      FloatVector y = FloatVector.fromByteBuffer(S, b, at + 32, O); t = t.add(y.mul(y));
      FloatVector z = FloatVector.fromByteBuffer(S, b, at + 64, O); u = u.add(z.mul(z));
      FloatVector q = FloatVector.fromByteBuffer(S, b, at + 96, O); v = v.add(q.mul(q)); }
    s.add(t).add(u.add(v)).intoArray(lanes, 0);
  }
  static void strided(ByteBuffer b, int off, int w) {
    int uniform = 128, gap = 512, at = 0, index = off;
    for (int block = 0; block + 4 <= w / 128; block += 4, at += 32) {
      FloatVector a = FloatVector.zero(S), c = a, d = a, e = a;
      for (int end = index + uniform; index < end; index += 8) {
        int bi = 4 * index;
        FloatVector x = FloatVector.fromByteBuffer(S, b, bi, O);
        FloatVector y = FloatVector.fromByteBuffer(S, b, bi + gap, O);
        FloatVector z = FloatVector.fromByteBuffer(S, b, bi + 2 * gap, O);
        FloatVector q = FloatVector.fromByteBuffer(S, b, bi + 3 * gap, O);
        a = a.add(x.mul(x)); c = c.add(y.mul(y)); d = d.add(z.mul(z)); e = e.add(q.mul(q));
      }
      index += 3 * uniform;
      a.intoArray(lanes, at); c.intoArray(lanes, at + 8); d.intoArray(lanes, at + 16); e.intoArray(lanes, at + 24);
    }
  }
  static void blocks(ByteBuffer b, int off, int w) {
    int at = 0, index = off;
    for (int block = 0; block < w / 128; block++, at += 8) {
      FloatVector a = FloatVector.zero(S);
      for (int end = index + 128; index < end; index += 8) {
        FloatVector x = FloatVector.fromByteBuffer(S, b, 4 * index, O);
        a = a.add(x.mul(x));
      }
      a.intoArray(lanes, at);
    }
  }
  static void blocksUnrolled(ByteBuffer b, int off, int w) {
    int at = 0, index = off;
    for (int block = 0; block < w / 128; block++, at += 8) {
      FloatVector a = FloatVector.zero(S);
      for (int end = index + 128; index < end; index += 32) {
        int bi = 4 * index;
        FloatVector x = FloatVector.fromByteBuffer(S, b, bi, O);
        FloatVector y = FloatVector.fromByteBuffer(S, b, bi + 32, O);
        FloatVector z = FloatVector.fromByteBuffer(S, b, bi + 64, O);
        FloatVector q = FloatVector.fromByteBuffer(S, b, bi + 96, O);
        a = a.add(x.mul(x)).add(y.mul(y)).add(z.mul(z)).add(q.mul(q));
      }
      a.intoArray(lanes, at);
    }
  }
  static void strided2(ByteBuffer b, int off, int w) {
    int at = 0, index = off;
    for (int block = 0; block + 2 <= w / 128; block += 2, at += 16) {
      FloatVector a = FloatVector.zero(S), c = a;
      for (int end = index + 128; index < end; index += 8) {
        int bi = 4 * index;
        FloatVector x = FloatVector.fromByteBuffer(S, b, bi, O);
        FloatVector y = FloatVector.fromByteBuffer(S, b, bi + 512, O);
        a = a.add(x.mul(x)); c = c.add(y.mul(y));
      }
      index += 128;
      a.intoArray(lanes, at); c.intoArray(lanes, at + 8);
    }
  }
  static void stridedArray(float[] b, int off, int w) {
    int uniform = 128, at = 0, index = off;
    for (int block = 0; block + 4 <= w / 128; block += 4, at += 32) {
      FloatVector a = FloatVector.zero(S), c = a, d = a, e = a;
      for (int end = index + uniform; index < end; index += 8) {
        FloatVector x = FloatVector.fromArray(S, b, index);
        FloatVector y = FloatVector.fromArray(S, b, index + uniform);
        FloatVector z = FloatVector.fromArray(S, b, index + 2 * uniform);
        FloatVector q = FloatVector.fromArray(S, b, index + 3 * uniform);
        a = a.add(x.mul(x)); c = c.add(y.mul(y)); d = d.add(z.mul(z)); e = e.add(q.mul(q));
      }
      index += 3 * uniform;
      a.intoArray(lanes, at); c.intoArray(lanes, at + 8); d.intoArray(lanes, at + 16); e.intoArray(lanes, at + 24);
    }
  }
  public static void main(String[] args) {
    int w = Integer.getInteger("width", 4096);
    int bytes = (256 << 20) / (4 * w) * 4 * w, n = bytes / 4;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(O);
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(O);
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, (i % 1000) * 1e-3f);
    float[] arr = new float[n];
    in.asFloatBuffer().get(arr);
    float[] row = new float[w];
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      for (int r = 0; r < n; r += w) consecutive(in, r, w);
      long t1 = System.nanoTime();
      for (int r = 0; r < n; r += w) strided(in, r, w);
      long t2 = System.nanoTime();
      for (int r = 0; r < n; r += w) stridedArray(arr, r, w);
      long t3 = System.nanoTime();
      for (int r = 0; r < n; r += w) { in.asFloatBuffer().get(r, row, 0, w); stridedArray(row, 0, w); }
      long t4 = System.nanoTime();
      for (int r = 0; r < n; r += w) blocks(in, r, w);
      long t5 = System.nanoTime();
      for (int r = 0; r < n; r += w) blocksUnrolled(in, r, w);
      long t6 = System.nanoTime();
      long t7 = System.nanoTime();
      for (int r = 0; r < n; r += w) strided2(in, r, w);
      long t8 = System.nanoTime();
      System.out.printf("strided2 %.1f ", bytes / (double) (t8 - t7));
      System.out.printf("blocks %.1f blocksUnrolled %.1f   ", bytes / (double) (t5 - t4), bytes / (double) (t6 - t5));
      System.out.printf("read GB/s: consecutive %.1f strided %.1f strided-heap-array %.1f copy-then-strided %.1f%n", bytes / (double) (t1 - t0), bytes / (double) (t2 - t1), bytes / (double) (t3 - t2), bytes / (double) (t4 - t3));
    }
  }
}

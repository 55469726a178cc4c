// Probe (README.md, 2026-11-27 evening; package io.embednorm.kernels.cpu, build against benchmarks.jar): an rms_norm-like
// kernel at one width (arg) against the engine: straight between the direct buffers (sum of squares block after block as
// FloatSums adds it, or in four registers over the row), the row copied in and written out from the array, and the row
// through a 512-float array twice. % of a bulk copy in the same round.
package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import jdk.incubator.vector.*;
import java.nio.*;
public class DirectRowProbe {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  static final ByteOrder O = ByteOrder.nativeOrder();
  static float[] lanes = new float[8 * 4096];
  static float blocksSum(ByteBuffer b, int off, int w) {
    int at = 0, index = off;
    for (int block = 0; block < w / 128; block++, at += 8) {
      FloatVector a = FloatVector.zero(S);
      for (int end = index + 128; index < end; index += 8) {
        FloatVector x = FloatVector.fromByteBuffer(S, b, 4 * index, O);
        a = a.add(x.mul(x));
      }
      a.intoArray(lanes, at);
    }
    float s = 0; for (int i = 0; i < at; i++) s += lanes[i];
    return s;
  }
  static float consecutiveSum(ByteBuffer b, int off, int w) {
    FloatVector s = FloatVector.zero(S), t = s, u = s, v = s;
    for (int i = off; i < off + w; i += 32) { int at = 4 * i;
      FloatVector x = FloatVector.fromByteBuffer(S, b, at, O); s = s.add(x.mul(x));
      FloatVector y = FloatVector.fromByteBuffer(S, b, at + 32, O); t = t.add(y.mul(y));
      FloatVector z = FloatVector.fromByteBuffer(S, b, at + 64, O); u = u.add(z.mul(z));
      FloatVector q = FloatVector.fromByteBuffer(S, b, at + 96, O); v = v.add(q.mul(q)); }
    return s.add(t).add(u.add(v)).reduceLanes(VectorOperators.ADD);
  }
  static float blocksSumArray(float[] a, int off, int w) {
    int at = 0, index = off;
    for (int block = 0; block < w / 128; block++, at += 8) {
      FloatVector s = FloatVector.zero(S);
      for (int end = index + 128; index < end; index += 8) { FloatVector x = FloatVector.fromArray(S, a, index); s = s.add(x.mul(x)); }
      s.intoArray(lanes, at);
    }
    float s = 0; for (int i = 0; i < at; i++) s += lanes[i];
    return s;
  }
  static void hybrid(FloatBuffer fi, ByteBuffer out, float[] a, int n, int w) {
    for (int r = 0; r < n; r += w) {
      for (int d = 0; d < w; d += 768) fi.get(r + d, a, d, Math.min(768, w - d));
      float sc = (float) (1 / Math.sqrt(blocksSumArray(a, 0, w) / w + 1e-6));
      for (int i = 0; i < w; i += 8) FloatVector.fromArray(S, a, i).mul(sc).intoByteBuffer(out, 4 * (r + i), O);
    }
  }
  static void pieces(FloatBuffer fi, FloatBuffer fo, float[] small, int n, int w) {
    int p = small.length;
    for (int r = 0; r < n; r += w) {
      int at = 0;
      for (int d = 0; d < w; d += p) {
        fi.get(r + d, small, 0, p);
        for (int b = 0; b < p; b += 128, at += 8) {
          FloatVector s = FloatVector.zero(S);
          for (int i = b; i < b + 128; i += 8) { FloatVector x = FloatVector.fromArray(S, small, i); s = s.add(x.mul(x)); }
          s.intoArray(lanes, at);
        }
      }
      float t = 0; for (int i = 0; i < at; i++) t += lanes[i];
      FloatVector sc = FloatVector.broadcast(S, (float) (1 / Math.sqrt(t / w + 1e-6)));
      for (int d = 0; d < w; d += p) {
        fi.get(r + d, small, 0, p);
        for (int i = 0; i < p; i += 8) FloatVector.fromArray(S, small, i).mul(sc).intoArray(small, i);
        fo.put(r + d, small, 0, p);
      }
    }
  }
  static void scale(ByteBuffer in, ByteBuffer out, int r, int w, float sc) {
    for (int i = r; i < r + w; i += 8) FloatVector.fromByteBuffer(S, in, 4 * i, O).mul(sc).intoByteBuffer(out, 4 * i, O);
  }
  static void direct(ByteBuffer in, ByteBuffer out, int n, int w, boolean blocks) {
    for (int r = 0; r < n; r += w) {
      float s = blocks ? blocksSum(in, r, w) : consecutiveSum(in, r, w);
      scale(in, out, r, w, (float) (1 / Math.sqrt(s / w + 1e-6)));
    }
  }
  public static void main(String[] args) {
    int w = Integer.parseInt(args[0]);
    int bytes = 256 << 20; int n = bytes / 4;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(O);
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(O);
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, (i % 1000) * 1e-3f);
    CpuEngine engine = new CpuEngine(1, RowPassSelection.VECTOR);
    Normalization norm = Normalization.of(Op.RMS_NORM);
    RowBatch batch = RowBatch.fixedWidth(ElementType.FLOAT32, n / w, w, in, out);
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      engine.normalize(norm, batch);
      long t2 = System.nanoTime();
      direct(in, out, n, w, false);
      long t3 = System.nanoTime();
      direct(in, out, n, w, true);
      long t4 = System.nanoTime();
      float[] arr = new float[w];
      hybrid(in.asFloatBuffer(), out, arr, n, w);
      long t5 = System.nanoTime();
      pieces(in.asFloatBuffer(), out.asFloatBuffer(), new float[512], n, w);
      long t6 = System.nanoTime();
      double c = t1 - t0;
      System.out.printf("w=%d copy %.1f GB/s | %% of copy: engine %.0f direct-consecutive %.0f direct-blocks %.0f hybrid %.0f pieces %.0f%n", w, 2.0 * bytes / c, 100 * c / (t2 - t1), 100 * c / (t3 - t2), 100 * c / (t4 - t3), 100 * c / (t5 - t4), 100 * c / (t6 - t5));
    }
  }
}

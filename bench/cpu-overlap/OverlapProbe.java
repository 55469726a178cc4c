// Probe (bench/cpu-overlap/README.md): can copying the next chunk between the passes of the current
// one overlap its memory reads with compute? One thread, rms_norm, 256 MiB of float32.
package io.embednorm.kernels.cpu;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

public class OverlapProbe {
  static final int CHUNK = Integer.getInteger("chunk", 1024);
  static final int SLICES = Integer.getInteger("slices", 2);

  static void serial(RowPasses p, FloatBuffer in, FloatBuffer out, int n, int width, float[] a, float[] sums, float[] scales) {
    int rows = CHUNK / width;
    for (int at = 0; at < n; at += CHUNK) {
      in.get(at, a, 0, CHUNK);
      p.sumsOfSquares(a, 0, width, rows, sums);
      System.arraycopy(sums, 0, scales, 0, rows);
      p.inverseSquareRoots(scales, rows, width, 1e-6);
      p.scaleRows(a, 0, a, 0, width, rows, scales, null);
      out.put(at, a, 0, CHUNK);
    }
  }

  static void overlapped(RowPasses p, FloatBuffer in, FloatBuffer out, int n, int width, float[] a, float[] b, float[] sums, float[] scales) {
    int rows = CHUNK / width;
    int slice = CHUNK / SLICES;
    in.get(0, a, 0, CHUNK);
    float[] cur = a, nxt = b;
    for (int at = 0; at < n; at += CHUNK) {
      int next = at + CHUNK;
      boolean more = next < n;
      p.sumsOfSquares(cur, 0, width, rows, sums);
      if (more) in.get(next, nxt, 0, slice);
      System.arraycopy(sums, 0, scales, 0, rows);
      p.inverseSquareRoots(scales, rows, width, 1e-6);
      p.scaleRows(cur, 0, cur, 0, width, rows, scales, null);
      if (more) for (int s = 1; s < SLICES; s++) in.get(next + s * slice, nxt, s * slice, slice);
      out.put(at, cur, 0, CHUNK);
      float[] t = cur; cur = nxt; nxt = t;
    }
  }

  public static void main(String[] args) {
    int width = Integer.getInteger("width", 32);
    int bytes = 256 << 20;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    java.util.Random rnd = new java.util.Random(3);
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, (float) rnd.nextGaussian());
    FloatBuffer fi = in.asFloatBuffer(), fo = out.asFloatBuffer();
    int n = bytes / 4;
    RowPasses p = RowPassSelection.VECTOR;
    float[] a = new float[CHUNK], b = new float[CHUNK], sums = new float[1024], scales = new float[1024];
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      serial(p, fi, fo, n, width, a, sums, scales);
      long t2 = System.nanoTime();
      overlapped(p, fi, fo, n, width, a, b, sums, scales);
      long t3 = System.nanoTime();
      System.out.printf("copy %.1f  serial %.1f  overlapped %.1f GB/s%n", 2.0 * bytes / (t1 - t0), 2.0 * bytes / (t2 - t1), 2.0 * bytes / (t3 - t2));
    }
  }
}

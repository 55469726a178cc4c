// Probe (bench/cpu-overlap/README.md): rms_norm on rows wider than a chunk (4096, 32768), the scale
// pass touching a line of the next row every 16 elements so that its reads start early.
package io.embednorm.kernels.cpu;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

public class TouchProbe {
  static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
  static int sink;

  static void serial(RowPasses p, FloatBuffer in, FloatBuffer out, int n, int width, float[] a, float[] sums) {
    for (int at = 0; at < n; at += width) {
      in.get(at, a, 0, width);
      p.sumsOfSquares(a, 0, width, 1, sums);
      float s = (float) (1 / Math.sqrt(sums[0] / width + 1e-6));
      for (int i = 0; i < width; i += 8) FloatVector.fromArray(F, a, i).mul(s).intoArray(a, i);
      out.put(at, a, 0, width);
    }
  }

  static void touched(RowPasses p, FloatBuffer in, FloatBuffer out, int n, int width, float[] a, float[] sums) {
    int touch = 0;
    for (int at = 0; at < n; at += width) {
      in.get(at, a, 0, width);
      p.sumsOfSquares(a, 0, width, 1, sums);
      float s = (float) (1 / Math.sqrt(sums[0] / width + 1e-6));
      int next = Math.min(at + width, n - 16);
      for (int i = 0; i < width; i += 16) {
        FloatVector.fromArray(F, a, i).mul(s).intoArray(a, i);
        FloatVector.fromArray(F, a, i + 8).mul(s).intoArray(a, i + 8);
        touch += Float.floatToRawIntBits(in.get(Math.min(next + i, n - 1)));
      }
      out.put(at, a, 0, width);
    }
    sink = touch;
  }

  public static void main(String[] args) {
    int width = Integer.getInteger("width", 4096);
    int bytes = 256 << 20;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    java.util.Random rnd = new java.util.Random(3);
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, (float) rnd.nextGaussian());
    FloatBuffer fi = in.asFloatBuffer(), fo = out.asFloatBuffer();
    int n = bytes / 4;
    RowPasses p = RowPassSelection.VECTOR;
    float[] a = new float[width], sums = new float[64];
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      serial(p, fi, fo, n, width, a, sums);
      long t2 = System.nanoTime();
      touched(p, fi, fo, n, width, a, sums);
      long t3 = System.nanoTime();
      System.out.printf("copy %.1f  serial %.1f  touched %.1f GB/s%n", 2.0 * bytes / (t1 - t0), 2.0 * bytes / (t2 - t1), 2.0 * bytes / (t3 - t2));
    }
  }
}

package io.embednorm.kernels.cpu;

import java.lang.invoke.*;
import java.lang.reflect.Method;
import java.nio.*;

public class BufferPassTimes {
  public static void main(String[] args) throws Throwable {
    int w = Integer.getInteger("width", 4096);
    int bytes = (256 << 20) / (4 * w) * 4 * w;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, (i % 1000) * 1e-3f);
    Method sq = VectorBufferKernels.class.getDeclaredMethod("sumsOfSquares", ByteBuffer.class, int.class, int.class, int.class, float[].class);
    Method sc = VectorBufferKernels.class.getDeclaredMethod("scaleRows", ByteBuffer.class, ByteBuffer.class, int.class, int.class, int.class, float[].class, float[].class);
    sq.setAccessible(true); sc.setAccessible(true);
    MethodHandle hq = MethodHandles.lookup().unreflect(sq), hc = MethodHandles.lookup().unreflect(sc);
    float[] sums = new float[64], scales = new float[64];
    java.util.Arrays.fill(scales, 0.5f);
    for (int round = 0; round < 10; round++) {
      long t0 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      for (int e = 0; e < bytes / 4; e += w) hq.invokeExact(in, e, w, 1, sums);
      long t2 = System.nanoTime();
      for (int e = 0; e < bytes / 4; e += w) hc.invokeExact(in, out, e, w, 1, scales, (float[]) null);
      long t3 = System.nanoTime();
      System.out.printf("w=%d copy %.1f GB/s; read-only sum %.1f GB/s; scale %.1f GB/s (read+write)%n", w, 2.0 * bytes / (t1 - t0), 1.0 * bytes / (t2 - t1), 2.0 * bytes / (t3 - t2));
    }
  }
}

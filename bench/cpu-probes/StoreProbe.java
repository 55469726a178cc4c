import jdk.incubator.vector.*;
import java.nio.*;

/** One thread, 256 MiB of float32: bulk copy (memmove) against a Java vector loop that copies, and one that scales. */
public class StoreProbe {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  static final ByteOrder O = ByteOrder.nativeOrder();

  static void loopCopy(ByteBuffer in, ByteBuffer out, int bytes) {
    for (int i = 0; i < bytes; i += 32) {
      FloatVector.fromByteBuffer(S, in, i, O).intoByteBuffer(out, i, O);
    }
  }

  static void arrayChunks(FloatBuffer fi, FloatBuffer fo, float[] a, int n) {
    for (int at = 0; at < n; at += a.length) { fi.get(at, a, 0, a.length); fo.put(at, a, 0, a.length); }
  }

  static void vectorChunks(ByteBuffer in, ByteBuffer out, float[] a, int bytes) {
    for (int at = 0; at < bytes; at += a.length * 4) {
      for (int i = 0; i < a.length; i += 8) FloatVector.fromByteBuffer(S, in, at + 4 * i, O).intoArray(a, i);
      for (int i = 0; i < a.length; i += 8) FloatVector.fromArray(S, a, i).intoByteBuffer(out, at + 4 * i, O);
    }
  }

  static void segmentChunks(ByteBuffer in, ByteBuffer out, float[] a, int bytes) {
    FloatBuffer fi = in.asFloatBuffer(), fo = out.asFloatBuffer();
    for (int at = 0; at < bytes / 4; at += a.length) {
      for (int i = 0; i < a.length; i++) a[i] = fi.get(at + i);
      for (int i = 0; i < a.length; i++) fo.put(at + i, a[i]);
    }
  }

  public static void main(String[] args) {
    int bytes = 256 << 20;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(O);
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(O);
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, i * 1e-9f);
    float[] a = new float[1024];
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      loopCopy(in, out, bytes);
      long t2 = System.nanoTime();
      arrayChunks(in.asFloatBuffer(), out.asFloatBuffer(), a, bytes / 4);
      long t3 = System.nanoTime();
      vectorChunks(in, out, a, bytes);
      long t4 = System.nanoTime();
      segmentChunks(in, out, a, bytes);
      long t5 = System.nanoTime();
      double gb = 2.0 * bytes / 1e9;
      System.out.printf("bulk copy %.1f GB/s, vector loop copy %.1f GB/s, 4 KiB chunks through an array %.1f GB/s, by vector loops %.1f, by scalar loops %.1f%n",
          gb / ((t1 - t0) / 1e9), gb / ((t2 - t1) / 1e9), gb / ((t3 - t2) / 1e9), gb / ((t4 - t3) / 1e9), gb / ((t5 - t4) / 1e9));
    }
  }
}

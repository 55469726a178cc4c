// Probe (bench/cpu-probes/README.md): the engine's chunk round trip (load a chunk, a stand-in kernel of PASSES
// vectorized passes over it in L1, store it) in copies of PIECE floats, against a variant: the last pass and the store
// piece by piece (default), -Dfirst=true the first pass piece by piece as loaded, -DrowPieces=true a wide row through
// a 768-float array twice (first passes, then the rest and the store), -DrowsInterleaved=true that with row r's second
// half interleaved with row r+1's first; -DoutOffset=BYTES shifts the output. Best of rounds 3-8, % of one bulk copy.
// Args: CHUNK PIECE PASSES
import java.nio.*;
public class InterleaveProbe {
  static int chunk, piece, passes, n;
  static FloatBuffer fi, fo;
  static float[] a, b;
  static void kernel(float[] a, int n) {
    for (int p = 0; p < passes; p++) {
      for (int i = 0; i < n; i++) a[i] = a[i] * 1.0001f + 1e-9f;
    }
  }
  static void load(int at, float[] x) { for (int d = 0; d < chunk; d += piece) fi.get(at + d, x, d, Math.min(piece, chunk - d)); }
  static void store(int at, float[] x) { for (int d = 0; d < chunk; d += piece) fo.put(at + d, x, d, Math.min(piece, chunk - d)); }
  static void roundTrip() {
    for (int at = 0; at < n; at += chunk) { load(at, a); kernel(a, chunk); store(at, a); }
  }
  static void lastPassByPiece() {
    for (int at = 0; at < n; at += chunk) {
      load(at, a);
      for (int p = 0; p < passes - 1; p++) for (int i = 0; i < chunk; i++) a[i] = a[i] * 1.0001f + 1e-9f;
      for (int d = 0; d < chunk; d += piece) {
        int end = Math.min(chunk, d + piece);
        for (int i = d; i < end; i++) a[i] = a[i] * 1.0001f + 1e-9f;
        fo.put(at + d, a, d, end - d);
      }
    }
  }
  static void firstPassByPiece() {
    for (int at = 0; at < n; at += chunk) {
      for (int d = 0; d < chunk; d += 768) {
        int end = Math.min(chunk, d + 768);
        for (int e = d; e < end; e += piece) fi.get(at + e, a, e, Math.min(piece, end - e));
        for (int i = d; i < end; i++) a[i] = a[i] * 1.0001f + 1e-9f;
      }
      kernelFrom(1);
      store(at, a);
    }
  }
  /** A wide row in pieces of 768: pass 1 reads each piece through a small array (a reduction), pass 2 reads it again, computes, stores. */
  static float rowByPieces() {
    float total = 0;
    for (int at = 0; at < n; at += chunk) {
      float s = 0;
      for (int d = 0; d < chunk; d += 768) {
        int len = Math.min(768, chunk - d);
        for (int e = 0; e < len; e += piece) fi.get(at + d + e, b, e, Math.min(piece, len - e));
        for (int p = 0; p < passes / 2; p++) for (int i = 0; i < len; i++) b[i] = b[i] * 1.0001f + 1e-9f;
        s += b[0];
      }
      for (int d = 0; d < chunk; d += 768) {
        int len = Math.min(768, chunk - d);
        for (int e = 0; e < len; e += piece) fi.get(at + d + e, b, e, Math.min(piece, len - e));
        for (int p = 0; p < passes - passes / 2; p++) for (int i = 0; i < len; i++) b[i] = b[i] * 1.0001f + 1e-9f;
        for (int e = 0; e < len; e += piece) fo.put(at + d + e, b, e, Math.min(piece, len - e));
      }
      total += s;
    }
    return total;
  }
  /** rowByPieces with row r's second pass interleaved, piece by piece, with row r+1's first pass. */
  static float rowsInterleaved() {
    float total = 0;
    float[] c = new float[768];
    for (int at = -chunk; at < n; at += chunk) {
      int next = at + chunk;
      for (int d = 0; d < chunk; d += 768) {
        int len = Math.min(768, chunk - d);
        if (at >= 0) {
          for (int e = 0; e < len; e += piece) fi.get(at + d + e, b, e, Math.min(piece, len - e));
          for (int p = 0; p < passes - passes / 2; p++) for (int i = 0; i < len; i++) b[i] = b[i] * 1.0001f + 1e-9f;
          for (int e = 0; e < len; e += piece) fo.put(at + d + e, b, e, Math.min(piece, len - e));
        }
        if (next < n) {
          for (int e = 0; e < len; e += piece) fi.get(next + d + e, c, e, Math.min(piece, len - e));
          for (int p = 0; p < passes / 2; p++) for (int i = 0; i < len; i++) c[i] = c[i] * 1.0001f + 1e-9f;
          total += c[0];
        }
      }
    }
    return total;
  }
  static void kernelFrom(int first) {
    for (int p = first; p < passes; p++) for (int i = 0; i < chunk; i++) a[i] = a[i] * 1.0001f + 1e-9f;
  }
  static void pipelined() {
    float[] cur = a, prev = b;
    int prevAt = -1;
    for (int at = 0; at < n; at += chunk) {
      for (int d = 0; d < chunk; d += piece) {
        int len = Math.min(piece, chunk - d);
        if (prevAt >= 0) fo.put(prevAt + d, prev, d, len);
        fi.get(at + d, cur, d, len);
      }
      kernel(cur, chunk);
      float[] t = prev; prev = cur; cur = t; prevAt = at;
    }
    store(prevAt, prev);
  }
  public static void main(String[] args) {
    chunk = Integer.parseInt(args[0]); piece = Integer.parseInt(args[1]); passes = Integer.parseInt(args[2]);
    int bytes0 = 256 << 20; n = (bytes0 / 4) / chunk * chunk; long bytes = 4L * n;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes0).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer out = ByteBuffer.allocateDirect(bytes0 + 8192).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < bytes0; i += 4) in.putFloat(i, (i % 1000) * 1e-3f);
    for (int i = 0; i < bytes0; i += 4096) out.putFloat(i, 0);
    fi = in.asFloatBuffer(); int off = Integer.getInteger("outOffset", 0); out.position(off); fo = out.slice().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer(); out.position(0);
    a = new float[chunk]; b = new float[chunk];
    double[] best = new double[3];
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      out.clear(); in.clear(); in.limit((int) bytes); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      roundTrip();
      long t2 = System.nanoTime();
      if (Boolean.getBoolean("first")) firstPassByPiece(); else if (Boolean.getBoolean("rowPieces")) rowByPieces(); else if (Boolean.getBoolean("rowsInterleaved")) rowsInterleaved(); else lastPassByPiece();
      long t3 = System.nanoTime();
      double[] g = {2.0 * bytes / (t1 - t0), 2.0 * bytes / (t2 - t1), 2.0 * bytes / (t3 - t2)};
      if (round >= 2) for (int k = 0; k < 3; k++) best[k] = Math.max(best[k], g[k]);
      if (round >= 5) System.out.printf("chunk %d piece %d passes %d: bulk copy %.1f  round trip %.1f  last pass by piece %.1f GB/s%n", chunk, piece, passes, g[0], g[1], g[2]);
    }
    System.out.printf("BEST chunk %d piece %d passes %d: bulk copy %.1f  round trip %.1f (%.0f %%)  last pass by piece %.1f (%.0f %%)%n", chunk, piece, passes, best[0], best[1], 100 * best[1] / best[0], best[2], 100 * best[2] / best[0]);
  }
}

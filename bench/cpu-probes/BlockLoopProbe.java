// Probe (bench/cpu-probes/README.md): the four-block loop of LayerNorm's Σd and Σd² alone, with and without FMA for the squares, and in groups of four blocks of U. Args: N U.
import jdk.incubator.vector.*;
public class BlockLoopProbe {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  static final Class<? extends Vector<Float>> C = S.vectorType();
  static float[] lanes = new float[64];
  static void plain(float[] v, int n, float shift) {
    int u = n / 4; int index = 0;
    FloatVector a = FloatVector.zero(S), b = a, c = a, d = a, aa = a, bb = a, cc = a, dd = a;
    for (int end = u; index < end; index += 8) {
      FloatVector x = FloatVector.fromArray(S, v, index).sub(FloatVector.broadcast(S, shift));
      FloatVector y = FloatVector.fromArray(S, v, index + u).sub(FloatVector.broadcast(S, shift));
      FloatVector z = FloatVector.fromArray(S, v, index + 2 * u).sub(FloatVector.broadcast(S, shift));
      FloatVector w = FloatVector.fromArray(S, v, index + 3 * u).sub(FloatVector.broadcast(S, shift));
      a = ((FloatVector) C.cast(a)).add(x); b = ((FloatVector) C.cast(b)).add(y); c = ((FloatVector) C.cast(c)).add(z); d = ((FloatVector) C.cast(d)).add(w);
      aa = ((FloatVector) C.cast(aa)).add(x.mul(x)); bb = ((FloatVector) C.cast(bb)).add(y.mul(y)); cc = ((FloatVector) C.cast(cc)).add(z.mul(z)); dd = ((FloatVector) C.cast(dd)).add(w.mul(w));
    }
    ((FloatVector) C.cast(a.add(b).add(c).add(d))).intoArray(lanes, 0);
    ((FloatVector) C.cast(aa.add(bb).add(cc).add(dd))).intoArray(lanes, 8);
  }
  static void fma(float[] v, int n, float shift) {
    int u = n / 4; int index = 0;
    FloatVector a = FloatVector.zero(S), b = a, c = a, d = a, aa = a, bb = a, cc = a, dd = a;
    for (int end = u; index < end; index += 8) {
      FloatVector x = FloatVector.fromArray(S, v, index).sub(FloatVector.broadcast(S, shift));
      FloatVector y = FloatVector.fromArray(S, v, index + u).sub(FloatVector.broadcast(S, shift));
      FloatVector z = FloatVector.fromArray(S, v, index + 2 * u).sub(FloatVector.broadcast(S, shift));
      FloatVector w = FloatVector.fromArray(S, v, index + 3 * u).sub(FloatVector.broadcast(S, shift));
      a = ((FloatVector) C.cast(a)).add(x); b = ((FloatVector) C.cast(b)).add(y); c = ((FloatVector) C.cast(c)).add(z); d = ((FloatVector) C.cast(d)).add(w);
      aa = x.fma(x, C.cast(aa)); bb = y.fma(y, C.cast(bb)); cc = z.fma(z, C.cast(cc)); dd = w.fma(w, C.cast(dd));
    }
    ((FloatVector) C.cast(a.add(b).add(c).add(d))).intoArray(lanes, 0);
    ((FloatVector) C.cast(aa.add(bb).add(cc).add(dd))).intoArray(lanes, 8);
  }
  static void squares(float[] v, int n) {
    int u = n / 4; int index = 0;
    FloatVector a = FloatVector.zero(S), b = a, c = a, d = a;
    for (int end = u; index < end; index += 8) {
      FloatVector x = FloatVector.fromArray(S, v, index), y = FloatVector.fromArray(S, v, index + u), z = FloatVector.fromArray(S, v, index + 2 * u), w = FloatVector.fromArray(S, v, index + 3 * u);
      a = ((FloatVector) C.cast(a)).add(x.mul(x)); b = ((FloatVector) C.cast(b)).add(y.mul(y)); c = ((FloatVector) C.cast(c)).add(z.mul(z)); d = ((FloatVector) C.cast(d)).add(w.mul(w));
    }
    ((FloatVector) C.cast(a.add(b).add(c).add(d))).intoArray(lanes, 0);
  }

  static float[] big = new float[4096];
  static int U = 128;
  static void blocked(float[] v, int n, float shift) {
    int u = U; int index = 0; int at = 0;
    for (int g = 0; g < n / 512; g++, at += 32) {
    FloatVector a = FloatVector.zero(S), b = a, c = a, d = a, aa = a, bb = a, cc = a, dd = a;
    for (int end = index + u; index < end; index += 8) {
      FloatVector x = FloatVector.fromArray(S, v, index).sub(FloatVector.broadcast(S, shift));
      FloatVector y = FloatVector.fromArray(S, v, index + u).sub(FloatVector.broadcast(S, shift));
      FloatVector z = FloatVector.fromArray(S, v, index + 2 * u).sub(FloatVector.broadcast(S, shift));
      FloatVector w = FloatVector.fromArray(S, v, index + 3 * u).sub(FloatVector.broadcast(S, shift));
      a = ((FloatVector) C.cast(a)).add(x); b = ((FloatVector) C.cast(b)).add(y); c = ((FloatVector) C.cast(c)).add(z); d = ((FloatVector) C.cast(d)).add(w);
      aa = ((FloatVector) C.cast(aa)).add(x.mul(x)); bb = ((FloatVector) C.cast(bb)).add(y.mul(y)); cc = ((FloatVector) C.cast(cc)).add(z.mul(z)); dd = ((FloatVector) C.cast(dd)).add(w.mul(w));
    }
    index += 3 * u;
    ((FloatVector) C.cast(a)).intoArray(big, at); ((FloatVector) C.cast(b)).intoArray(big, at + 8); ((FloatVector) C.cast(c)).intoArray(big, at + 16); ((FloatVector) C.cast(d)).intoArray(big, at + 24);
    ((FloatVector) C.cast(aa)).intoArray(big, 2048 + at); ((FloatVector) C.cast(bb)).intoArray(big, 2048 + at + 8); ((FloatVector) C.cast(cc)).intoArray(big, 2048 + at + 16); ((FloatVector) C.cast(dd)).intoArray(big, 2048 + at + 24);
    }
  }
  public static void main(String[] args) {
    int n = Integer.parseInt(args[0]); U = Integer.parseInt(args[1]);
    float[] v = new float[n]; java.util.Random r = new java.util.Random(1); for (int i = 0; i < n; i++) v[i] = (float) r.nextGaussian();
    long reps = 400_000_000L / n;
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime(); for (long k = 0; k < reps; k++) plain(v, n, 0.5f);
      long t1 = System.nanoTime(); for (long k = 0; k < reps; k++) fma(v, n, 0.5f);
      long t2 = System.nanoTime(); for (long k = 0; k < reps; k++) blocked(v, n, 0.5f);
      long t3 = System.nanoTime();
      if (round >= 3) System.out.printf("n=%d plain %.3f fma %.3f blocked128 %.3f ns/element%n", n, (t1 - t0) / (double) (reps * n), (t2 - t1) / (double) (reps * n), (t3 - t2) / (double) (reps * n));
    }
  }
}

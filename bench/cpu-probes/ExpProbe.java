// Probe (bench/cpu-probes/README.md): the softmax exponential (FloatExponential's operations) on Vector API
// registers of -Dbits=256 or 512 (one and two registers an iteration) and the scalar loop, over 1024 floats in L1.
import jdk.incubator.vector.*;

public class ExpProbe {
  static final VectorSpecies<Float> F = Integer.getInteger("bits", 256) == 512 ? FloatVector.SPECIES_512 : FloatVector.SPECIES_256;
  static final int L = F.length();
  static final float LOWEST = -87.33654f, LOG2_E = 1.44269504088896341f, ROUNDING = 0x1.8p23f;
  static final int RB = Float.floatToRawIntBits(ROUNDING);
  static final float LN2_HIGH = 0.693359375f, LN2_LOW = -2.12194440e-4f;
  static final float P0 = 1.9875691500e-4f, P1 = 1.3981999507e-3f, P2 = 8.3334519073e-3f, P3 = 4.1665795894e-2f, P4 = 1.6666665459e-1f, P5 = 5.0000001201e-1f;

  static float full(float[] in, float[] out, float m) {
    FloatVector sum = FloatVector.zero(F);
    for (int i = 0; i < in.length; i += L) {
      FloatVector x = FloatVector.fromArray(F, in, i).sub(m);
      FloatVector rounded = x.mul(LOG2_E).add(ROUNDING);
      FloatVector n = rounded.sub(ROUNDING);
      FloatVector r = x.sub(n.mul(LN2_HIGH)).sub(n.mul(LN2_LOW));
      FloatVector poly = r.mul(P0).add(P1).mul(r).add(P2).mul(r).add(P3).mul(r).add(P4).mul(r).add(P5);
      FloatVector mant = poly.mul(r.mul(r)).add(r).add(1f);
      FloatVector power = ((IntVector) rounded.reinterpretAsInts()).add(127 - RB).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
      FloatVector e = mant.mul(power).blend(0f, x.lt(LOWEST));
      e.intoArray(out, i);
      sum = sum.add(e);
    }
    return sum.reduceLanes(VectorOperators.ADD);
  }




  static float full2(float[] in, float[] out, float m) {
    FloatVector sum = FloatVector.zero(F), sum2 = FloatVector.zero(F);
    for (int i = 0; i < in.length; i += 2 * L) {
      FloatVector x = FloatVector.fromArray(F, in, i).sub(m);
      FloatVector y = FloatVector.fromArray(F, in, i + L).sub(m);
      FloatVector rx = x.mul(LOG2_E).add(ROUNDING), ry = y.mul(LOG2_E).add(ROUNDING);
      FloatVector nx = rx.sub(ROUNDING), ny = ry.sub(ROUNDING);
      FloatVector ax = x.sub(nx.mul(LN2_HIGH)).sub(nx.mul(LN2_LOW)), ay = y.sub(ny.mul(LN2_HIGH)).sub(ny.mul(LN2_LOW));
      FloatVector px = ax.mul(P0).add(P1).mul(ax).add(P2).mul(ax).add(P3).mul(ax).add(P4).mul(ax).add(P5);
      FloatVector py = ay.mul(P0).add(P1).mul(ay).add(P2).mul(ay).add(P3).mul(ay).add(P4).mul(ay).add(P5);
      FloatVector mx = px.mul(ax.mul(ax)).add(ax).add(1f), my = py.mul(ay.mul(ay)).add(ay).add(1f);
      FloatVector wx = ((IntVector) rx.reinterpretAsInts()).add(127 - RB).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
      FloatVector wy = ((IntVector) ry.reinterpretAsInts()).add(127 - RB).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
      FloatVector ex = mx.mul(wx).blend(0f, x.lt(LOWEST)), ey = my.mul(wy).blend(0f, y.lt(LOWEST));
      ex.intoArray(out, i); ey.intoArray(out, i + L);
      sum = sum.add(ex); sum2 = sum2.add(ey);
    }
    return sum.add(sum2).reduceLanes(VectorOperators.ADD);
  }
  static float scalarLoop(float[] in, float[] out, float m) {
    float sum = 0;
    for (int i = 0; i < in.length; i++) {
      float x = in[i] - m;
      float rounded = x * LOG2_E + ROUNDING;
      float n = rounded - ROUNDING;
      float r = x - n * LN2_HIGH - n * LN2_LOW;
      float poly = ((((P0 * r + P1) * r + P2) * r + P3) * r + P4) * r + P5;
      float mant = poly * (r * r) + r + 1f;
      float power = Float.intBitsToFloat((Float.floatToRawIntBits(rounded) + (127 - RB)) << 23);
      float e = x < LOWEST ? 0f : mant * power;
      out[i] = e; sum += e;
    }
    return sum;
  }
  interface K { float run(float[] a, float[] b, float m); }
  public static void main(String[] args) {
    float[] a = new float[1024], o = new float[1024];
    java.util.Random rnd = new java.util.Random(1);
    for (int i = 0; i < a.length; i++) a[i] = (float) rnd.nextGaussian() - 3;
    String[] names = {"full2", "scalar", "full"};
    K[] ks = {ExpProbe::full2, ExpProbe::scalarLoop, ExpProbe::full};
    float sink = 0;
    for (int round = 0; round < 5; round++) {
      StringBuilder line = new StringBuilder();
      for (int k = 0; k < ks.length; k++) {
        long t0 = System.nanoTime();
        for (int i = 0; i < 65536; i++) sink += ks[k].run(a, o, 0.5f);
        long t1 = System.nanoTime();
        line.append(String.format("%s %.3f  ", names[k], (t1 - t0) / (1024.0 * 65536)));
      }
      System.out.println(line + " ns/element");
    }
    System.out.println(sink);
  }
}

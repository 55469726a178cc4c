# Probe (bench/cpu-probes/README.md): the 512-bit exponential with variations (bit 0: the floor as compare + blend; bit 1: Estrin for P; bit 2: P of degree 3), ns an element over 768 floats in L1.
import jdk.incubator.vector.*;
import static jdk.incubator.vector.VectorOperators.*;
public class ExpVariants {
  static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
  static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
  static final float FLOOR=-88f, LOG2_E = 1.44269504088896341f, ROUNDING = 0x1.8p23f;
  static final int RB = Float.floatToRawIntBits(ROUNDING);
  static final float LN2_HIGH = 0.693359375f, LN2_LOW = -2.12194440e-4f;
  static final float P0 = 1.9875691500e-4f, P1 = 1.3981999507e-3f, P2 = 8.3334519073e-3f, P3 = 4.1665795894e-2f, P4 = 1.6666665459e-1f, P5 = 5.0000001201e-1f;
  static void run(int variant, float[] in, float[] out, float m) {
    FloatVector floor = FloatVector.broadcast(F, FLOOR), log2e = FloatVector.broadcast(F, LOG2_E), rounding = FloatVector.broadcast(F, ROUNDING);
    FloatVector h = FloatVector.broadcast(F, LN2_HIGH), l = FloatVector.broadcast(F, LN2_LOW);
    FloatVector p0 = FloatVector.broadcast(F, P0), p1 = FloatVector.broadcast(F, P1), p2 = FloatVector.broadcast(F, P2), p3 = FloatVector.broadcast(F, P3), p4 = FloatVector.broadcast(F, P4), p5 = FloatVector.broadcast(F, P5), one = FloatVector.broadcast(F, 1f);
    IntVector bias = IntVector.broadcast(I, 127 - RB), scale = IntVector.broadcast(I, 1 << 23);
    for (int i = 0; i < in.length; i += 16) {
      FloatVector d = FloatVector.fromArray(F, in, i).lanewise(SUB, FloatVector.broadcast(F, m));
      FloatVector x = (variant & 1) == 0 ? d.lanewise(MAX, floor) : d.blend(floor, d.compare(LT, floor));
      FloatVector rounded = x.lanewise(MUL, log2e).lanewise(ADD, rounding);
      FloatVector n = rounded.lanewise(SUB, rounding);
      FloatVector r = x.lanewise(SUB, n.lanewise(MUL, h)).lanewise(SUB, n.lanewise(MUL, l));
      FloatVector r2 = r.lanewise(MUL, r);
      FloatVector poly;
      if ((variant & 4) != 0) {
        poly = r.lanewise(MUL, p2).lanewise(ADD, p3).lanewise(MUL, r).lanewise(ADD, p4).lanewise(MUL, r).lanewise(ADD, p5);
      } else if ((variant & 2) == 0) {
        poly = r.lanewise(MUL, p0).lanewise(ADD, p1).lanewise(MUL, r).lanewise(ADD, p2).lanewise(MUL, r).lanewise(ADD, p3).lanewise(MUL, r).lanewise(ADD, p4).lanewise(MUL, r).lanewise(ADD, p5);
      } else {
        FloatVector a = r.lanewise(MUL, p0).lanewise(ADD, p1);
        FloatVector b = r.lanewise(MUL, p2).lanewise(ADD, p3);
        FloatVector c = r.lanewise(MUL, p4).lanewise(ADD, p5);
        poly = a.lanewise(MUL, r2).lanewise(ADD, b).lanewise(MUL, r2).lanewise(ADD, c);
      }
      FloatVector mant = poly.lanewise(MUL, r2).lanewise(ADD, r).lanewise(ADD, one);
      FloatVector power = (FloatVector) rounded.reinterpretShape(I, 0).lanewise(ADD, bias).lanewise(MUL, scale).reinterpretShape(F, 0);
      mant.lanewise(MUL, power).intoArray(out, i);
    }
  }
  public static void main(String[] args) {
    float[] a = new float[768], o = new float[768];
    java.util.Random rnd = new java.util.Random(1);
    for (int i = 0; i < a.length; i++) a[i] = (float) rnd.nextGaussian() - 3;
    int[] vs = {0, 1, 4, 5};
    for (int round = 0; round < 8; round++) {
      StringBuilder line = new StringBuilder();
      for (int v : vs) {
        long t0 = System.nanoTime();
        for (int k = 0; k < 200000; k++) run(v, a, o, 0.5f);
        long t1 = System.nanoTime();
        line.append(String.format("v%d %.3f  ", v, (t1 - t0) / (768.0 * 200000)));
      }
      System.out.println(line + " ns/element");
    }
  }
}

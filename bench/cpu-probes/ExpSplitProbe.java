// Probe (bench/cpu-probes/README.md): storeExponentials against an exponential-only loop plus sumsOfDifferences with zero shifts: time and whether the bits agree (-Dwidth).
package io.embednorm.kernels.cpu;

import jdk.incubator.vector.*;

public class ExpSplitProbe {
  static final VectorSpecies<Float> F = FloatVector.SPECIES_256;

  static void storeFlat(float[] in, int off, float[] out, int width, int count, float[] maxima) {
    for (int row = 0, start = off; row < count; row++, start += width) {
      float maximum = maxima[row];
      int end = start + width, full = start + (width & ~7), index = start;
      for (; index < full; index += 8) {
        FloatVector x = FloatVector.fromArray(F, in, index).sub(maximum).max(FloatExponential.FLOOR);
        FloatVector rounded = x.mul(FloatExponential.LOG2_E).add(FloatExponential.ROUNDING);
        FloatVector n = rounded.sub(FloatExponential.ROUNDING);
        FloatVector r = x.sub(n.mul(FloatExponential.LN2_HIGH)).sub(n.mul(FloatExponential.LN2_LOW));
        FloatVector polynomial = r.mul(FloatExponential.P0).add(FloatExponential.P1).mul(r).add(FloatExponential.P2).mul(r)
            .add(FloatExponential.P3).mul(r).add(FloatExponential.P4).mul(r).add(FloatExponential.P5);
        FloatVector mantissa = polynomial.mul(r.mul(r)).add(r).add(1f);
        FloatVector power = ((IntVector) rounded.reinterpretAsInts()).add(127 - FloatExponential.ROUNDING_BITS)
            .lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
        mantissa.mul(power).intoArray(out, index);
      }
      for (; index < end; index++) out[index] = FloatExponential.exp(in[index] - maximum);
    }
  }

  public static void main(String[] args) {
    int width = Integer.getInteger("width", 768);
    int rows = Math.max(1, 1024 / width);
    int elements = rows * width;
    RowPasses p = RowPassSelection.VECTOR;
    float[] a = new float[elements], o = new float[elements], o2 = new float[elements], s = new float[64], t = new float[64], z = new float[64], t2 = new float[64];
    java.util.Random rnd = new java.util.Random(1);
    for (int i = 0; i < a.length; i++) a[i] = (float) rnd.nextGaussian();
    p.maxima(a, 0, width, rows, s);
    int iters = (64 << 20) / elements;
    for (int round = 0; round < 6; round++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < iters; i++) p.storeExponentials(a, 0, o, 0, width, rows, s, t);
      long t1 = System.nanoTime();
      for (int i = 0; i < iters; i++) { storeFlat(a, 0, o2, width, rows, s); p.sumsOfDifferences(o2, 0, width, rows, z, t2); }
      long t2n = System.nanoTime();
      double el = (double) elements * iters;
      boolean same = java.util.Arrays.equals(o, o2) && Float.floatToIntBits(t[0]) == Float.floatToIntBits(t2[0]) && Float.floatToIntBits(t[rows - 1]) == Float.floatToIntBits(t2[rows - 1]);
      System.out.printf("w%d ns/element: storeExponentials %.3f, flat store + sumsOfDifferences %.3f, same bits %s%n", width, (t1 - t0) / el, (t2n - t1) / el, same);
    }
  }
}

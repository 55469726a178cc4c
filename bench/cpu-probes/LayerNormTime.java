// Probe (bench/cpu-probes/README.md): FloatRowKernels.layerNorm on one chunk in L1, ns an element, at the widths given (-Dscalar=true: the scalar passes).
package io.embednorm.kernels.cpu;
public class LayerNormTime {
  public static void main(String[] a) throws Exception {
    RowPasses p = (RowPasses) Class.forName("io.embednorm.kernels.cpu.VectorRowPasses").getDeclaredMethod("createIfSupported").invoke(null);
    if (Boolean.getBoolean("scalar")) p = ScalarRowPasses.INSTANCE;
    for (String ws : a) {
      int width = Integer.parseInt(ws);
      int rows = Math.max(1, 768 / width);
      float[] in = new float[rows * width], out = new float[rows * width];
      java.util.Random r = new java.util.Random(5);
      for (int i = 0; i < in.length; i++) in[i] = (float) r.nextGaussian();
      long reps = 400_000_000L / in.length;
      double best = 1e9;
      for (int round = 0; round < 5; round++) {
        long t = System.nanoTime();
        for (long k = 0; k < reps; k++) FloatRowKernels.layerNorm(p, in, 0, out, 0, width, rows, 1e-5, null, null);
        best = Math.min(best, (System.nanoTime() - t) / (double) (reps * in.length));
      }
      System.out.printf("%s width %d: %.3f ns/elt (L1-resident)%n", p.description(), width, best);
    }
  }
}

package io.embednorm.engine;

import java.util.Random;

/**
 * {@code causal_conv} in float64, written from the definition: {@code out[t][c] = eps + Σ_{u=0..t}
 * w[c][T_w − 1 − (t − u)] · k[u][c]}, with k and out step-major ({@code t * C + c}) and w given as
 * C rows of T_w. Also the bound every engine is held to (docs/SEMANTICS.md, Causal convolution).
 */
public final class CausalConvolutionReference {
  /** The tested bound: {@code |out − reference| ≤ RELATIVE · (Σ|w·k| + |eps|) + ABSOLUTE}. */
  public static final double RELATIVE = 1e-5;

  public static final double ABSOLUTE = 1e-30;

  private CausalConvolutionReference() {}

  /** The reference output, steps × C. */
  public static double[] convolve(float[][] w, float eps, float[] k, int steps) {
    return sums(w, eps, k, steps, false);
  }

  /** {@code Σ_u |w·k|} for every output: the scale of its rounding error. */
  public static double[] magnitudes(float[][] w, float[] k, int steps) {
    return sums(w, 0f, k, steps, true);
  }

  private static double[] sums(float[][] w, float eps, float[] k, int steps, boolean absolute) {
    int channels = w.length;
    int kernelSteps = w[0].length;
    double[] out = new double[steps * channels];
    for (int c = 0; c < channels; c++) {
      for (int t = 0; t < steps; t++) {
        double sum = 0;
        for (int u = 0; u <= t; u++) {
          double term = (double) w[c][kernelSteps - 1 - (t - u)] * (double) k[u * channels + c];
          sum += absolute ? Math.abs(term) : term;
        }
        out[t * channels + c] = absolute ? sum : eps + sum;
      }
    }
    return out;
  }

  /**
   * The index of the first output outside the bound, or −1. Non-finite references must match
   * exactly (NaN for NaN, the same infinity).
   */
  public static int firstOutsideBound(float[][] w, float eps, float[] k, int steps, float[] out) {
    double[] reference = convolve(w, eps, k, steps);
    double[] scale = magnitudes(w, k, steps);
    for (int i = 0; i < reference.length; i++) {
      double expected = reference[i];
      double actual = out[i];
      boolean good =
          Double.isFinite(expected)
              ? Math.abs(actual - expected) <= RELATIVE * (scale[i] + Math.abs(eps)) + ABSOLUTE
              : Double.compare(actual, expected) == 0
                  || (Double.isNaN(actual) && Double.isNaN(expected));
      if (!good) {
        return i;
      }
    }
    return -1;
  }

  /** Random weights in [−0.5, 0.5) as C rows of {@code steps}. */
  public static float[][] randomKernel(Random random, int channels, int steps) {
    float[][] w = new float[channels][steps];
    for (float[] row : w) {
      for (int j = 0; j < steps; j++) {
        row[j] = random.nextFloat() - 0.5f;
      }
    }
    return w;
  }

  /** A random sequence of standard normal values, steps × C. */
  public static float[] randomSequence(Random random, int steps, int channels) {
    float[] k = new float[steps * channels];
    for (int i = 0; i < k.length; i++) {
      k[i] = (float) random.nextGaussian();
    }
    return k;
  }
}

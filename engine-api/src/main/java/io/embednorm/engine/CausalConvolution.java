package io.embednorm.engine;

/**
 * {@code causal_conv} on one sequence held in a Java array: {@code out[t][c] = eps + Σ_{u ≤ t}
 * w[c][T_w − 1 − (t − u)] · k[u][c]}, with k and out held step after step ({@code t * C + c}, the
 * token-embedding layout) and w the {@link ConvolutionKernel} (docs/SEMANTICS.md, Causal
 * convolution). Sums in float32; NaN and infinities propagate. Found through {@link
 * Engines#causalConvolution()}; thread-safe.
 */
public interface CausalConvolution {

  /**
   * Writes the convolution of {@code steps × kernel.channels()} floats of {@code sequence} from
   * {@code offset} to {@code output} from {@code outputOffset}; zero steps write nothing.
   *
   * @throws EmbedNormException when {@code steps} exceeds {@link ConvolutionKernel#steps()}
   */
  void convolve(
      ConvolutionKernel kernel,
      float eps,
      float[] sequence,
      int offset,
      int steps,
      float[] output,
      int outputOffset);
}

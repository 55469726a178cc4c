package io.embednorm.engine;

/**
 * The ops on one row held in a Java array, in place, on the CPU engine's loops: for callers that
 * hold rows as arrays (Spark's row-at-a-time path). A row gets the bits the CPU engine gives it in
 * any batch. Found through {@link Engines#arrayKernels()}; thread-safe.
 */
public interface ArrayKernels {

  /**
   * Normalizes {@code values[offset, offset + width)} in place; an empty row writes nothing.
   *
   * @throws EmbedNormException when a weight or bias length differs from {@code width}
   */
  void normalize(Normalization normalization, float[] values, int offset, int width);

  /** As the float32 method, for float64 rows. */
  void normalize(Normalization normalization, double[] values, int offset, int width);

  /** Which loops run in this JVM, e.g. {@code java simd, 512-bit} or {@code java scalar}. */
  String implementation();
}

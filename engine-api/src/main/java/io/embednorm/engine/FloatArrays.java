package io.embednorm.engine;

import java.nio.FloatBuffer;

/**
 * Java arrays for engines whose loops work on arrays, from the float buffers of a call: the backing
 * array itself where a buffer is a whole heap array, a copy otherwise (a direct buffer, a slice, a
 * read-only view). Floats count from index 0 of each buffer, whatever its position.
 */
public final class FloatArrays {
  private FloatArrays() {}

  /**
   * The floats of {@code buffer}: its backing array where that is the whole buffer, else a copy.
   */
  public static float[] readable(FloatBuffer buffer) {
    if (isWholeArray(buffer)) {
      return buffer.array();
    }
    float[] copy = new float[buffer.capacity()];
    buffer.get(0, copy);
    return copy;
  }

  /**
   * An array to write {@code buffer}'s floats into: its backing array where that is the whole
   * buffer, else a new one that {@link #store} then copies into the buffer.
   */
  public static float[] writable(FloatBuffer buffer) {
    return isWholeArray(buffer) ? buffer.array() : new float[buffer.capacity()];
  }

  /** Copies {@code values} into {@code buffer} unless they are its backing array already. */
  public static void store(float[] values, FloatBuffer buffer) {
    if (!isWholeArray(buffer) || buffer.array() != values) {
      buffer.put(0, values);
    }
  }

  /** Whether {@code buffer} is the whole of its backing heap array, from index 0. */
  public static boolean isWholeArray(FloatBuffer buffer) {
    return buffer.hasArray()
        && buffer.arrayOffset() == 0
        && buffer.array().length == buffer.capacity();
  }
}

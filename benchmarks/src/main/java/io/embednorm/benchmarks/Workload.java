package io.embednorm.benchmarks;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/** The data every benchmark moves: 256 MiB of float32, as direct little-endian buffers. */
final class Workload {
  /** Bytes of float32 input per operation; the output is as large again. */
  static final int BYTES = 256 << 20;

  static final int ELEMENTS = BYTES / Float.BYTES;

  private Workload() {}

  /** A direct buffer of {@link #BYTES} bytes holding embedding-like values (about N(0, 1)). */
  static ByteBuffer input() {
    ByteBuffer buffer = output();
    FloatBuffer floats = buffer.asFloatBuffer();
    float[] chunk = new float[1 << 16];
    long state = 0x9E3779B97F4A7C15L;
    for (int start = 0; start < ELEMENTS; start += chunk.length) {
      for (int i = 0; i < chunk.length; i++) {
        // Sum of four uniforms: cheap, bell-shaped, deterministic.
        float sum = 0;
        for (int k = 0; k < 4; k++) {
          state = state * 6364136223846793005L + 1442695040888963407L;
          sum += (state >>> 40) * 0x1p-24f;
        }
        chunk[i] = (sum - 2f) * 1.7f;
      }
      floats.put(start, chunk, 0, Math.min(chunk.length, ELEMENTS - start));
    }
    return buffer;
  }

  /** A zeroed direct buffer of {@link #BYTES} bytes, touched so that its pages exist. */
  static ByteBuffer output() {
    return ByteBuffer.allocateDirect(BYTES).order(ByteOrder.LITTLE_ENDIAN);
  }
}

package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class GpuChunkSizeTest {
  private static final long MIB = 1L << 20;

  @Test
  void largeBatchesUseTheConfiguredChunk() {
    assertThat(ChunkedNormalization.gpuChunkBytes(16 * MIB, 4096 * MIB)).isEqualTo(16 * MIB);
    assertThat(ChunkedNormalization.gpuChunkBytes(16 * MIB, 64 * MIB)).isEqualTo(16 * MIB);
  }

  @Test
  void aSparkSizedBatchGoesInFourChunks() {
    // 4,096 rows of 768 floats: 12 MiB, one chunk at the 16 MiB default.
    long batch = 4096L * 768 * Float.BYTES;
    assertThat(ChunkedNormalization.gpuChunkBytes(16 * MIB, batch)).isEqualTo(batch / 4);
  }

  @Test
  void smallBatchesKeepAMebibyteFloorUnlessConfiguredSmaller() {
    assertThat(ChunkedNormalization.gpuChunkBytes(16 * MIB, 100_000)).isEqualTo(MIB);
    assertThat(ChunkedNormalization.gpuChunkBytes(4096, 12 * MIB)).isEqualTo(4096);
  }
}

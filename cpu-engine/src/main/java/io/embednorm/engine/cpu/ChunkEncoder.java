package io.embednorm.engine.cpu;

import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;

/**
 * Writes the encodings of one thread's rows {@code [first, end)} of a batch, chunk by chunk, from
 * the chunk's float32 results while they are in cache: each row through {@link RowPasses#encodeRow}
 * into an array, then the chunk's bytes to the target in one bulk copy (a put per byte into a
 * direct buffer cost more than the op). Rows go where {@link EncodedRows} lays them out in the
 * whole batch, so threads with disjoint ranges share a target.
 */
final class ChunkEncoder {
  private final RowPasses passes;
  private final RowBatch batch;
  private final Encoding encoding;
  private final ByteBuffer values;
  private final ByteBuffer scales;
  private byte[] bytes = new byte[0];
  private long valueOffset;

  ChunkEncoder(RowPasses passes, RowBatch batch, EncodedRows target, int first, int end) {
    this.passes = passes;
    this.batch = batch;
    this.encoding = target.encoding();
    this.values = target.values();
    this.scales = target.scales();
    for (int row = 0; row < first; row++) {
      valueOffset += encoding.rowBytes(batch.rowWidth(row));
    }
    // The engine skips chunks of empty rows; their scale is 0 (an empty row's max|y| / 127).
    if (scales != null) {
      for (int row = first; row < end; row++) {
        if (batch.rowWidth(row) == 0) {
          scales.putFloat(4 * row, 0f);
        }
      }
    }
  }

  /** Encodes rows {@code [first, end)}, whose results {@code results} holds from element start. */
  void encode(int first, int end, float[] results, long start) {
    long chunkBytes = 0;
    for (int row = first; row < end; row++) {
      chunkBytes += encoding.rowBytes(batch.rowWidth(row));
    }
    if (bytes.length < chunkBytes) {
      bytes = new byte[Math.toIntExact(chunkBytes)];
    }
    int at = 0;
    for (int row = first; row < end; row++) {
      int width = batch.rowWidth(row);
      int offset = (int) (batch.rowStart(row) - start);
      float scale = passes.encodeRow(encoding, results, offset, width, bytes, at);
      if (scales != null) {
        scales.putFloat(4 * row, scale);
      }
      at += (int) encoding.rowBytes(width);
    }
    values.put(Math.toIntExact(valueOffset), bytes, 0, at);
    valueOffset += at;
  }
}

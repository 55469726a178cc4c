package io.embednorm.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;

/**
 * The host implementation of {@link NormalizationEngine#normalizeEncoded}: runs the op on blocks of
 * whole rows into a float32 block small enough to stay in cache, then encodes the block, so that
 * memory sees the float32 input read once and the encoded rows written once.
 */
final class BlockEncoding {
  /** 256 KiB of float32: the op's last pass and the encoding meet in the core's cache. */
  static final int BLOCK_ELEMENTS = 1 << 16;

  private BlockEncoding() {}

  static void run(
      NormalizationEngine engine, Normalization normalization, RowBatch batch, EncodedRows target) {
    if (batch.type() != ElementType.FLOAT32) {
      throw new EmbedNormException(
          "Cannot encode "
              + batch.type().name().toLowerCase(java.util.Locale.ROOT)
              + " rows: encodings take float32 rows");
    }
    target.checkFits(batch);
    Encoding encoding = target.encoding();
    ByteBuffer values = target.values();
    ByteBuffer scales = target.scales();
    ByteBuffer scratch = ByteBuffer.allocate(0);
    float[] block = new float[0];
    long valueOffset = 0;
    int row = 0;
    while (row < batch.rows()) {
      long start = batch.rowStart(row);
      int end = row + 1;
      long elements = batch.rowWidth(row);
      while (end < batch.rows() && elements + batch.rowWidth(end) <= BLOCK_ELEMENTS) {
        elements += batch.rowWidth(end);
        end++;
      }
      int count = (int) elements;
      int[] offsets = new int[end - row + 1];
      for (int k = 1; k < offsets.length; k++) {
        offsets[k] = offsets[k - 1] + batch.rowWidth(row + k - 1);
      }
      if (block.length < count) {
        block = new float[count];
        scratch = ByteBuffer.allocate(4 * count).order(ByteOrder.LITTLE_ENDIAN);
      }
      ByteBuffer input = batch.input();
      input.clear();
      input.position((int) (4 * start)).limit((int) (4 * (start + elements)));
      RowBatch part =
          RowBatch.ragged(ElementType.FLOAT32, IntBuffer.wrap(offsets), input.slice(), scratch)
              .withFirstRowIndex(batch.firstRowIndex() + row);
      engine.normalize(normalization, part);
      scratch.asFloatBuffer().get(0, block, 0, count);
      for (int k = 0; k < end - row; k++) {
        int width = offsets[k + 1] - offsets[k];
        float scale =
            RowEncoder.encode(encoding, block, offsets[k], width, values, (int) valueOffset);
        if (scales != null) {
          scales.putFloat(4 * (row + k), scale);
        }
        valueOffset += encoding.rowBytes(width);
      }
      row = end;
    }
  }
}

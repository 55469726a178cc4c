package io.embednorm.engine.spi;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.RowEncoder;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Locale;

/**
 * The host implementation of {@link NormalizationEngine#normalizeEncoded}, for engines that work on
 * host memory: runs the op on blocks of whole rows into a float32 block small enough to stay in
 * cache, then encodes the block, so that memory sees the float32 input read once and the encoded
 * rows written once. Every row is encoded alone, so its bytes do not depend on how rows are split
 * between threads. Holds no memory between calls.
 */
public final class HostEncoding {
  /** 256 KiB of float32: the op's last pass and the encoding meet in the core's cache. */
  static final int BLOCK_ELEMENTS = 1 << 16;

  private HostEncoding() {}

  /** Encodes every row of {@code batch} on the calling thread, after {@link #check}. */
  public static void run(
      NormalizationEngine engine, Normalization normalization, RowBatch batch, EncodedRows target) {
    check(normalization, batch, target);
    encodeRows(engine, normalization, batch, target, 0, batch.rows());
  }

  /**
   * Checks what {@link NormalizationEngine#normalizeEncoded} refuses before anything is written:
   * rows that are not float32, a target too small, a weight or bias of another length than a row.
   */
  public static void check(Normalization normalization, RowBatch batch, EncodedRows target) {
    if (batch.type() != ElementType.FLOAT32) {
      throw new EmbedNormException(
          "Cannot encode "
              + batch.type().name().toLowerCase(Locale.ROOT)
              + " rows: encodings take float32 rows");
    }
    target.checkFits(batch);
    if (normalization.hasWeight() || normalization.hasBias()) {
      for (int row = 0; row < batch.rows(); row++) {
        normalization.checkWidth(batch.firstRowIndex() + row, batch.rowWidth(row));
      }
    }
  }

  /**
   * Encodes rows {@code [first, end)} of a checked {@code batch} on the calling thread: their bytes
   * go where {@link EncodedRows} lays rows out in the whole batch. Several threads may encode
   * disjoint ranges of one batch at once.
   */
  public static void encodeRows(
      NormalizationEngine engine,
      Normalization normalization,
      RowBatch batch,
      EncodedRows target,
      int first,
      int end) {
    Encoding encoding = target.encoding();
    ByteBuffer values = target.values();
    ByteBuffer scales = target.scales();
    ByteBuffer scratch = ByteBuffer.allocate(0);
    float[] block = new float[0];
    byte[] encoded = new byte[0];
    long valueOffset = 0;
    for (int row = 0; row < first; row++) {
      valueOffset += encoding.rowBytes(batch.rowWidth(row));
    }
    int row = first;
    while (row < end) {
      long start = batch.rowStart(row);
      int last = row + 1;
      long elements = batch.rowWidth(row);
      while (last < end && elements + batch.rowWidth(last) <= BLOCK_ELEMENTS) {
        elements += batch.rowWidth(last);
        last++;
      }
      int count = (int) elements;
      int[] offsets = new int[last - row + 1];
      for (int k = 1; k < offsets.length; k++) {
        offsets[k] = offsets[k - 1] + batch.rowWidth(row + k - 1);
      }
      if (block.length < count) {
        block = new float[count];
        scratch = ByteBuffer.allocate(4 * count).order(ByteOrder.LITTLE_ENDIAN);
        // float16, the widest encoding, takes 2 bytes an element; binary's ⌈n / 8⌉ is at most 2n.
        encoded = new byte[2 * count];
      }
      ByteBuffer input = batch.input();
      input.clear();
      input.position((int) (4 * start)).limit((int) (4 * (start + elements)));
      RowBatch part =
          RowBatch.ragged(ElementType.FLOAT32, IntBuffer.wrap(offsets), input.slice(), scratch)
              .withFirstRowIndex(batch.firstRowIndex() + row);
      engine.normalize(normalization, part);
      scratch.asFloatBuffer().get(0, block, 0, count);
      // Rows into an array, then one bulk copy: a put per byte into a direct buffer is slow.
      int encodedBytes = 0;
      for (int k = 0; k < last - row; k++) {
        int width = offsets[k + 1] - offsets[k];
        float scale = RowEncoder.encode(encoding, block, offsets[k], width, encoded, encodedBytes);
        if (scales != null) {
          scales.putFloat(4 * (row + k), scale);
        }
        encodedBytes += (int) encoding.rowBytes(width);
      }
      values.put((int) valueOffset, encoded, 0, encodedBytes);
      valueOffset += encodedBytes;
      row = last;
    }
  }
}

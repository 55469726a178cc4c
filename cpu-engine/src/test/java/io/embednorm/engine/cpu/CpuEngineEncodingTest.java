package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.EncodingReference;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code normalizeEncoded} writes, for every row, the encoding of the float32 result the engine's
 * {@code normalize} gives that row, checked against the plain float64 reference of the encodings;
 * ragged rows with empty, zero, NaN and infinite rows, and a row wider than one block.
 */
class CpuEngineEncodingTest {
  private static final Normalization[] NORMALIZATIONS = {
    Normalization.of(Op.L2_NORMALIZE), Normalization.of(Op.RMS_NORM), Normalization.of(Op.SOFTMAX),
  };

  @ParameterizedTest
  @EnumSource(Encoding.class)
  void encodesTheFloatResultOfEveryRow(Encoding encoding) {
    try (CpuEngine engine = new CpuEngine(2)) {
      for (long seed : TestSeeds.seeds()) {
        Random random = new Random(TestSeeds.mix(seed, encoding.ordinal()));
        int rows = 60;
        int[] offsets = new int[rows + 1];
        for (int row = 0; row < rows; row++) {
          int width = row == 7 ? 70_000 : random.nextInt(5) == 0 ? 0 : 1 + random.nextInt(300);
          offsets[row + 1] = offsets[row] + width;
        }
        float[] input = new float[offsets[rows]];
        for (int i = 0; i < input.length; i++) {
          input[i] = (float) random.nextGaussian();
        }
        zero(input, offsets, 3);
        input[offsets[4]] = Float.NaN;
        input[offsets[5]] = Float.POSITIVE_INFINITY;
        for (Normalization normalization : NORMALIZATIONS) {
          check(
              engine,
              normalization,
              encoding,
              input,
              offsets,
              "seed " + seed + " " + normalization);
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Encoding.class)
  void fixedWidthRowsAndBufferChecks(Encoding encoding) {
    try (CpuEngine engine = new CpuEngine(1)) {
      Random random = new Random(5);
      int rows = 9;
      int width = 13;
      float[] input = new float[rows * width];
      for (int i = 0; i < input.length; i++) {
        input[i] = (float) random.nextGaussian();
      }
      ByteBuffer inputBuffer = floats(input);
      RowBatch batch =
          RowBatch.fixedWidth(ElementType.FLOAT32, rows, width, inputBuffer, inputBuffer);
      EncodedRows target = target(encoding, (int) encoding.rowBytes(width) * rows, rows);
      Normalization normalization = Normalization.of(Op.LAYER_NORM);
      engine.normalizeEncoded(normalization, batch, target);
      assertThat(read(inputBuffer, input.length)).as("input untouched").containsExactly(input);
      ByteBuffer output = ByteBuffer.allocateDirect(4 * input.length);
      engine.normalize(
          normalization,
          RowBatch.fixedWidth(ElementType.FLOAT32, rows, width, floats(input), output));
      float[] y = read(output, input.length);
      for (int row = 0; row < rows; row++) {
        float scale = encoding.hasScales() ? target.scales().getFloat(4 * row) : 1f;
        int bytes = (int) encoding.rowBytes(width);
        EncodingReference.assertRow(
            encoding, y, row * width, width, target.values(), row * bytes, scale, "row " + row);
      }
      EncodedRows small = target(encoding, (int) encoding.rowBytes(width) * rows - 1, rows);
      assertThatThrownBy(() -> engine.normalizeEncoded(normalization, batch, small))
          .isInstanceOf(EmbedNormException.class)
          .hasMessageStartingWith("Cannot encode rows: the values buffer holds");
    }
  }

  /** A batch large enough to be split between four threads encodes every row as alone. */
  @ParameterizedTest
  @EnumSource(Encoding.class)
  void rowsSplitBetweenThreadsEncodeAsAlone(Encoding encoding) {
    try (CpuEngine engine = new CpuEngine(4)) {
      long seed = TestSeeds.seeds()[0];
      Random random = new Random(TestSeeds.mix(seed, 100 + encoding.ordinal()));
      int rows = 500;
      int[] offsets = new int[rows + 1];
      for (int row = 0; row < rows; row++) {
        int width = row == 250 ? 70_000 : random.nextInt(9) == 0 ? 0 : 1 + random.nextInt(2000);
        offsets[row + 1] = offsets[row] + width;
      }
      float[] input = new float[offsets[rows]];
      for (int i = 0; i < input.length; i++) {
        input[i] = (float) (random.nextGaussian() * Math.pow(10, random.nextInt(5) - 2));
      }
      assertThat(offsets[rows]).isGreaterThan(4 * (int) CpuEngine.ELEMENTS_PER_THREAD);
      for (Normalization normalization : NORMALIZATIONS) {
        check(
            engine, normalization, encoding, input, offsets, "seed " + seed + " " + normalization);
      }
    }
  }

  /**
   * A weight of another length than a row past the first block is refused before any row is written
   * (rows encoded block by block would have written the first blocks).
   */
  @ParameterizedTest
  @EnumSource(Encoding.class)
  void aWeightOfTheWrongLengthWritesNothing(Encoding encoding) {
    try (CpuEngine engine = new CpuEngine(2)) {
      int rows = 8001;
      int width = 13;
      int[] offsets = new int[rows + 1];
      for (int row = 0; row < rows; row++) {
        offsets[row + 1] = offsets[row] + (row == rows - 1 ? width - 1 : width);
      }
      float[] input = new float[offsets[rows]];
      java.util.Arrays.fill(input, 1.5f);
      ByteBuffer in = floats(input);
      RowBatch batch = RowBatch.ragged(ElementType.FLOAT32, IntBuffer.wrap(offsets), in, in);
      EncodedRows target = target(encoding, (int) encoding.rowBytes(width) * rows, rows);
      for (int i = 0; i < target.values().capacity(); i++) {
        target.values().put(i, (byte) 0x5a);
      }
      Normalization weighted = Normalization.of(Op.RMS_NORM).withWeight(new double[width]);
      assertThatThrownBy(() -> engine.normalizeEncoded(weighted, batch, target))
          .isInstanceOf(EmbedNormException.class)
          .hasMessageStartingWith("Cannot apply");
      for (int i = 0; i < target.values().capacity(); i++) {
        assertThat(target.values().get(i)).as("value byte " + i).isEqualTo((byte) 0x5a);
      }
    }
  }

  private static void check(
      CpuEngine engine,
      Normalization normalization,
      Encoding encoding,
      float[] input,
      int[] offsets,
      String context) {
    int rows = offsets.length - 1;
    ByteBuffer output = ByteBuffer.allocateDirect(4 * input.length).order(ByteOrder.LITTLE_ENDIAN);
    engine.normalize(
        normalization,
        RowBatch.ragged(ElementType.FLOAT32, IntBuffer.wrap(offsets), floats(input), output));
    float[] y = read(output, input.length);
    long bytes = 0;
    for (int row = 0; row < rows; row++) {
      bytes += encoding.rowBytes(offsets[row + 1] - offsets[row]);
    }
    EncodedRows target = target(encoding, (int) bytes, rows);
    ByteBuffer in = floats(input);
    engine.normalizeEncoded(
        normalization,
        RowBatch.ragged(ElementType.FLOAT32, IntBuffer.wrap(offsets), in, in),
        target);
    int valueOffset = 0;
    for (int row = 0; row < rows; row++) {
      int width = offsets[row + 1] - offsets[row];
      float scale = encoding.hasScales() ? target.scales().getFloat(4 * row) : 1f;
      EncodingReference.assertRow(
          encoding,
          y,
          offsets[row],
          width,
          target.values(),
          valueOffset,
          scale,
          context + " row " + row);
      valueOffset += (int) encoding.rowBytes(width);
    }
  }

  private static EncodedRows target(Encoding encoding, int bytes, int rows) {
    ByteBuffer values = ByteBuffer.allocateDirect(bytes);
    return encoding.hasScales()
        ? EncodedRows.withScales(encoding, values, ByteBuffer.allocateDirect(4 * rows))
        : EncodedRows.of(encoding, values);
  }

  private static void zero(float[] values, int[] offsets, int row) {
    for (int i = offsets[row]; i < offsets[row + 1]; i++) {
      values[i] = 0f;
    }
  }

  private static ByteBuffer floats(float[] values) {
    ByteBuffer buffer = ByteBuffer.allocateDirect(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
    buffer.asFloatBuffer().put(values);
    return buffer;
  }

  private static float[] read(ByteBuffer buffer, int count) {
    float[] values = new float[count];
    buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(0, values, 0, count);
    return values;
  }
}

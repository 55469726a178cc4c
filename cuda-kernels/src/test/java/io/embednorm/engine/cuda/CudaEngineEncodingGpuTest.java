package io.embednorm.engine.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.EncodingReference;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fused normalize-then-encode kernels ({@link CudaEngine#normalizeEncoded}) write, for every
 * op, encoding and row, the encoding of a float32 result within a few ulps of the one the unfused
 * GPU op gives that row (their sums run in another order), checked by the plain float64 reference
 * of the encodings ({@link EncodingReference#assertRowNear}): fixed-width batches of each width
 * (both warp kernels, the register kernel, the cached block kernel) and ragged batches with empty
 * (null) rows, each with a zero row, a row holding NaN, one holding an infinity and one so small
 * that its float32 statistics underflow (the float64 fallback). Outputs are poisoned first, so an
 * unwritten byte fails. Skipped where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class CudaEngineEncodingGpuTest {
  private static final int[] WIDTHS = {1, 31, 36, 128, 256, 512, 768, 1000, 4096, 4100, 32768};

  /**
   * How far the fused kernels' float32 results may lie from the unfused op's, relative to each
   * value: their sums run in another order (a few float32 ulps; docs/SEMANTICS.md, Encodings).
   */
  private static final double FUSED_RELATIVE = 0x1p-20;

  private static CudaEngine engine;

  static boolean gpuUsable() {
    return CudaEngine.unavailableReason() == null;
  }

  @BeforeAll
  static void requireGpu() {
    String why = CudaEngine.unavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
    System.setProperty(InternalSwitches.GPU_POISON_OUTPUTS.name(), "true");
    engine = new CudaEngine(0);
  }

  @AfterAll
  static void closeEngine() {
    if (engine != null) {
      engine.close();
    }
  }

  static Stream<Arguments> opsAndEncodings() {
    return Arrays.stream(Op.values())
        .flatMap(op -> Arrays.stream(Encoding.values()).map(e -> Arguments.of(op, e)));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("opsAndEncodings")
  void everyWidthEncodesTheGpuResult(Op op, Encoding encoding) {
    Normalization normalization = normalization(op);
    for (long seed : TestSeeds.seeds()) {
      Random random = new Random(TestSeeds.mix(seed, op.ordinal(), encoding.ordinal()));
      for (int width : WIDTHS) {
        int rows = Math.max(4, Math.min(300, 200_000 / width));
        int[] offsets = new int[rows + 1];
        for (int row = 0; row < rows; row++) {
          offsets[row + 1] = offsets[row] + width;
        }
        check(normalization, encoding, values(random, offsets), offsets, false, seed, width);
      }
      int rows = 80;
      int[] offsets = new int[rows + 1];
      for (int row = 0; row < rows; row++) {
        int width = random.nextInt(6) == 0 ? 0 : 1 + random.nextInt(5000);
        offsets[row + 1] = offsets[row] + width;
      }
      check(normalization, encoding, values(random, offsets), offsets, true, seed, -1);
      // Aligned ragged rows (widths multiples of 4) take the 16-byte warp kernel.
      for (int row = 0; row < rows; row++) {
        offsets[row + 1] = offsets[row] + 4 * random.nextInt(100);
      }
      check(normalization, encoding, values(random, offsets), offsets, true, seed, -2);
      // Aligned ragged rows up to 4096 wide take the register kernel, each row its own width.
      for (int row = 0; row < rows; row++) {
        offsets[row + 1] = offsets[row] + 4 * random.nextInt(1025);
      }
      check(normalization, encoding, values(random, offsets), offsets, true, seed, -3);
    }
  }

  private static Normalization normalization(Op op) {
    if (op == Op.LAYER_NORM) {
      return Normalization.of(op).withEpsilon(1e-5);
    }
    return Normalization.of(op);
  }

  /**
   * Gaussian rows at a row-dependent magnitude; the first non-empty rows zero, NaN, infinite and
   * tiny.
   */
  private static float[] values(Random random, int[] offsets) {
    float[] input = new float[offsets[offsets.length - 1]];
    for (int row = 0; row + 1 < offsets.length; row++) {
      double magnitude = Math.pow(10, random.nextInt(7) - 3);
      for (int i = offsets[row]; i < offsets[row + 1]; i++) {
        input[i] = (float) (random.nextGaussian() * magnitude);
      }
    }
    int special = 0;
    for (int row = 0; row + 1 < offsets.length && special < 4; row++) {
      int start = offsets[row];
      int width = offsets[row + 1] - start;
      if (width == 0) {
        continue;
      }
      switch (special++) {
        case 0 -> Arrays.fill(input, start, start + width, 0f);
        case 1 -> input[start + random.nextInt(width)] = Float.NaN;
        case 2 -> input[start + random.nextInt(width)] = Float.NEGATIVE_INFINITY;
        default -> {
          for (int i = start; i < start + width; i++) {
            input[i] *= 1e-30f;
          }
        }
      }
    }
    return input;
  }

  private static void check(
      Normalization normalization,
      Encoding encoding,
      float[] input,
      int[] offsets,
      boolean ragged,
      long seed,
      int width) {
    int rows = offsets.length - 1;
    String context =
        "seed " + seed + " " + normalization + " " + encoding + " width " + width + " row ";
    ByteBuffer unfused = ByteBuffer.allocateDirect(4 * input.length).order(ByteOrder.LITTLE_ENDIAN);
    engine.normalize(normalization, batch(input, offsets, ragged, unfused));
    float[] y = new float[input.length];
    unfused.asFloatBuffer().get(y);
    long bytes = 0;
    for (int row = 0; row < rows; row++) {
      bytes += encoding.rowBytes(offsets[row + 1] - offsets[row]);
    }
    ByteBuffer values = ByteBuffer.allocateDirect((int) Math.max(1, bytes));
    ByteBuffer scales = ByteBuffer.allocate(4 * rows).order(ByteOrder.LITTLE_ENDIAN);
    EncodedRows target =
        encoding.hasScales()
            ? EncodedRows.withScales(encoding, values, scales)
            : EncodedRows.of(encoding, values);
    ByteBuffer in = floats(input);
    engine.normalizeEncoded(normalization, batch(input, offsets, ragged, in), target);
    int valueOffset = 0;
    for (int row = 0; row < rows; row++) {
      int rowWidth = offsets[row + 1] - offsets[row];
      float scale = encoding.hasScales() ? scales.getFloat(4 * row) : 1f;
      if (encoding.hasScales() && rowWidth == 0) {
        assertThat(scale).as(context + row + " (empty)").isZero();
      }
      EncodingReference.assertRowNear(
          encoding,
          y,
          offsets[row],
          rowWidth,
          values,
          valueOffset,
          scale,
          FUSED_RELATIVE,
          context + row);
      valueOffset += (int) encoding.rowBytes(rowWidth);
    }
  }

  private static RowBatch batch(float[] input, int[] offsets, boolean ragged, ByteBuffer output) {
    ByteBuffer in = floats(input);
    int rows = offsets.length - 1;
    return ragged
        ? RowBatch.ragged(ElementType.FLOAT32, IntBuffer.wrap(offsets), in, output)
        : RowBatch.fixedWidth(ElementType.FLOAT32, rows, rows == 0 ? 0 : offsets[1], in, output);
  }

  private static ByteBuffer floats(float[] values) {
    ByteBuffer buffer = ByteBuffer.allocateDirect(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
    buffer.asFloatBuffer().put(values);
    return buffer;
  }
}

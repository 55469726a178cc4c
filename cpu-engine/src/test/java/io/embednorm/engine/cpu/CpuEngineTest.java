package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.Device;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The engine moves rows between buffers and kernels: every result must equal, bit for bit, what
 * {@link CpuKernels} gives for that row alone, whatever the layout, buffer kind or batch around it.
 */
class CpuEngineTest {
  private static final int POISON = 0x7fc0dead;
  private static final Normalization[] NORMALIZATIONS = {
    Normalization.of(Op.RMS_NORM),
    Normalization.of(Op.LAYER_NORM).withEpsilon(1e-3),
    Normalization.of(Op.SOFTMAX),
    Normalization.of(Op.LOG_SOFTMAX),
    Normalization.of(Op.L2_NORMALIZE).withEpsilon(0),
  };

  private final CpuEngine engine = new CpuEngine();

  @Test
  void describesItself() {
    assertThat(engine.device()).isEqualTo(Device.CPU);
    assertThat(engine.description()).startsWith("cpu (" + CpuKernels.implementation());
    assertThat(engine.threads()).isEqualTo(Runtime.getRuntime().availableProcessors());
    assertThatThrownBy(() -> new CpuEngine(0)).isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest
  @EnumSource(ElementType.class)
  void rowBitsDoNotDependOnTheThreadCountOrTheLoops(ElementType type) {
    // 3 × 64 Ki elements and more: big enough for up to 3 and 5 blocks.
    Random random = new Random(19);
    int rows = 400;
    int width = 777;
    float[] values = randomValues(random, rows * width);
    int[] offsets = new int[rows + 1];
    for (int row = 1; row <= rows; row++) {
      // Ragged rows of 0 to 2000 elements, most of them in a few wide rows at the end.
      offsets[row] =
          offsets[row - 1] + (row > rows - 40 ? random.nextInt(7000) : random.nextInt(30));
    }
    float[] raggedValues = randomValues(random, offsets[rows]);
    Normalization normalization =
        Normalization.of(Op.LAYER_NORM)
            .withWeight(randomWeight(width))
            .withBias(randomWeight(width));
    for (Normalization each : new Normalization[] {normalization, NORMALIZATIONS[2]}) {
      long[] fixedExpected = null;
      long[] raggedExpected = null;
      for (CpuEngine threaded :
          new CpuEngine[] {
            new CpuEngine(1, ScalarRowPasses.INSTANCE),
            new CpuEngine(1),
            new CpuEngine(2),
            new CpuEngine(3),
            new CpuEngine(5, ScalarRowPasses.INSTANCE)
          }) {
        try (threaded) {
          ByteBuffer fixedOutput = poisoned(type, values.length, true);
          threaded.normalize(
              each,
              RowBatch.fixedWidth(type, rows, width, encode(type, values, true), fixedOutput));
          long[] fixedBits = decodeBits(type, fixedOutput, 0, values.length);
          if (fixedExpected == null) {
            fixedExpected = fixedBits;
          }
          assertThat(fixedBits).as("%s, %s", threaded, each).isEqualTo(fixedExpected);
          if (each.hasWeight()) {
            continue;
          }
          ByteBuffer raggedOutput = poisoned(type, raggedValues.length, false);
          threaded.normalize(
              each,
              RowBatch.ragged(
                  type, IntBuffer.wrap(offsets), encode(type, raggedValues, false), raggedOutput));
          long[] raggedBits = decodeBits(type, raggedOutput, 0, raggedValues.length);
          if (raggedExpected == null) {
            raggedExpected = raggedBits;
          }
          assertThat(raggedBits).as("ragged, %s, %s", threaded, each).isEqualTo(raggedExpected);
        }
      }
      for (int row = 0; row < rows; row += 37) {
        assertThat(Arrays.copyOfRange(fixedExpected, row * width, (row + 1) * width))
            .isEqualTo(expectedBits(type, each, values, row * width, width));
      }
    }
  }

  @Test
  void blocksSplitTheElementsEvenlyAndAreNeverEmpty() {
    int[] offsets = {0, 0, 10, 10, 1000, 1010, 1020, 1030, 4000, 4000};
    RowBatch batch =
        RowBatch.ragged(
            ElementType.FLOAT32,
            IntBuffer.wrap(offsets),
            ByteBuffer.allocate(16000),
            ByteBuffer.allocate(16000));
    assertThat(CpuEngine.blockBoundaries(batch, 2)).containsExactly(0, 7, 9);
    assertThat(CpuEngine.blockBoundaries(batch, 4)).containsExactly(0, 4, 7, 8, 9);
    assertThat(CpuEngine.blockBoundaries(batch, 9)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    RowBatch fixed =
        RowBatch.fixedWidth(
            ElementType.FLOAT32, 10, 3, ByteBuffer.allocate(120), ByteBuffer.allocate(120));
    assertThat(CpuEngine.blockBoundaries(fixed, 3)).containsExactly(0, 3, 7, 10);
  }

  @Test
  void aClosedEngineStillNormalizesOnTheCallingThread() {
    CpuEngine threaded = new CpuEngine(2);
    threaded.close();
    float[] values = randomValues(new Random(20), 4 * (1 << 16));
    ByteBuffer output = poisoned(ElementType.FLOAT32, values.length, false);
    threaded.normalize(
        NORMALIZATIONS[0],
        RowBatch.fixedWidth(
            ElementType.FLOAT32, 4, 1 << 16, encode(ElementType.FLOAT32, values, false), output));
    assertThat(decodeBits(ElementType.FLOAT32, output, 0, 1 << 16))
        .isEqualTo(expectedBits(ElementType.FLOAT32, NORMALIZATIONS[0], values, 0, 1 << 16));
  }

  @ParameterizedTest
  @EnumSource(ElementType.class)
  void fixedWidthBatchesMatchTheRowKernels(ElementType type) {
    for (boolean direct : new boolean[] {false, true}) {
      for (Normalization normalization : NORMALIZATIONS) {
        int rows = 5;
        int width = 33;
        float[] values = randomValues(new Random(11), rows * width);
        values[width + 3] = Float.NaN;
        ByteBuffer input = encode(type, values, direct);
        ByteBuffer output = poisoned(type, values.length, direct);
        engine.normalize(normalization, RowBatch.fixedWidth(type, rows, width, input, output));
        for (int row = 0; row < rows; row++) {
          assertThat(decodeBits(type, output, row * width, width))
              .as("%s %s direct=%s row %d", type, normalization, direct, row)
              .isEqualTo(expectedBits(type, normalization, values, row * width, width));
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(ElementType.class)
  void raggedBatchesWithEmptyRowsLeaveEverythingOutsideTheRowsAlone(ElementType type) {
    // Rows of 3, 0, 32, 0, 1 and 768 elements from element 2; elements 0, 1 and the last three are
    // no row's.
    int[] offsets = {2, 5, 5, 37, 37, 38, 806};
    int elements = 809;
    float[] values = randomValues(new Random(12), elements);
    for (boolean direct : new boolean[] {false, true}) {
      for (Normalization normalization : NORMALIZATIONS) {
        ByteBuffer input = encode(type, values, direct);
        ByteBuffer output = poisoned(type, elements, direct);
        engine.normalize(
            normalization, RowBatch.ragged(type, IntBuffer.wrap(offsets), input, output));
        String what = type + " " + normalization + " direct=" + direct;
        for (int row = 0; row + 1 < offsets.length; row++) {
          int width = offsets[row + 1] - offsets[row];
          assertThat(decodeBits(type, output, offsets[row], width))
              .as("%s row %d", what, row)
              .isEqualTo(expectedBits(type, normalization, values, offsets[row], width));
        }
        long[] poison = poisonBits(type);
        assertThat(decodeBits(type, output, 0, 2)).as(what).containsOnly(poison);
        assertThat(decodeBits(type, output, 806, 3)).as(what).containsOnly(poison);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(ElementType.class)
  void normalizesInPlace(ElementType type) {
    float[] values = randomValues(new Random(13), 4 * 40);
    for (Normalization normalization : NORMALIZATIONS) {
      ByteBuffer separateOutput = poisoned(type, values.length, false);
      engine.normalize(
          normalization,
          RowBatch.fixedWidth(type, 4, 40, encode(type, values, false), separateOutput));
      ByteBuffer both = encode(type, values, true);
      engine.normalize(normalization, RowBatch.fixedWidth(type, 4, 40, both, both));
      assertThat(decodeBits(type, both, 0, values.length))
          .as("%s %s", type, normalization)
          .isEqualTo(decodeBits(type, separateOutput, 0, values.length));
    }
  }

  @Test
  void ignoresBufferPositionsAndByteOrders() {
    ElementType type = ElementType.FLOAT32;
    float[] values = randomValues(new Random(14), 3 * 16);
    Normalization normalization = NORMALIZATIONS[0];
    ByteBuffer expected = poisoned(type, values.length, false);
    engine.normalize(
        normalization, RowBatch.fixedWidth(type, 3, 16, encode(type, values, false), expected));

    ByteBuffer input = encode(type, values, false).order(ByteOrder.BIG_ENDIAN);
    input.position(12);
    ByteBuffer output = poisoned(type, values.length, true).order(ByteOrder.BIG_ENDIAN);
    output.position(8).limit(20);
    engine.normalize(normalization, RowBatch.fixedWidth(type, 3, 16, input, output));
    assertThat(decodeBits(type, output, 0, values.length))
        .isEqualTo(decodeBits(type, expected, 0, values.length));
    assertThat(output.position()).isEqualTo(8);
    assertThat(input.position()).isEqualTo(12);
  }

  @Test
  void readsReadOnlyInput() {
    ElementType type = ElementType.FLOAT64;
    float[] values = randomValues(new Random(15), 2 * 8);
    ByteBuffer expected = poisoned(type, values.length, false);
    engine.normalize(
        NORMALIZATIONS[1], RowBatch.fixedWidth(type, 2, 8, encode(type, values, false), expected));
    ByteBuffer output = poisoned(type, values.length, false);
    engine.normalize(
        NORMALIZATIONS[1],
        RowBatch.fixedWidth(type, 2, 8, encode(type, values, true).asReadOnlyBuffer(), output));
    assertThat(decodeBits(type, output, 0, values.length))
        .isEqualTo(decodeBits(type, expected, 0, values.length));
  }

  @Test
  void aRowGivesTheSameBitsInEveryBatch() {
    ElementType type = ElementType.FLOAT32;
    Random random = new Random(16);
    float[] row = randomValues(random, 777);
    for (Normalization normalization : NORMALIZATIONS) {
      ByteBuffer alone = poisoned(type, row.length, false);
      engine.normalize(
          normalization, RowBatch.fixedWidth(type, 1, row.length, encode(type, row, false), alone));
      long[] expected = decodeBits(type, alone, 0, row.length);

      // The same row third in a ragged batch among rows of other widths.
      float[] others = randomValues(random, 100 + 5000 + row.length + 31);
      System.arraycopy(row, 0, others, 5100, row.length);
      int[] offsets = {0, 100, 5100, 5100 + row.length, others.length};
      ByteBuffer output = poisoned(type, others.length, true);
      engine.normalize(
          normalization,
          RowBatch.ragged(type, IntBuffer.wrap(offsets), encode(type, others, true), output));
      assertThat(decodeBits(type, output, 5100, row.length))
          .as("%s", normalization)
          .isEqualTo(expected);
    }
  }

  @Test
  void aWidthMismatchNamesTheRowFromTheFirstRowIndexAndWritesNothing() {
    ElementType type = ElementType.FLOAT32;
    int[] offsets = {0, 4, 8, 12, 17, 21};
    float[] values = randomValues(new Random(17), 21);
    ByteBuffer output = poisoned(type, values.length, false);
    RowBatch batch =
        RowBatch.ragged(type, IntBuffer.wrap(offsets), encode(type, values, false), output)
            .withFirstRowIndex(1000);
    Normalization rms = Normalization.of(Op.RMS_NORM).withWeight(new double[] {1, 2, 3, 4});
    assertThatThrownBy(() -> engine.normalize(rms, batch))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot apply rms_norm to row 1003: weight has 4 elements but the row has 5");
    assertThat(decodeBits(type, output, 0, values.length)).containsOnly(poisonBits(type));

    Normalization layer =
        Normalization.of(Op.LAYER_NORM)
            .withWeight(new double[] {1, 1, 1, 1})
            .withBias(new double[] {0, 0, 0});
    assertThatThrownBy(() -> engine.normalize(layer, batch))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot apply layer_norm to row 1000: bias has 3 elements but the row has 4");
  }

  @Test
  void emptyBatchesAndEmptyRowsNeedNoWeightOfTheirWidth() {
    ElementType type = ElementType.FLOAT16;
    Normalization rms = Normalization.of(Op.RMS_NORM).withWeight(new double[] {1, 2});
    ByteBuffer output = poisoned(type, 2, false);
    engine.normalize(rms, RowBatch.fixedWidth(type, 0, 2, ByteBuffer.allocate(0), output));
    engine.normalize(rms, RowBatch.fixedWidth(type, 3, 0, ByteBuffer.allocate(0), output));
    assertThat(decodeBits(type, output, 0, 2)).containsOnly(poisonBits(type));
  }

  @Test
  void isSafeToShareBetweenThreads() throws Exception {
    ElementType type = ElementType.BFLOAT16;
    float[] values = randomValues(new Random(18), 64 * 300);
    Normalization normalization =
        Normalization.of(Op.LAYER_NORM).withWeight(randomWeight(300)).withBias(randomWeight(300));
    ByteBuffer expected = poisoned(type, values.length, false);
    engine.normalize(
        normalization, RowBatch.fixedWidth(type, 64, 300, encode(type, values, false), expected));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<ByteBuffer>> results = new ArrayList<>();
      for (int task = 0; task < 8; task++) {
        results.add(
            pool.submit(
                () -> {
                  ByteBuffer output = poisoned(type, values.length, true);
                  engine.normalize(
                      normalization,
                      RowBatch.fixedWidth(type, 64, 300, encode(type, values, true), output));
                  return output;
                }));
      }
      for (Future<ByteBuffer> result : results) {
        assertThat(decodeBits(type, result.get(), 0, values.length))
            .isEqualTo(decodeBits(type, expected, 0, values.length));
      }
    } finally {
      pool.shutdown();
    }
  }

  /** What the row kernels give for one row: float32 (or float64) compute, narrow once. */
  private static long[] expectedBits(
      ElementType type, Normalization normalization, float[] values, int start, int width) {
    long[] bits = new long[width];
    if (type == ElementType.FLOAT64) {
      double[] row = new double[width];
      for (int i = 0; i < width; i++) {
        row[i] = values[start + i];
      }
      CpuKernels.normalizeRow(normalization, row, 0, row, 0, width);
      for (int i = 0; i < width; i++) {
        bits[i] = Double.doubleToRawLongBits(row[i]);
      }
      return bits;
    }
    float[] row = new float[width];
    for (int i = 0; i < width; i++) {
      row[i] = ElementCodec.widen(type, ElementCodec.narrow(type, values[start + i]));
    }
    CpuKernels.normalizeRow(normalization, row, 0, row, 0, width);
    for (int i = 0; i < width; i++) {
      bits[i] = ElementCodec.narrow(type, row[i]);
    }
    return bits;
  }

  private static ByteBuffer encode(ElementType type, float[] values, boolean direct) {
    ByteBuffer buffer = allocate(type, values.length, direct);
    for (int i = 0; i < values.length; i++) {
      ElementCodec.put(type, buffer, i, ElementCodec.narrow(type, values[i]));
    }
    return buffer;
  }

  private static ByteBuffer poisoned(ElementType type, int elements, boolean direct) {
    ByteBuffer buffer = allocate(type, elements, direct);
    for (int i = 0; i < elements; i++) {
      ElementCodec.put(type, buffer, i, poisonBits(type)[0]);
    }
    return buffer;
  }

  private static long[] poisonBits(ElementType type) {
    return new long[] {
      switch (type) {
        case FLOAT64 -> 0x7ff8_0000_dead_beefL;
        case FLOAT32 -> POISON;
        default -> 0x7e5a;
      }
    };
  }

  private static ByteBuffer allocate(ElementType type, int elements, boolean direct) {
    int bytes = elements * type.byteWidth();
    ByteBuffer buffer = direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes);
    return buffer.order(ByteOrder.LITTLE_ENDIAN);
  }

  private static long[] decodeBits(ElementType type, ByteBuffer buffer, int start, int count) {
    long[] bits = new long[count];
    for (int i = 0; i < count; i++) {
      bits[i] = ElementCodec.get(type, buffer, start + i);
    }
    return bits;
  }

  private static float[] randomValues(Random random, int count) {
    float[] values = new float[count];
    for (int i = 0; i < count; i++) {
      values[i] = (float) (random.nextGaussian() * 3 + 1);
    }
    return values;
  }

  private static double[] randomWeight(int width) {
    double[] weight = new double[width];
    Arrays.setAll(weight, i -> 0.5 + (i % 7) * 0.25);
    return weight;
  }
}

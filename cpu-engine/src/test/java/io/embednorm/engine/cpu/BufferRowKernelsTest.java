package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The SIMD passes' rows straight between buffers ({@link RowPasses#normalizeBetweenBuffers}, which
 * the engine takes for rows wider than its chunk) against the scalar kernels on arrays: the same
 * bits for every row they take, nothing written for a row they leave to the arrays, and every
 * ordinary row of RMSNorm, L2 normalization and LayerNorm taken (the softmaxes and the float64
 * fallback's rows are left).
 */
class BufferRowKernelsTest {
  /**
   * Wider than the engine's chunk (768): equal blocks (1024, 4096, 32768), blocks of other lengths
   * (769, 1000), tails off a register (1031, 4099, 8191).
   */
  private static final int[] WIDTHS = {769, 1000, 1024, 1031, 2048, 4096, 4099, 8191, 32768};

  private static final float[] SPECIAL = {
    0f,
    -0f,
    Float.MIN_VALUE,
    1e-30f,
    1e30f,
    -3e38f,
    Float.NEGATIVE_INFINITY,
    Float.POSITIVE_INFINITY,
    Float.NaN
  };

  /** Ops with a path between buffers. */
  private static final EnumSet<Op> TAKEN = EnumSet.of(Op.RMS_NORM, Op.L2_NORMALIZE, Op.LAYER_NORM);

  /** The fill of every output byte a row does not own: it must survive. */
  private static final float UNTOUCHED = -1234.5f;

  @ParameterizedTest
  @EnumSource(Op.class)
  void givesTheScalarKernelsBitsOrWritesNothing(Op op) {
    assumeByteBufferVectors();
    for (RowPasses vector : RowPassesImplementations.vectorVariants()) {
      for (long seed : TestSeeds.seeds()) {
        for (int width : WIDTHS) {
          Random random = new Random(TestSeeds.mix(seed, op.ordinal(), width));
          for (Normalization normalization : NormalizationVariants.of(op, width, random)) {
            for (RowDistribution distribution : RowDistribution.values()) {
              for (boolean special : new boolean[] {false, true}) {
                float[] row = distribution.floats(random, width);
                if (special) {
                  row[random.nextInt(width)] = SPECIAL[random.nextInt(SPECIAL.length)];
                }
                String what =
                    String.format(
                        "seed %d, %s, %s, %s, width %d%s",
                        seed,
                        vector.description(),
                        normalization,
                        distribution,
                        width,
                        special ? ", a special value" : "");
                boolean ordinary =
                    !special
                        && distribution != RowDistribution.HUGE
                        && distribution != RowDistribution.TINY;
                check(
                    vector,
                    normalization,
                    row,
                    random.nextInt(13),
                    ordinary && TAKEN.contains(op),
                    what);
              }
            }
          }
        }
      }
    }
  }

  @Test
  void ordinaryRowsOfTheThreeOpsTakeThePathAndTheScalarPassesHaveNone() {
    assumeByteBufferVectors();
    int width = 4099;
    float[] row = RowDistribution.NORMAL.floats(new Random(5), width);
    for (Op op : Op.values()) {
      Normalization normalization = Normalization.of(op);
      ByteBuffer input = buffer(row, 3, width + 6);
      ByteBuffer output = filled(width + 6);
      assertThat(
              ScalarRowPasses.INSTANCE.normalizeBetweenBuffers(
                  normalization, input, output, 3, width))
          .as(op + " on the scalar passes")
          .isFalse();
      for (RowPasses vector : RowPassesImplementations.vectorVariants()) {
        assertThat(vector.normalizeBetweenBuffers(normalization, input, output, 3, width))
            .as(op + " on " + vector.description())
            .isEqualTo(TAKEN.contains(op));
      }
    }
  }

  @Test
  void theTestJvmGoesBetweenBuffers() {
    assumeTrue(RowPassSelection.VECTOR != null, "this JVM has no Vector API");
    assumeTrue(Runtime.version().feature() < 19, "byte-buffer vectors exist up to JDK 18");
    assertThat(rowsBetweenBuffers())
        .as("-XX:PerMethodTrapLimit=1000 in embednorm.jvm.options, as in conf/jvm.options")
        .isTrue();
  }

  /**
   * Through the engine (no warm-up): ragged batches mixing narrow and wide rows, fixed-width wide
   * rows with weights, in direct and heap buffers and in place, give the scalar engine's bits, and
   * the wide rows of RMSNorm, L2 normalization and LayerNorm do go between the buffers.
   */
  @ParameterizedTest
  @EnumSource(Op.class)
  void theEngineTakesThePathAndKeepsTheScalarEnginesBits(Op op) {
    assumeByteBufferVectors();
    AtomicInteger taken = new AtomicInteger();
    RowPasses counting = counting(taken);
    int[] widths = {300, 1000, 5, 0, 769, 800, 2000, 3, 1031, 4099, 7};
    int wideRows = 6;
    int[] offsets = new int[widths.length + 1];
    for (int row = 0; row < widths.length; row++) {
      offsets[row + 1] = offsets[row] + widths[row];
    }
    for (long seed : TestSeeds.seeds()) {
      Random random = new Random(TestSeeds.mix(seed, op.ordinal(), 77));
      float[] ragged = RowDistribution.NORMAL.floats(random, offsets[widths.length]);
      float[] fixed = RowDistribution.NORMAL.floats(random, 3 * 1031);
      for (boolean direct : new boolean[] {true, false}) {
        String what =
            String.format("seed %d, %s, %s buffers", seed, op, direct ? "direct" : "heap");
        taken.set(0);
        Normalization plain = Normalization.of(op);
        assertThat(normalizeRagged(counting, plain, ragged, offsets, direct))
            .as(what + ", ragged")
            .isEqualTo(normalizeRagged(ScalarRowPasses.INSTANCE, plain, ragged, offsets, direct));
        assertThat(taken.get())
            .as(what + ", wide rows taken")
            .isEqualTo(TAKEN.contains(op) ? wideRows : 0);
        for (Normalization normalization : NormalizationVariants.of(op, 1031, random)) {
          for (boolean inPlace : new boolean[] {false, true}) {
            taken.set(0);
            assertThat(normalizeFixed(counting, normalization, fixed, 1031, direct, inPlace))
                .as("%s, %s, fixed width 1031%s", what, normalization, inPlace ? ", in place" : "")
                .isEqualTo(
                    normalizeFixed(
                        ScalarRowPasses.INSTANCE, normalization, fixed, 1031, direct, inPlace));
            assertThat(taken.get()).as(what + ", rows taken").isEqualTo(TAKEN.contains(op) ? 3 : 0);
          }
        }
      }
    }
  }

  @Test
  void rowsForTheFloat64FallbackAreLeftToTheArrays() {
    assumeByteBufferVectors();
    int width = 4096;
    float[] huge = RowDistribution.HUGE.floats(new Random(7), width);
    for (Op op : TAKEN) {
      Normalization normalization = Normalization.of(op);
      ByteBuffer input = buffer(huge, 0, width);
      ByteBuffer output = filled(width);
      RowPasses vector = RowPassesImplementations.vectorVariants().get(0);
      assertThat(vector.normalizeBetweenBuffers(normalization, input, output, 0, width))
          .as(op.toString())
          .isFalse();
      assertThat(floats(output, 0, width)).isEqualTo(untouched(width));
    }
  }

  /**
   * The row at element {@code start} of a buffer with other values around it, normalized into a
   * separate buffer and in place: the scalar kernels' bits where the passes take it, and every
   * other byte untouched; all bytes untouched where they do not.
   */
  private static void check(
      RowPasses vector,
      Normalization normalization,
      float[] row,
      int start,
      boolean mustTake,
      String what) {
    int width = row.length;
    int elements = start + width + 5;
    float[] expected = new float[width];
    CpuKernels.normalizeRow(ScalarRowPasses.INSTANCE, normalization, row, 0, expected, 0, width);

    ByteBuffer input = buffer(row, start, elements);
    ByteBuffer output = filled(elements);
    boolean taken = vector.normalizeBetweenBuffers(normalization, input, output, start, width);
    assertThat(floats(input, start, width)).as(what + ": input").isEqualTo(row);
    if (!taken) {
      assertThat(mustTake).as(what + ": an ordinary row left to the arrays").isFalse();
      assertThat(floats(output, 0, elements)).as(what + ": written").isEqualTo(untouched(elements));
      return;
    }
    assertThat(floats(output, start, width)).as(what).isEqualTo(expected);
    assertThat(floats(output, 0, start)).as(what + ": before").isEqualTo(untouched(start));
    assertThat(floats(output, start + width, 5)).as(what + ": after").isEqualTo(untouched(5));

    ByteBuffer inPlace = buffer(row, start, elements);
    assertThat(vector.normalizeBetweenBuffers(normalization, inPlace, inPlace, start, width))
        .as(what + ": in place")
        .isTrue();
    assertThat(floats(inPlace, start, width)).as(what + ": in place").isEqualTo(expected);
  }

  /**
   * Skips where the SIMD passes have no path between buffers: no Vector API, one without
   * byte-buffer loads and stores (JDK 19 on), or a trap limit under {@link
   * VectorRowPasses#LEAST_TRAP_LIMIT}.
   */
  private static void assumeByteBufferVectors() {
    assumeTrue(RowPassSelection.VECTOR != null, "this JVM has no Vector API");
    assumeTrue(
        rowsBetweenBuffers(),
        "no rows between buffers in this JVM (JDK 19 on, or a trap limit under 1000)");
  }

  private static boolean rowsBetweenBuffers() {
    try {
      Method gate = RowPassSelection.VECTOR.getClass().getDeclaredMethod("rowsBetweenBuffers");
      gate.setAccessible(true);
      return (Boolean) gate.invoke(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Cannot ask VectorRowPasses.rowsBetweenBuffers()", e);
    }
  }

  /** The SIMD passes, counting the rows they take between buffers. */
  private static RowPasses counting(AtomicInteger taken) {
    RowPasses vector = RowPassSelection.VECTOR;
    return (RowPasses)
        Proxy.newProxyInstance(
            RowPasses.class.getClassLoader(),
            new Class<?>[] {RowPasses.class},
            (proxy, method, arguments) -> {
              Object result;
              try {
                result = method.invoke(vector, arguments);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (method.getName().equals("normalizeBetweenBuffers") && (Boolean) result) {
                taken.incrementAndGet();
              }
              return result;
            });
  }

  private static float[] normalizeRagged(
      RowPasses passes,
      Normalization normalization,
      float[] values,
      int[] offsets,
      boolean direct) {
    ByteBuffer input = buffer(values, direct);
    ByteBuffer output = buffer(new float[values.length], direct);
    try (CpuEngine engine = new CpuEngine(1, passes)) {
      engine.normalize(
          normalization,
          RowBatch.ragged(ElementType.FLOAT32, IntBuffer.wrap(offsets.clone()), input, output));
    }
    return floats(output, 0, values.length);
  }

  private static float[] normalizeFixed(
      RowPasses passes,
      Normalization normalization,
      float[] values,
      int width,
      boolean direct,
      boolean inPlace) {
    ByteBuffer input = buffer(values, direct);
    ByteBuffer output = inPlace ? input : buffer(new float[values.length], direct);
    try (CpuEngine engine = new CpuEngine(1, passes)) {
      engine.normalize(
          normalization,
          RowBatch.fixedWidth(ElementType.FLOAT32, values.length / width, width, input, output));
    }
    return floats(output, 0, values.length);
  }

  /** The values in a little-endian buffer, direct or on the heap. */
  private static ByteBuffer buffer(float[] values, boolean direct) {
    int bytes = values.length * Float.BYTES;
    ByteBuffer buffer = direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes);
    buffer.order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < values.length; i++) {
      buffer.putFloat(i * Float.BYTES, values[i]);
    }
    return buffer;
  }

  /** A little-endian direct buffer of {@code elements} floats, the row at {@code start}. */
  private static ByteBuffer buffer(float[] row, int start, int elements) {
    ByteBuffer buffer = filled(elements);
    for (int i = 0; i < row.length; i++) {
      buffer.putFloat((start + i) * Float.BYTES, row[i]);
    }
    return buffer;
  }

  private static ByteBuffer filled(int elements) {
    ByteBuffer buffer =
        ByteBuffer.allocateDirect(elements * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < elements; i++) {
      buffer.putFloat(i * Float.BYTES, UNTOUCHED);
    }
    return buffer;
  }

  private static float[] untouched(int count) {
    float[] values = new float[count];
    Arrays.fill(values, UNTOUCHED);
    return values;
  }

  private static float[] floats(ByteBuffer buffer, int start, int count) {
    float[] values = new float[count];
    for (int i = 0; i < count; i++) {
      values[i] = buffer.getFloat((start + i) * Float.BYTES);
    }
    return values;
  }
}

package io.embednorm.arrow;

import static io.embednorm.arrow.TestColumns.Layout.FIXED_SIZE_LIST;
import static io.embednorm.arrow.TestColumns.Layout.LIST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Results of the CPU engine through the bridge against the float64 reference (docs/SEMANTICS.md,
 * Accuracy).
 */
class ArrowNormalizerAccuracyTest {
  private static final int[] WIDTHS = {1, 2, 3, 31, 32, 33, 767, 768, 4096, 32769};
  private static final List<ElementType> TYPES =
      List.of(ElementType.FLOAT32, ElementType.FLOAT64, ElementType.FLOAT16);
  private static final double INF = Double.POSITIVE_INFINITY;

  private BufferAllocator allocator;
  private ArrowNormalizer normalizer;

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
    normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
  }

  @AfterEach
  void close() {
    normalizer.close();
    allocator.close(); // throws on a leak, failing the test
  }

  static Stream<Arguments> everyOpTypeLayoutAndWidth() {
    List<Arguments> cases = new ArrayList<>();
    for (Layout layout : Layout.values()) {
      for (ElementType type : TYPES) {
        for (int width : WIDTHS) {
          for (Op op : Op.values()) {
            cases.add(Arguments.of(layout, type, width, op));
          }
        }
      }
    }
    return cases.stream();
  }

  static Stream<Arguments> layoutsAndTypes() {
    return Arrays.stream(Layout.values())
        .flatMap(layout -> TYPES.stream().map(type -> Arguments.of(layout, type)));
  }

  /** List rows are width wide, except every third row, which has a random width up to width. */
  @ParameterizedTest(name = "{0} of {1}, width {2}, {3}")
  @MethodSource("everyOpTypeLayoutAndWidth")
  void matchesTheReference(Layout layout, ElementType type, int width, Op op) {
    long seed = ("" + layout + type + width + op).hashCode();
    Random random = new Random(seed);
    int rows = Math.max(2, Math.min(16, 24_000 / width));
    Double[][] input =
        TestColumns.gaussianRows(
            random,
            type,
            rows,
            row -> layout == LIST && row % 3 == 2 ? random.nextInt(width + 1) : width);
    check(layout, type, Normalization.of(op), input, "seed " + seed);
  }

  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void weightAndBias(Layout layout, ElementType type) {
    for (int width : new int[] {33, 768}) {
      long seed = ("weights" + layout + type + width).hashCode();
      Random random = new Random(seed);
      double[] weight = floats(random, width, 0.5, 1.5);
      double[] bias = floats(random, width, -1, 1);
      Double[][] input = TestColumns.gaussianRows(random, type, 5, row -> width);
      String context = "seed " + seed;
      check(layout, type, Normalization.of(Op.RMS_NORM).withWeight(weight), input, context);
      check(layout, type, Normalization.of(Op.LAYER_NORM).withWeight(weight), input, context);
      check(
          layout,
          type,
          Normalization.of(Op.LAYER_NORM).withWeight(weight).withBias(bias).withEpsilon(1e-3),
          input,
          context);
      check(layout, type, Normalization.of(Op.L2_NORMALIZE).withEpsilon(0.5), input, context);
    }
  }

  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void edgeCasesOfDesign(Layout layout, ElementType type) {
    Double[][] input = {
      {1.0, Double.NaN, 2.0, 3.0},
      {-INF, -INF, -INF, -INF},
      {1.0, INF, 2.0, 3.0},
      {1.0, -INF, 2.0, 3.0},
      {0.0, 0.0, 0.0, 0.0},
      {5.0, 5.0, 5.0, 5.0}
    };
    for (Op op : Op.values()) {
      check(layout, type, Normalization.of(op), input, "edge cases");
    }
    try (FieldVector vector = TestColumns.build(allocator, "embedding", layout, type, input);
        FieldVector softmax = normalizer.normalize(vector, Normalization.of(Op.SOFTMAX));
        FieldVector logSoftmax = normalizer.normalize(vector, Normalization.of(Op.LOG_SOFTMAX))) {
      Double[][] soft = TestColumns.read(softmax);
      Double[][] log = TestColumns.read(logSoftmax);
      assertThat(soft[0]).as("NaN anywhere").allMatch(value -> value.isNaN());
      assertThat(soft[1]).as("all -inf").allMatch(value -> value.isNaN());
      assertThat(soft[2]).as("+inf").allMatch(value -> value.isNaN());
      assertThat(soft[3][1]).as("isolated -inf").isEqualTo(0.0);
      assertThat(log[3][1]).as("isolated -inf").isEqualTo(-INF);
      assertThat(log[1]).as("all -inf").allMatch(value -> value.isNaN());
    }
  }

  @Test
  void layerNormOfRowsWithLargeMeanAndSmallSpread() {
    long seed = 31;
    Random random = new Random(seed);
    Double[][] input = new Double[4][768];
    for (Double[] row : input) {
      for (int i = 0; i < row.length; i++) {
        row[i] = (double) (float) (1e6 + 0.5 * random.nextGaussian());
      }
    }
    for (Layout layout : Layout.values()) {
      check(layout, ElementType.FLOAT32, Normalization.of(Op.LAYER_NORM), input, "seed " + seed);
    }
  }

  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void nullRowsNullElementsAndEmptyRows(Layout layout, ElementType type) {
    long seed = ("nulls" + layout + type).hashCode();
    Random random = new Random(seed);
    Double[][] input =
        TestColumns.gaussianRows(
            random, type, 12, row -> layout == LIST ? 5 + random.nextInt(35) : 40);
    input[1] = null;
    input[4][3] = null;
    input[7] = null;
    input[10][input[10].length - 1] = null;
    if (layout == LIST) {
      input[5] = new Double[0];
      input[6] = new Double[0];
    }
    for (Op op : Op.values()) {
      check(layout, type, Normalization.of(op), input, "seed " + seed);
    }
  }

  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void chunkingDoesNotChangeAnyBit(Layout layout, ElementType type) {
    long seed = ("chunks" + layout + type).hashCode();
    Random random = new Random(seed);
    Double[][] input =
        TestColumns.gaussianRows(random, type, 30, row -> layout == LIST ? random.nextInt(70) : 50);
    for (Op op : Op.values()) {
      Normalization normalization = Normalization.of(op);
      try (ArrowNormalizer chunked =
              new ArrowNormalizer(allocator, Engines.select(DeviceChoice.CPU), 100);
          FieldVector vector = TestColumns.build(allocator, "embedding", layout, type, input);
          FieldVector whole = normalizer.normalize(vector, normalization);
          FieldVector inChunks = chunked.normalize(vector, normalization)) {
        assertThat(TestColumns.read(inChunks))
            .as("seed %d, %s", seed, op)
            .isDeepEqualTo(TestColumns.read(whole));
      }
    }
  }

  @Test
  void weightOrBiasThatDoesNotFitNamesTheRow() {
    Normalization rms = Normalization.of(Op.RMS_NORM).withWeight(new double[] {1, 2, 3, 4});
    Double[][] ragged = {{1.0, 2.0, 3.0, 4.0}, {}, {1.0, 2.0, 3.0}, {1.0, 2.0, 3.0, 4.0}};
    try (FieldVector vector =
        TestColumns.build(allocator, "embedding", LIST, ElementType.FLOAT32, ragged)) {
      assertThatThrownBy(() -> normalizer.normalize(vector, rms))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot apply rms_norm to row 2: weight has 4 elements but the row has 3");
    }
    Normalization layer = Normalization.of(Op.LAYER_NORM).withBias(new double[] {1, 2, 3, 4, 5});
    Double[][] fixed = {{1.0, 2.0, 3.0, 4.0}, {1.0, 2.0, 3.0, 4.0}};
    try (FieldVector vector =
        TestColumns.build(allocator, "embedding", FIXED_SIZE_LIST, ElementType.FLOAT64, fixed)) {
      assertThatThrownBy(() -> normalizer.normalize(vector, layer))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot apply layer_norm to row 0: bias has 5 elements but the row has 4");
    }
  }

  private void check(
      Layout layout,
      ElementType type,
      Normalization normalization,
      Double[][] input,
      String context) {
    try (FieldVector vector = TestColumns.build(allocator, "embedding", layout, type, input);
        FieldVector output = normalizer.normalize(vector, normalization)) {
      ReferenceCheck.assertNormalized(
          normalization,
          type,
          input,
          TestColumns.read(output),
          context + ", " + layout + " of " + type);
    }
  }

  private static double[] floats(Random random, int count, double low, double high) {
    double[] values = new double[count];
    for (int i = 0; i < count; i++) {
      values[i] = (float) (low + (high - low) * random.nextDouble());
    }
    return values;
  }
}

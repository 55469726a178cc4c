package io.embednorm.arrow;

import static io.embednorm.arrow.TestColumns.Layout.FIXED_SIZE_LIST;
import static io.embednorm.arrow.TestColumns.Layout.LIST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.util.TransferPair;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The bridge's plumbing (layouts, nulls, offsets, slices, chunking, errors, ownership), run through
 * {@link NegatingEngine} so that it does not depend on the kernels: every valid element must come
 * out negated, in place.
 */
class ArrowNormalizerLayoutTest {
  private static final Normalization RMS = Normalization.of(Op.RMS_NORM);

  private BufferAllocator allocator;
  private NegatingEngine engine;

  @BeforeEach
  void openAllocator() {
    allocator = new RootAllocator();
    engine = new NegatingEngine();
  }

  @AfterEach
  void closeAllocator() {
    allocator.close(); // throws on a leak, failing the test
  }

  private ArrowNormalizer normalizer(long chunkByteLimit) {
    return new ArrowNormalizer(
        allocator, new EngineSelection(engine, "test engine"), chunkByteLimit);
  }

  static Stream<Arguments> layoutsAndTypes() {
    List<Arguments> cases = new ArrayList<>();
    for (Layout layout : Layout.values()) {
      for (ElementType type :
          List.of(ElementType.FLOAT32, ElementType.FLOAT64, ElementType.FLOAT16)) {
        cases.add(Arguments.of(layout, type));
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void readsAndWritesArrowBuffersInPlace(Layout layout, ElementType type) {
    long seed = 11;
    Double[][] rows = TestColumns.gaussianRows(new Random(seed), type, 7, row -> 5);
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
        FieldVector input = TestColumns.build(allocator, "embedding", layout, type, rows);
        FieldVector output = normalizer.normalize(input, RMS)) {
      assertThat(output.getField()).isEqualTo(input.getField());
      assertThat(output.getClass()).isEqualTo(input.getClass());
      assertThat(TestColumns.read(output)).as("seed %d", seed).isDeepEqualTo(negated(rows));
      assertThat(TestColumns.read(input)).as("input untouched").isDeepEqualTo(rows);
      assertThat(engine.calls).hasSize(1);
      NegatingEngine.Call call = engine.calls.get(0);
      assertThat(call.ragged()).isEqualTo(layout == LIST);
      assertThat(call.inputAddress())
          .as("the engine reads the input's element buffer")
          .isEqualTo(elements(input).getDataBuffer().memoryAddress());
      assertThat(call.outputAddress())
          .as("the engine writes the output's element buffer")
          .isEqualTo(elements(output).getDataBuffer().memoryAddress());
    }
  }

  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void nullRowsNullElementsAndEmptyRows(Layout layout, ElementType type) {
    Double[][] rows = {
      {1.0, 2.0, 3.0}, null, {4.0, null, 6.0}, {7.0, 8.0, 9.0}, null, {-1.0, -2.0, -3.0}
    };
    if (layout == LIST) {
      rows = new Double[][] {{1.0, 2.0}, null, {}, {4.0, null, 6.0}, {7.0}, {}, null, {5.0, 5.0}};
    }
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
        FieldVector input = TestColumns.build(allocator, "embedding", layout, type, rows);
        FieldVector output = normalizer.normalize(input, RMS)) {
      Double[][] expected = negated(rows);
      for (int row = 0; row < rows.length; row++) {
        if (rows[row] != null && ReferenceCheck.containsNull(rows[row])) {
          expected[row] = null;
        }
      }
      assertThat(TestColumns.read(output)).isDeepEqualTo(expected);
      BaseFixedWidthVector elements = elements(output);
      for (int row = 0; row < rows.length; row++) {
        if (expected[row] == null) {
          long start =
              output instanceof ListVector
                  ? ((ListVector) output).getElementStartIndex(row)
                  : row * 3L;
          long end =
              output instanceof ListVector
                  ? ((ListVector) output).getElementEndIndex(row)
                  : start + 3;
          for (long index = start; index < end; index++) {
            assertThat(elements.isNull((int) index))
                .as("element %d of null row %d", index, row)
                .isTrue();
            assertThat(elements.getDataBuffer().getByte(index * type.byteWidth())).isZero();
          }
        }
      }
    }
  }

  @Test
  void listWhoseOffsetsDoNotStartAtZero() {
    Double[][] rows = {{1.0, 2.0, 3.0}, null, {4.0}, {}, {5.0, 6.0}};
    Field field = TestColumns.field("embedding", LIST, ElementType.FLOAT32, 0);
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
        ListVector input = TestColumns.list(allocator, field, rows, 5, 2);
        ListVector output = (ListVector) normalizer.normalize(input, RMS)) {
      assertThat(input.getOffsetBuffer().getInt(0)).isEqualTo(5);
      assertThat(output.getOffsetBuffer().getInt(0)).isZero();
      assertThat(output.getDataVector().getValueCount()).isEqualTo(8);
      assertThat(TestColumns.read(output)).isDeepEqualTo(negated(rows));
    }
  }

  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("layoutsAndTypes")
  void slicedVectors(Layout layout, ElementType type) {
    long seed = 12;
    Random random = new Random(seed);
    Double[][] rows =
        TestColumns.gaussianRows(random, type, 40, row -> layout == LIST ? row % 7 : 6);
    rows[13] = null;
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
        FieldVector whole = TestColumns.build(allocator, "embedding", layout, type, rows)) {
      TransferPair pair = whole.getTransferPair(allocator);
      pair.splitAndTransfer(11, 21);
      try (FieldVector slice = (FieldVector) pair.getTo();
          FieldVector output = normalizer.normalize(slice, RMS)) {
        Double[][] expected = new Double[21][];
        System.arraycopy(negated(rows), 11, expected, 0, 21);
        assertThat(TestColumns.read(output)).as("seed %d", seed).isDeepEqualTo(expected);
      }
    }
  }

  @Test
  void chunksStayWithinTheByteLimitAndNumberRowsGlobally() {
    long seed = 13;
    Random random = new Random(seed);
    Double[][] rows =
        TestColumns.gaussianRows(random, ElementType.FLOAT32, 50, row -> random.nextInt(9));
    rows[20] = new Double[40]; // wider than the limit on its own: a chunk by itself
    java.util.Arrays.fill(rows[20], 1.5);
    long limit = 64; // 16 float32 elements
    try (ArrowNormalizer normalizer = normalizer(limit);
        FieldVector input =
            TestColumns.build(allocator, "embedding", LIST, ElementType.FLOAT32, rows);
        FieldVector output = normalizer.normalize(input, RMS)) {
      assertThat(TestColumns.read(output)).as("seed %d", seed).isDeepEqualTo(negated(rows));
      long nextRow = 0;
      for (NegatingEngine.Call call : engine.calls) {
        assertThat(call.firstRowIndex()).as("seed %d", seed).isGreaterThanOrEqualTo(nextRow);
        if (call.rows() > 1) {
          assertThat(call.inputBytes())
              .as("seed %d: %s", seed, call)
              .isLessThanOrEqualTo((int) limit);
        }
        nextRow = call.firstRowIndex() + call.rows();
      }
      assertThat(engine.calls.size()).as("seed %d", seed).isGreaterThan(5);
      assertThat(engine.calls).anyMatch(call -> call.firstRowIndex() == 20 && call.rows() == 1);
    }
  }

  @Test
  void fixedWidthChunksSplitOnRowBoundaries() {
    Double[][] rows = TestColumns.gaussianRows(new Random(14), ElementType.FLOAT64, 10, row -> 3);
    try (ArrowNormalizer normalizer = normalizer(3 * 3 * 8);
        FieldVector input =
            TestColumns.build(allocator, "embedding", FIXED_SIZE_LIST, ElementType.FLOAT64, rows);
        FieldVector output = normalizer.normalize(input, RMS)) {
      assertThat(TestColumns.read(output)).isDeepEqualTo(negated(rows));
      assertThat(engine.calls)
          .extracting(NegatingEngine.Call::firstRowIndex, NegatingEngine.Call::rows)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(0L, 3),
              org.assertj.core.groups.Tuple.tuple(3L, 3),
              org.assertj.core.groups.Tuple.tuple(6L, 3),
              org.assertj.core.groups.Tuple.tuple(9L, 1));
    }
  }

  @Test
  void weightMismatchNamesTheGlobalRowAcrossChunks() {
    Double[][] rows =
        TestColumns.gaussianRows(new Random(15), ElementType.FLOAT32, 60, row -> row == 37 ? 3 : 4);
    Normalization weighted = RMS.withWeight(new double[] {1, 2, 3, 4});
    try (ArrowNormalizer normalizer = normalizer(40);
        FieldVector input =
            TestColumns.build(allocator, "embedding", LIST, ElementType.FLOAT32, rows)) {
      assertThatThrownBy(() -> normalizer.normalize(input, weighted))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot apply rms_norm to row 37: weight has 4 elements but the row has 3");
    }
  }

  @Test
  void nullRowsNeverRaiseWidthErrors() {
    Double[][] rows = {{1.0, 2.0, 3.0, 4.0}, null, {5.0, 6.0, 7.0, 8.0}, {1.0, null, 2.0}};
    Field field = TestColumns.field("embedding", LIST, ElementType.FLOAT32, 0);
    Normalization weighted = RMS.withWeight(new double[] {1, 2, 3, 4});
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
        ListVector input = TestColumns.list(allocator, field, rows, 0, 2);
        FieldVector output = normalizer.normalize(input, weighted)) {
      Double[][] expected = negated(rows);
      expected[3] = null;
      assertThat(TestColumns.read(output)).isDeepEqualTo(expected);
      assertThat(engine.calls)
          .extracting(NegatingEngine.Call::firstRowIndex)
          .containsExactly(0L, 2L);
    }
    Field fixed = TestColumns.field("embedding", FIXED_SIZE_LIST, ElementType.FLOAT32, 3);
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
        FieldVector input =
            TestColumns.fixedSizeList(allocator, fixed, new Double[][] {null, null});
        FieldVector output = normalizer.normalize(input, weighted)) {
      assertThat(TestColumns.read(output)).isDeepEqualTo(new Double[][] {null, null});
    }
  }

  @Test
  void zeroRowsAndZeroWidth() {
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES)) {
      for (Layout layout : Layout.values()) {
        Field field = TestColumns.field("embedding", layout, ElementType.FLOAT32, 4);
        try (FieldVector input = field.createVector(allocator);
            FieldVector output = normalizer.normalize(input, RMS)) {
          assertThat(output.getValueCount()).isZero();
          assertThat(output.getField()).isEqualTo(input.getField());
        }
      }
      Field empty = TestColumns.field("embedding", FIXED_SIZE_LIST, ElementType.FLOAT32, 0);
      Double[][] rows = {{}, null, {}};
      try (FieldVector input = TestColumns.fixedSizeList(allocator, empty, rows);
          FieldVector output = normalizer.normalize(input, RMS)) {
        assertThat(TestColumns.read(output)).isDeepEqualTo(rows);
      }
    }
    assertThat(engine.calls).isEmpty();
  }

  @Test
  void rootColumnIsNormalizedAndTheRootIsLeftAlone() {
    Double[][] rows = {{1.0, 2.0}, {3.0, 4.0}};
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
        BigIntVector id = new BigIntVector("id", allocator);
        FieldVector embedding =
            TestColumns.build(allocator, "vec", FIXED_SIZE_LIST, ElementType.FLOAT32, rows)) {
      id.allocateNew(2);
      id.set(0, 10);
      id.set(1, 11);
      id.setValueCount(2);
      VectorSchemaRoot root = new VectorSchemaRoot(List.of(id, embedding));
      try (FieldVector output = normalizer.normalize(root, "vec", RMS)) {
        assertThat(TestColumns.read(output)).isDeepEqualTo(negated(rows));
      }
      assertThat(root.getVector("vec")).isSameAs(embedding);
      assertThat(TestColumns.read(embedding)).isDeepEqualTo(rows);
      assertThat(id.get(1)).isEqualTo(11);
    }
  }

  @Test
  void missingColumnAndUnsupportedTypes() {
    try (ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
        BigIntVector id = new BigIntVector("id", allocator);
        FieldVector vec =
            TestColumns.build(allocator, "vec", LIST, ElementType.FLOAT32, new Double[][] {{1.0}});
        ListVector ints = ListVector.empty("ints", allocator);
        LargeListVector large =
            new LargeListVector(
                TestColumns.field("large", LIST, ElementType.FLOAT32, 0).getName(),
                allocator,
                FieldType.nullable(ArrowType.LargeList.INSTANCE),
                null)) {
      VectorSchemaRoot root = new VectorSchemaRoot(List.of(id, vec));
      assertThatThrownBy(() -> normalizer.normalize(root, "embedding", RMS))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage(
              "Cannot normalize column 'embedding': no such column; the batch has columns id, vec");
      assertThatThrownBy(() -> normalizer.normalize(root, "id", RMS))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage(
              "Cannot normalize column 'id': its type is Int(64, true); expected a FixedSizeList"
                  + " or List of float32, float64 or float16");
      ints.addOrGetVector(FieldType.nullable(new ArrowType.Int(32, true)));
      assertThatThrownBy(() -> normalizer.normalize(ints, RMS))
          .hasMessage(
              "Cannot normalize column 'ints': its type is List<Int(32, true)>; expected a"
                  + " FixedSizeList or List of float32, float64 or float16");
      large.addOrGetVector(
          FieldType.nullable(
              new ArrowType.FloatingPoint(TestColumns.precision(ElementType.FLOAT32))));
      assertThatThrownBy(() -> normalizer.normalize(large, RMS))
          .hasMessageStartingWith(
              "Cannot normalize column 'large': its type is LargeList<FloatingPoint(SINGLE)>;");
      assertThatThrownBy(
              () -> normalizer.normalize(new VectorSchemaRoot(List.<FieldVector>of()), "x", RMS))
          .hasMessage("Cannot normalize column 'x': no such column; the batch has no columns");
    }
  }

  @Test
  void closeFreesTheEngineButNotTheAllocator() {
    ArrowNormalizer normalizer = normalizer(ArrowNormalizer.DEFAULT_CHUNK_BYTES);
    assertThat(normalizer.engineDescription()).isEqualTo("negating test engine");
    assertThat(normalizer.deviceReason()).isEqualTo("test engine");
    normalizer.close();
    normalizer.close();
    assertThat(engine.closed).isTrue();
    try (FieldVector input =
        TestColumns.build(
            allocator, "embedding", LIST, ElementType.FLOAT32, new Double[][] {{1.0}})) {
      assertThatThrownBy(() -> normalizer.normalize(input, RMS))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot normalize column 'embedding': the normalizer is closed");
    }
  }

  static BaseFixedWidthVector elements(FieldVector vector) {
    return (BaseFixedWidthVector) vector.getChildrenFromFields().get(0);
  }

  static Double[][] negated(Double[][] rows) {
    Double[][] result = new Double[rows.length][];
    for (int row = 0; row < rows.length; row++) {
      if (rows[row] != null) {
        result[row] = new Double[rows[row].length];
        for (int i = 0; i < rows[row].length; i++) {
          result[row][i] = rows[row][i] == null ? null : -rows[row][i];
        }
      }
    }
    return result;
  }
}

package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.arrow.internal.HostOutputs;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.EncodingReference;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.complex.StructVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The encoded column holds, row by row, the encoding of the float32 result that {@code normalize}
 * gives (checked against the float64 reference of the encodings), in the documented layout: null
 * rows null, empty rows empty, NaN rows as defined, a chain of two steps.
 */
class ArrowEncodingTest {
  private static final List<Normalization> CHAIN =
      List.of(Normalization.of(Op.RMS_NORM), Normalization.of(Op.L2_NORMALIZE));

  @ParameterizedTest
  @EnumSource(Encoding.class)
  void listAndFixedSizeListColumns(Encoding encoding) {
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      for (long seed : TestSeeds.seeds()) {
        Random random = new Random(TestSeeds.mix(seed, encoding.ordinal()));
        Double[][] ragged =
            TestColumns.gaussianRows(random, ElementType.FLOAT32, 40, row -> random.nextInt(50));
        ragged[3] = null;
        ragged[4] = new Double[0];
        ragged[5] = new Double[] {1.0, Double.NaN, 2.0};
        Double[][] fixed = TestColumns.gaussianRows(random, ElementType.FLOAT32, 30, row -> 19);
        fixed[2] = null;
        for (Layout layout : Layout.values()) {
          Double[][] rows = layout == Layout.LIST ? ragged : fixed;
          try (FieldVector input =
              TestColumns.build(allocator, "embedding", layout, ElementType.FLOAT32, rows)) {
            check(normalizer, allocator, input, encoding, "seed " + seed + " " + layout);
          }
        }
      }
    }
  }

  /**
   * Values of 1 MiB or more come from the pool of earlier outputs: a block poisoned with 0xff bytes
   * comes back for the next call, whose rows are its own and whose null rows are zeros.
   */
  @ParameterizedTest
  @EnumSource(
      value = Encoding.class,
      names = {"FLOAT16", "INT8"})
  void pooledValuesShowNothingOfAnEarlierCall(Encoding encoding) {
    int width = encoding == Encoding.INT8 ? 1024 : 512;
    int rows = (int) ((HostOutputs.SMALLEST_BYTES + (1 << 16)) / encoding.rowBytes(width));
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      long seed = TestSeeds.seeds()[0];
      Random random = new Random(TestSeeds.mix(seed, encoding.ordinal(), 77));
      Double[][] first = TestColumns.gaussianRows(random, ElementType.FLOAT32, rows, row -> width);
      Double[][] second = TestColumns.gaussianRows(random, ElementType.FLOAT32, rows, row -> width);
      for (int row = 0; row < rows; row += 9) {
        second[row] = null;
      }
      long address;
      try (FieldVector input =
              TestColumns.build(
                  allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, first);
          FieldVector encoded =
              normalizer.normalizeEncoded(input, CHAIN, encoding, new NormalizationMetrics())) {
        ArrowBuf values = valuesOf(encoded).getDataBuffer();
        address = values.memoryAddress();
        values.setOne(0, values.capacity());
      }
      try (FieldVector input =
          TestColumns.build(
              allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, second)) {
        try (FieldVector encoded =
            normalizer.normalizeEncoded(input, CHAIN, encoding, new NormalizationMetrics())) {
          FixedSizeBinaryVector values = (FixedSizeBinaryVector) valuesOf(encoded);
          assertThat(values.getDataBuffer().memoryAddress())
              .as("the pooled block again")
              .isEqualTo(address);
          int rowBytes = (int) encoding.rowBytes(width);
          for (int row = 0; row < rows; row += 9) {
            for (int i = 0; i < rowBytes; i++) {
              assertThat(values.getDataBuffer().getByte((long) row * rowBytes + i))
                  .as("null row %d, byte %d: zero, not the old contents", row, i)
                  .isZero();
            }
          }
        }
        check(normalizer, allocator, input, encoding, "pooled, seed " + seed);
      }
    }
  }

  private static FieldVector valuesOf(FieldVector encoded) {
    return encoded instanceof StructVector struct
        ? (FieldVector) struct.getChild("values")
        : encoded;
  }

  @Test
  void refusesFloat64Columns() {
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
        FieldVector input =
            TestColumns.build(
                allocator, "e", Layout.LIST, ElementType.FLOAT64, new Double[][] {{1.0}})) {
      assertThatThrownBy(
              () ->
                  normalizer.normalizeEncoded(
                      input, CHAIN, Encoding.INT8, new NormalizationMetrics()))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot encode column 'e' as int8: encodings take float32 rows, got float64");
    }
  }

  private static void check(
      ArrowNormalizer normalizer,
      BufferAllocator allocator,
      FieldVector input,
      Encoding encoding,
      String context) {
    try (FieldVector floats = normalizer.normalize(input, CHAIN, new NormalizationMetrics());
        FieldVector encoded =
            normalizer.normalizeEncoded(input, CHAIN, encoding, new NormalizationMetrics())) {
      assertThat(encoded.getField().getName()).isEqualTo("embedding");
      Double[][] y = TestColumns.read(floats);
      FieldVector values = encoded;
      Float4Vector scales = null;
      if (encoding == Encoding.INT8) {
        StructVector struct = (StructVector) encoded;
        values = (FieldVector) struct.getChild("values");
        scales = (Float4Vector) struct.getChild("scale");
      }
      if (input instanceof org.apache.arrow.vector.complex.FixedSizeListVector) {
        assertThat(values).isInstanceOf(FixedSizeBinaryVector.class);
      } else {
        assertThat(values).isInstanceOf(VarBinaryVector.class);
      }
      assertThat(encoded.getValueCount()).isEqualTo(y.length);
      for (int row = 0; row < y.length; row++) {
        String where = context + " row " + row;
        if (y[row] == null) {
          assertThat(encoded.isNull(row)).as(where).isTrue();
          continue;
        }
        assertThat(encoded.isNull(row)).as(where).isFalse();
        byte[] bytes =
            values instanceof FixedSizeBinaryVector fixed
                ? fixed.get(row)
                : ((VarBinaryVector) values).get(row);
        float[] row32 = new float[y[row].length];
        for (int i = 0; i < row32.length; i++) {
          row32[i] = y[row][i].floatValue();
        }
        assertThat((long) bytes.length).as(where).isEqualTo(encoding.rowBytes(row32.length));
        float scale = scales == null ? 1f : scales.get(row);
        EncodingReference.assertRow(
            encoding, row32, 0, row32.length, ByteBuffer.wrap(bytes), 0, scale, where);
      }
    }
  }
}

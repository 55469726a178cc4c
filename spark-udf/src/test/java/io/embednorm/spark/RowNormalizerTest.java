package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.spark.internal.RowNormalizer;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.junit.jupiter.api.Test;

class RowNormalizerTest {
  private static final Normalization SOFTMAX = Normalization.of(Op.SOFTMAX);

  @Test
  void nullRowsAndRowsWithNullElementsGiveNull() {
    assertThat(RowNormalizer.normalizeFloats(SOFTMAX, null)).isNull();
    assertThat(RowNormalizer.normalizeDoubles(SOFTMAX, null)).isNull();
    ArrayData withNull = new GenericArrayData(new Object[] {1.0f, null});
    assertThat(RowNormalizer.normalizeFloats(SOFTMAX, withNull)).isNull();
  }

  @Test
  void emptyRowsGiveEmptyUnsafeArrays() {
    ArrayData empty = RowNormalizer.normalizeDoubles(SOFTMAX, new GenericArrayData(new Object[0]));
    assertThat(empty).isInstanceOf(UnsafeArrayData.class);
    assertThat(empty.numElements()).isZero();
  }

  @Test
  void resultsAreUnsafeArraysOfTheInputType() {
    ArrayData result =
        RowNormalizer.normalizeFloats(
            SOFTMAX, UnsafeArrayData.fromPrimitiveArray(new float[] {0f, 0f}));
    assertThat(result).isInstanceOf(UnsafeArrayData.class);
    assertThat(result.toFloatArray()).containsExactly(0.5f, 0.5f);
  }

  @Test
  void weightLengthMismatchNamesTheLengths() {
    Normalization withWeight = Normalization.of(Op.RMS_NORM).withWeight(new double[] {1, 1, 1, 1});
    ArrayData row = UnsafeArrayData.fromPrimitiveArray(new double[] {1, 2, 3, 4, 5});
    assertThatThrownBy(() -> RowNormalizer.normalizeDoubles(withWeight, row))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot apply rms_norm to a row: weight has 4 elements but the row has 5");
  }
}

package io.embednorm.spark.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.junit.jupiter.api.Test;

class SparkVectorMemoryTest {
  private static final long SEED = System.nanoTime();

  @Test
  void copiesFloatsOutOfOnHeapAndOffHeapVectors() {
    System.out.println("SparkVectorMemoryTest seed " + SEED);
    Random random = new Random(SEED);
    float[] values = new float[1000];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) random.nextGaussian();
    }
    values[7] = Float.NaN;
    values[8] = Float.intBitsToFloat(0x7fc00123); // a NaN with a payload: bits must survive
    for (WritableColumnVector vector :
        new WritableColumnVector[] {
          new OnHeapColumnVector(values.length, DataTypes.FloatType),
          new OffHeapColumnVector(values.length, DataTypes.FloatType)
        }) {
      try (vector) {
        vector.putFloats(0, values.length, values, 0);
        long address = Platform.allocateMemory(600 * Float.BYTES);
        try {
          assertThat(SparkVectorMemory.copy(vector, 300, 600, Float.BYTES, address))
              .as(vector.getClass().getSimpleName())
              .isTrue();
          for (int i = 0; i < 600; i++) {
            assertThat(Float.floatToRawIntBits(Platform.getFloat(null, address + 4L * i)))
                .as("%s, seed %d, element %d", vector.getClass().getSimpleName(), SEED, 300 + i)
                .isEqualTo(Float.floatToRawIntBits(values[300 + i]));
          }
        } finally {
          Platform.freeMemory(address);
        }
      }
    }
  }

  @Test
  void copiesDoublesOutOfAnOnHeapVector() {
    Random random = new Random(SEED + 1);
    double[] values = random.doubles(100).toArray();
    try (OnHeapColumnVector vector = new OnHeapColumnVector(values.length, DataTypes.DoubleType)) {
      vector.putDoubles(0, values.length, values, 0);
      long address = Platform.allocateMemory(50 * Double.BYTES);
      try {
        assertThat(SparkVectorMemory.copy(vector, 25, 50, Double.BYTES, address)).isTrue();
        for (int i = 0; i < 50; i++) {
          assertThat(Platform.getDouble(null, address + 8L * i)).isEqualTo(values[25 + i]);
        }
      } finally {
        Platform.freeMemory(address);
      }
    }
  }

  @Test
  void copiesFloatsIntoOnHeapAndOffHeapVectorsGrowingThem() {
    Random random = new Random(SEED + 2);
    float[] values = new float[1000];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) random.nextGaussian();
    }
    values[9] = Float.intBitsToFloat(0x7fc00123);
    long address = Platform.allocateMemory(values.length * Float.BYTES);
    try {
      Platform.copyMemory(
          values, Platform.FLOAT_ARRAY_OFFSET, null, address, values.length * Float.BYTES);
      for (WritableColumnVector vector :
          new WritableColumnVector[] {
            new OnHeapColumnVector(10, DataTypes.FloatType),
            new OffHeapColumnVector(10, DataTypes.FloatType)
          }) {
        try (vector) {
          vector.putFloat(0, 42f);
          // Beyond the vector's capacity of 10: the copy makes room, keeping what was there.
          assertThat(SparkVectorMemory.copyInto(address, vector, 5, values.length, Float.BYTES))
              .as(vector.getClass().getSimpleName())
              .isTrue();
          assertThat(vector.getFloat(0)).isEqualTo(42f);
          for (int i = 0; i < values.length; i++) {
            assertThat(Float.floatToRawIntBits(vector.getFloat(5 + i)))
                .as("%s, seed %d, element %d", vector.getClass().getSimpleName(), SEED, i)
                .isEqualTo(Float.floatToRawIntBits(values[i]));
          }
        }
      }
    } finally {
      Platform.freeMemory(address);
    }
  }

  @Test
  void copiesDoublesIntoAnOnHeapVector() {
    Random random = new Random(SEED + 3);
    double[] values = random.doubles(100).toArray();
    long address = Platform.allocateMemory(values.length * Double.BYTES);
    try (OnHeapColumnVector vector = new OnHeapColumnVector(values.length, DataTypes.DoubleType)) {
      Platform.copyMemory(
          values, Platform.DOUBLE_ARRAY_OFFSET, null, address, values.length * Double.BYTES);
      assertThat(
              SparkVectorMemory.copyInto(address + 25 * Double.BYTES, vector, 0, 50, Double.BYTES))
          .isTrue();
      for (int i = 0; i < 50; i++) {
        assertThat(vector.getDouble(i)).isEqualTo(values[25 + i]);
      }
    } finally {
      Platform.freeMemory(address);
    }
  }
}

package io.embednorm.spark.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * Copies float or double elements straight out of Spark's writable column vectors into off-heap
 * memory: one copy, where {@link ColumnVector#getFloats} would first copy into a fresh array. An
 * off-heap vector exposes its address; an on-heap one keeps its values in a private array, read
 * here through a method handle found once. Dictionary-encoded vectors, and any JVM or Spark build
 * where the array cannot be reached, take the caller's general path (the copy returns false).
 */
final class SparkVectorMemory {
  private static final MethodHandle FLOATS = arrayGetter("floatData");
  private static final MethodHandle DOUBLES = arrayGetter("doubleData");

  private SparkVectorMemory() {}

  /**
   * Copies {@code count} elements of {@code elementBytes} (4 or 8) from {@code source} at {@code
   * start} to {@code address}; returns false, having copied nothing, where this cannot.
   */
  static boolean copy(ColumnVector source, int start, int count, int elementBytes, long address) {
    long bytes = (long) count * elementBytes;
    if (source instanceof OffHeapColumnVector offHeap && !offHeap.hasDictionary()) {
      Platform.copyMemory(
          null, offHeap.valuesNativeAddress() + (long) start * elementBytes, null, address, bytes);
      return true;
    }
    if (source instanceof OnHeapColumnVector onHeap && !onHeap.hasDictionary()) {
      Object array = array(onHeap, elementBytes == Float.BYTES ? FLOATS : DOUBLES);
      if (array == null) {
        return false;
      }
      long base =
          elementBytes == Float.BYTES ? Platform.FLOAT_ARRAY_OFFSET : Platform.DOUBLE_ARRAY_OFFSET;
      Platform.copyMemory(array, base + (long) start * elementBytes, null, address, bytes);
      return true;
    }
    return false;
  }

  private static Object array(OnHeapColumnVector vector, MethodHandle getter) {
    if (getter == null) {
      return null;
    }
    try {
      return getter.invoke(vector);
    } catch (Throwable unreachable) {
      return null;
    }
  }

  private static MethodHandle arrayGetter(String name) {
    try {
      Field field = OnHeapColumnVector.class.getDeclaredField(name);
      field.setAccessible(true);
      return MethodHandles.lookup().unreflectGetter(field);
    } catch (ReflectiveOperationException | RuntimeException unavailable) {
      return null;
    }
  }
}

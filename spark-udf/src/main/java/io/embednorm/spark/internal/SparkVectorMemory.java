package io.embednorm.spark.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * Copies float or double elements straight between Spark's writable column vectors and off-heap
 * memory, both ways: one copy, where {@link ColumnVector#getFloats} would first copy into a fresh
 * array and {@link WritableColumnVector#putFloats(int, int, float[], int)} would need one filled
 * first. An off-heap vector exposes its address; an on-heap one keeps its values in a private
 * array, reached here through a method handle found once. Dictionary-encoded vectors, and any JVM
 * or Spark build where the array cannot be reached, take the caller's general path (the copy
 * returns false).
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
    Location from = locate(source, start, elementBytes);
    if (from == null) {
      return false;
    }
    Platform.copyMemory(from.array(), from.offset(), null, address, (long) count * elementBytes);
    return true;
  }

  /**
   * Copies {@code count} elements of {@code elementBytes} (4 or 8) from {@code address} into {@code
   * target} at {@code start}; returns false, having copied nothing, where this cannot. Reserves
   * room first (a no-op where the caller did), since nothing checks the bounds of a raw copy. The
   * elements' null flags are left as they are.
   */
  static boolean copyInto(
      long address, WritableColumnVector target, int start, int count, int elementBytes) {
    target.reserve(start + count);
    Location to = locate(target, start, elementBytes);
    if (to == null) {
      return false;
    }
    Platform.copyMemory(null, address, to.array(), to.offset(), (long) count * elementBytes);
    return true;
  }

  /**
   * Where element {@code start} of {@code vector}'s values lies, as {@link Platform#copyMemory}
   * takes it; null where it cannot be reached.
   */
  private static Location locate(ColumnVector vector, int start, int elementBytes) {
    long offset = (long) start * elementBytes;
    if (vector instanceof OffHeapColumnVector offHeap && !offHeap.hasDictionary()) {
      return new Location(null, offHeap.valuesNativeAddress() + offset);
    }
    if (vector instanceof OnHeapColumnVector onHeap && !onHeap.hasDictionary()) {
      Object array = array(onHeap, elementBytes == Float.BYTES ? FLOATS : DOUBLES);
      if (array == null) {
        return null;
      }
      long base =
          elementBytes == Float.BYTES ? Platform.FLOAT_ARRAY_OFFSET : Platform.DOUBLE_ARRAY_OFFSET;
      return new Location(array, base + offset);
    }
    return null;
  }

  /** An on-heap array and an offset into it, or null and an off-heap address. */
  private record Location(Object array, long offset) {}

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

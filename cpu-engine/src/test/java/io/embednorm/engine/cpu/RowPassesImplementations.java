package io.embednorm.engine.cpu;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The loops the kernel tests run on: scalar always, SIMD where this JVM has the Vector API (the
 * build's test JVM does; {@link RowPassSelectionTest} insists on it), in both its forms (256- and
 * 512-bit exponentials) whatever the machine prefers.
 */
final class RowPassesImplementations {
  private RowPassesImplementations() {}

  static List<RowPasses> all() {
    List<RowPasses> all = new ArrayList<>();
    all.add(ScalarRowPasses.INSTANCE);
    all.addAll(vectorVariants());
    return all;
  }

  /**
   * Every form of the SIMD passes (256- and 512-bit exponentials), whatever this machine prefers;
   * empty where the JVM has no Vector API. Reflective, as {@link RowPassSelection} loads them.
   */
  @SuppressWarnings("unchecked")
  static List<RowPasses> vectorVariants() {
    if (RowPassSelection.VECTOR == null) {
      return List.of();
    }
    try {
      Method variants = RowPassSelection.VECTOR.getClass().getDeclaredMethod("variants");
      return (List<RowPasses>) variants.invoke(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Cannot list the forms of the SIMD passes", e);
    }
  }

  /** For {@code @MethodSource}: one argument per implementation. */
  static Stream<RowPasses> implementations() {
    return all().stream();
  }

  /** Every implementation with each of {@code values}: (passes, value). */
  static Stream<Arguments> crossedWith(Object... values) {
    return all().stream()
        .flatMap(passes -> Arrays.stream(values).map(value -> Arguments.of(passes, value)));
  }
}

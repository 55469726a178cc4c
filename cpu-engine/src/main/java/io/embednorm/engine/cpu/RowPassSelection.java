package io.embednorm.engine.cpu;

import io.embednorm.engine.InternalSwitches;
import java.lang.reflect.Method;

/**
 * Chooses the passes once per JVM: the Vector API ones when the JVM was started with {@code
 * --add-modules jdk.incubator.vector} (bin/embednorm and the tests are) and the machine has 256-bit
 * vectors, the scalar ones otherwise (e.g. Spark executors started without the option). The
 * internal switch {@link InternalSwitches#CPU_SIMD} ({@code -Dembednorm.cpu.simd=false}) forces
 * scalar.
 *
 * <p>The same holds for the loops of {@code causal_conv} ({@link ConvolutionLoops}).
 *
 * <p>{@code VectorRowPasses} (and {@code VectorConvolution}) is loaded reflectively, and only after
 * the module was found in the boot layer: a direct reference would make its class fail to link
 * where the module is missing. Both implementations give the same bits, so the choice changes speed
 * only.
 */
final class RowPassSelection {
  /** The SIMD passes, or null where the JVM or the machine has none. */
  static final RowPasses VECTOR = loadVector("VectorRowPasses", RowPasses.class);

  /** The SIMD loops of {@code causal_conv}, or null where the JVM or the machine has none. */
  static final ConvolutionLoops VECTOR_CONVOLUTION =
      loadVector("VectorConvolution", ConvolutionLoops.class);

  /** What the CPU engine's {@code causal_conv} runs. */
  static final ConvolutionLoops CONVOLUTION =
      VECTOR_CONVOLUTION != null && InternalSwitches.CPU_SIMD.value()
          ? VECTOR_CONVOLUTION
          : ScalarConvolution.INSTANCE;

  /** What {@link CpuKernels} and a default {@link CpuEngine} run. */
  static final RowPasses DEFAULT =
      VECTOR != null && InternalSwitches.CPU_SIMD.value() ? VECTOR : ScalarRowPasses.INSTANCE;

  /**
   * What holds a default {@link CpuEngine} on the scalar passes until the SIMD ones are compiled;
   * null where the default is scalar or {@link InternalSwitches#CPU_WARM_UP} is false.
   */
  static final SimdWarmUp WARM_UP =
      DEFAULT == VECTOR && VECTOR != null && InternalSwitches.CPU_WARM_UP.value()
          ? new SimdWarmUp(VECTOR, ScalarRowPasses.INSTANCE, SimdWarmUp.DEADLINE_NANOS)
          : null;

  private RowPassSelection() {}

  /** {@code simpleName.createIfSupported()} of this package, or null without the Vector API. */
  private static <T> T loadVector(String simpleName, Class<T> kind) {
    if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
      return null;
    }
    try {
      Class<?> type = Class.forName(RowPassSelection.class.getPackageName() + "." + simpleName);
      Method create = type.getDeclaredMethod("createIfSupported");
      return kind.cast(create.invoke(null));
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return null;
    }
  }
}

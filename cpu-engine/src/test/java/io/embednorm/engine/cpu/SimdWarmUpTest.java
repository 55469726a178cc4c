package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The engine's switch from scalar to SIMD passes: when it happens, and that no output depends on
 * it. Each test has a warm-up of its own, so the JVM-wide one ({@link RowPassSelection#WARM_UP})
 * stays untouched.
 */
class SimdWarmUpTest {
  private static final int FLOAT32 = 0;
  private static final int FLOAT64 = 1;
  private static final long NO_DEADLINE = TimeUnit.MINUTES.toNanos(2);

  @Test
  void theTestJvmWarmsUpTheDefaultEngines() {
    assertThat(RowPassSelection.WARM_UP).isNotNull();
  }

  /**
   * The warm-up's scalar passes are slowed in these tests (0.2 ms a call), so that the SIMD passes
   * win its race whatever the JIT makes of them in this JVM: the tests are about the switch and the
   * bits, not about speed (the benchmarks module times the passes). With the real race they failed
   * now and then in the module's suite, where earlier tests shape the JIT's profiles.
   */
  @ParameterizedTest
  @EnumSource(Op.class)
  void rowsKeepTheScalarBitsBeforeDuringAndAfterTheSwitch(Op op) {
    SimdWarmUp warmUp = slowedWarmUp(NO_DEADLINE);
    for (long seed : TestSeeds.seeds()) {
      Random random = new Random(TestSeeds.mix(seed, op.ordinal()));
      Normalization normalization = Normalization.of(op);
      try (CpuEngine warming = new CpuEngine(1, RowPassSelection.VECTOR, warmUp);
          CpuEngine scalar = new CpuEngine(1, ScalarRowPasses.INSTANCE)) {
        // Keep normalizing until the engine runs SIMD.
        float[] rows = randomRows(random, 1000 * 300);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        do {
          assertThat(run(warming, normalization, rows, 300))
              .as("seed %d, SIMD %s", seed, warmUp.runsSimd(op, FLOAT32))
              .isEqualTo(run(scalar, normalization, rows, 300));
        } while (!warmUp.runsSimd(op, FLOAT32) && System.nanoTime() < deadline);
        assertThat(warmUp.runsSimd(op, FLOAT32)).as("SIMD within a minute").isTrue();
        float[] after = randomRows(random, 500 * 300);
        assertThat(run(warming, normalization, after, 300))
            .as("seed %d, after the switch", seed)
            .isEqualTo(run(scalar, normalization, after, 300));
      }
    }
  }

  /**
   * No amount of input holds the switch back: one row starts the timing, which switches on its own
   * while the engine normalizes nothing more.
   */
  @Test
  void oneRowStartsTheTimingWhichSwitchesOnItsOwn() {
    SimdWarmUp warmUp = slowedWarmUp(NO_DEADLINE);
    Normalization normalization = Normalization.of(Op.RMS_NORM);
    float[] row = randomRows(new Random(TestSeeds.seeds()[1]), 300);
    try (CpuEngine warming = new CpuEngine(1, RowPassSelection.VECTOR, warmUp);
        CpuEngine scalar = new CpuEngine(1, ScalarRowPasses.INSTANCE)) {
      assertThat(warmUp.runsSimd(Op.RMS_NORM, FLOAT32)).isFalse();
      assertThat(run(warming, normalization, row, 300))
          .isEqualTo(run(scalar, normalization, row, 300));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!warmUp.runsSimd(Op.RMS_NORM, FLOAT32) && System.nanoTime() < deadline) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
      }
      assertThat(warmUp.runsSimd(Op.RMS_NORM, FLOAT32)).as("SIMD within a minute").isTrue();
      assertThat(warmUp.runsSimd(Op.SOFTMAX, FLOAT32)).as("another op").isFalse();
      assertThat(run(warming, normalization, row, 300))
          .as("after the switch")
          .isEqualTo(run(scalar, normalization, row, 300));
    }
  }

  /** The race's two rules, on made-up round times (nanoseconds). */
  @Test
  void theRaceSettlesOnTheFasterKindOnceSimdIsCompiled() {
    SimdWarmUp.Race interpretedThenFaster = new SimdWarmUp.Race();
    for (int round = 0; round < 100; round++) {
      assertThat(interpretedThenFaster.settle(50_000, 1_000)).isEqualTo(SimdWarmUp.TIMING);
    }
    assertThat(interpretedThenFaster.settle(900, 1_000)).isEqualTo(SimdWarmUp.TIMING);
    assertThat(interpretedThenFaster.settle(1_100, 1_000)).isEqualTo(SimdWarmUp.TIMING);
    assertThat(interpretedThenFaster.settle(900, 1_000)).isEqualTo(SimdWarmUp.TIMING);
    assertThat(interpretedThenFaster.settle(950, 1_000)).isEqualTo(SimdWarmUp.SIMD);

    // Compiled and about as fast: the best rounds decide after COMPILED_ROUNDS of them.
    for (long simd : new long[] {1_010, 990}) {
      SimdWarmUp.Race even = new SimdWarmUp.Race();
      int outcome = SimdWarmUp.TIMING;
      int rounds = 0;
      while (outcome == SimdWarmUp.TIMING) {
        outcome = even.settle(rounds % 2 == 0 ? simd : 5_000, rounds % 2 == 0 ? 1_000 : 4_000);
        rounds++;
      }
      assertThat(rounds).isEqualTo(SimdWarmUp.COMPILED_ROUNDS);
      assertThat(outcome).isEqualTo(simd <= 1_000 ? SimdWarmUp.SIMD : SimdWarmUp.SCALAR);
    }
  }

  @Test
  void float64AndRaggedRowsSwitchToo() {
    SimdWarmUp warmUp = slowedWarmUp(NO_DEADLINE);
    Normalization normalization = Normalization.of(Op.LAYER_NORM);
    Random random = new Random(TestSeeds.mix(TestSeeds.seeds()[2], 64));
    try (CpuEngine warming = new CpuEngine(1, RowPassSelection.VECTOR, warmUp)) {
      ByteBuffer input = direct(200 * 129 * Double.BYTES);
      for (int index = 0; index < 200 * 129; index++) {
        input.putDouble(index * Double.BYTES, random.nextGaussian() * 1e4 + 1e6);
      }
      ByteBuffer output = direct(input.capacity());
      int[] offsets = new int[201];
      for (int row = 1; row <= 200; row++) {
        offsets[row] = offsets[row - 1] + random.nextInt(130);
      }
      awaitWhileRunning(
          () -> warmUp.runsSimd(Op.LAYER_NORM, FLOAT64),
          () ->
              warming.normalize(
                  normalization,
                  RowBatch.fixedWidth(ElementType.FLOAT64, 200, 129, input, output)));
      awaitWhileRunning(
          () -> warmUp.runsSimd(Op.LAYER_NORM, FLOAT32),
          () ->
              warming.normalize(
                  normalization,
                  RowBatch.ragged(
                      ElementType.FLOAT32, IntBuffer.wrap(offsets.clone()), input, output)));
    }
  }

  /**
   * Rows wider than a chunk: the warm-up times them as the engine runs them (between buffers where
   * the SIMD passes can), and after the switch they keep the scalar bits.
   */
  @ParameterizedTest
  @EnumSource(
      value = Op.class,
      names = {"RMS_NORM", "LAYER_NORM", "SOFTMAX"})
  void wideRowsSwitchWithTheSameBits(Op op) {
    SimdWarmUp warmUp = slowedWarmUp(NO_DEADLINE);
    long seed = TestSeeds.seeds()[2];
    Random random = new Random(TestSeeds.mix(seed, op.ordinal(), 1031));
    Normalization normalization = Normalization.of(op);
    float[] rows = randomRows(random, 64 * 1031);
    try (CpuEngine warming = new CpuEngine(1, RowPassSelection.VECTOR, warmUp);
        CpuEngine scalar = new CpuEngine(1, ScalarRowPasses.INSTANCE)) {
      float[] expected = run(scalar, normalization, rows, 1031);
      awaitWhileRunning(
          () -> warmUp.runsSimd(op, FLOAT32), () -> run(warming, normalization, rows, 1031));
      assertThat(run(warming, normalization, rows, 1031))
          .as("seed %d, after the switch", seed)
          .isEqualTo(expected);
    }
  }

  @Test
  void simdPassesThatNeverWinLeaveTheOpScalar() {
    RowPasses slow = slowed(ScalarRowPasses.INSTANCE, TimeUnit.MILLISECONDS.toNanos(1));
    SimdWarmUp warmUp =
        new SimdWarmUp(slow, ScalarRowPasses.INSTANCE, TimeUnit.MILLISECONDS.toNanos(300));
    Normalization normalization = Normalization.of(Op.SOFTMAX);
    float[] rows = randomRows(new Random(TestSeeds.seeds()[0]), 64 * 32);
    try (CpuEngine warming = new CpuEngine(1, slow, warmUp)) {
      awaitWhileRunning(
          () -> warmUp.settledScalar(Op.SOFTMAX, FLOAT32),
          () -> run(warming, normalization, rows, 32));
      assertThat(warmUp.runsSimd(Op.SOFTMAX, FLOAT32)).isFalse();
    }
  }

  /** The SIMD passes against scalar ones slowed by 0.2 ms a call. */
  private static SimdWarmUp slowedWarmUp(long deadlineNanos) {
    return new SimdWarmUp(
        RowPassSelection.VECTOR,
        slowed(ScalarRowPasses.INSTANCE, TimeUnit.MICROSECONDS.toNanos(200)),
        deadlineNanos);
  }

  /** Runs {@code work} until {@code condition} holds, for at most a minute. */
  private static void awaitWhileRunning(BooleanSupplier condition, Runnable work) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      work.run();
    }
    assertThat(condition.getAsBoolean()).as("within a minute").isTrue();
  }

  /** {@code passes}, each call at least {@code nanos} slower. */
  private static RowPasses slowed(RowPasses passes, long nanos) {
    return (RowPasses)
        Proxy.newProxyInstance(
            RowPasses.class.getClassLoader(),
            new Class<?>[] {RowPasses.class},
            (proxy, method, arguments) -> {
              if (!method.getName().equals("description")) {
                long until = System.nanoTime() + nanos;
                for (long left = nanos; left > 0; left = until - System.nanoTime()) {
                  LockSupport.parkNanos(left);
                }
              }
              try {
                return method.invoke(passes, arguments);
              } catch (InvocationTargetException failure) {
                throw failure.getCause();
              }
            });
  }

  private static float[] run(
      CpuEngine engine, Normalization normalization, float[] values, int width) {
    ByteBuffer input = direct(values.length * Float.BYTES);
    input.asFloatBuffer().put(values);
    ByteBuffer output = direct(values.length * Float.BYTES);
    engine.normalize(
        normalization,
        RowBatch.fixedWidth(ElementType.FLOAT32, values.length / width, width, input, output));
    float[] result = new float[values.length];
    output.asFloatBuffer().get(result);
    return result;
  }

  private static float[] randomRows(Random random, int elements) {
    float[] values = new float[elements];
    for (int index = 0; index < elements; index++) {
      values[index] = (float) (random.nextGaussian() * 3);
    }
    return values;
  }

  private static ByteBuffer direct(int bytes) {
    return ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }
}

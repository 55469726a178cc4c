package io.embednorm.arrow;

import static io.embednorm.engine.CausalConvolutionReference.firstOutsideBound;
import static io.embednorm.engine.CausalConvolutionReference.randomKernel;
import static io.embednorm.engine.CausalConvolutionReference.randomSequence;
import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;

/**
 * {@link ArrowNormalizer#causalConv} on real vectors and a real allocator: rows of several lengths
 * with null and empty rows, checked row by row against the float64 reference; each length goes to
 * the engine as one batch; a GPU fault reruns the call on the CPU engine; auto keeps a small call
 * on the CPU. The GPU here is a stand-in that runs the engine's default loops.
 */
class ArrowNormalizerConvolutionTest {
  private static final long SEED = TestSeeds.seeds()[0];
  private static final int CHANNELS = 70;
  private static final int KERNEL_STEPS = 40;

  /** Steps a row: -1 a null row, -2 a row with a null element. */
  private static final int[] LENGTHS = {5, 0, 40, -1, 5, -2, 40, 1, 5, 33, 36, 4};

  @Test
  void theCpuEngineConvolvesRowsOfMixedLengthsAndKeepsNullAndEmptyRows() {
    System.out.println("ArrowNormalizerConvolutionTest seed " + SEED);
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      checkAgainstReference(allocator, cpu, new Random(SEED), Engines.cpu());
    }
  }

  @Test
  void aGpuTakesOneBatchALengthAndAFaultRerunsTheCallOnTheCpu() {
    try (BufferAllocator allocator = new RootAllocator()) {
      ConvolutionStandIn gpu = new ConvolutionStandIn();
      try (ArrowNormalizer normalizer = normalizerOn(allocator, gpu, AutoCallRule.NONE)) {
        checkAgainstReference(allocator, normalizer, new Random(SEED + 1), Engines.cpu());
        assertThat(gpu.batches)
            .as("rows padded to the longest of near lengths: 40, 40, 36, 33; 5, 5, 5, 4; 1")
            .containsExactly("heap 4", "heap 4", "heap 1");
        gpu.failing = true;
        NormalizationMetrics metrics = new NormalizationMetrics();
        checkAgainstReference(allocator, normalizer, new Random(SEED + 2), Engines.cpu(), metrics);
        assertThat(gpu.calls.get()).as("the failed call's first batch").isEqualTo(4);
        assertThat(metrics.calls()).isEqualTo(1);
        assertThat(metrics.rows()).isEqualTo(LENGTHS.length);
        assertThat(metrics.cpuFallbackCalls()).isEqualTo(1);
        assertThat(metrics.cpuFallbackReason()).contains("told to fail");
      }
    }
  }

  /**
   * With pinned memory for its staging (here C-heap blocks counted as pinned, filled with NaN
   * bytes), a GPU gets every row through the staging slots in direct buffers, the padding zeroed (a
   * NaN there would send a GPU's rows to the plain multiply-adds, other bits), every row with the
   * bits it has alone, every slot back in the pool when the call returns and freed with the
   * normalizer.
   */
  @Test
  void rowsGoThroughPinnedStagingSlotsOnAGpu() {
    CountingHostMemory memory = new CountingHostMemory();
    memory.poisonNewBlocks();
    StagingPool staging = new StagingPool(memory, 1L << 20, 8L << 20);
    try (BufferAllocator allocator = new RootAllocator()) {
      ConvolutionStandIn gpu = new ConvolutionStandIn();
      try (ArrowNormalizer normalizer = stagedNormalizerOn(allocator, gpu, staging)) {
        checkAgainstReference(allocator, normalizer, new Random(SEED + 5), Engines.cpu());
        assertThat(gpu.batches).containsExactlyInAnyOrder("direct 4", "direct 4", "direct 1");
        assertThat(gpu.sawNonFinite).as("a NaN in a batch: padding not zeroed").isFalse();
        assertThat(staging.slotsInUse()).as("slots taken after the call").isZero();
        assertThat(memory.allocatedBytes()).as("pinned bytes pooled").isPositive();
      }
    }
    assertThat(memory.allocatedBytes()).as("pinned bytes after the normalizer closed").isZero();
  }

  /**
   * Slots that hold 16 rows: a column of 2,300 rows goes through 144 staged batches, filled and
   * drained on the copy threads while the stand-in convolves earlier ones, with null rows between;
   * every row within the float64 bound, bit for bit the row convolved alone, and every slot back. A
   * stand-in that fails its 40th call fails the call, with every slot back.
   */
  @Test
  void manyStagedBatchesKeepEveryRowAndGiveEverySlotBack() {
    int steps = 64;
    int channels = 16;
    int rows = 2300;
    long seed = SEED + 6;
    Random random = new Random(seed);
    System.out.println("manyStagedBatches seed " + seed);
    float[][] w = randomKernel(random, channels, steps);
    CountingHostMemory memory = new CountingHostMemory();
    memory.poisonNewBlocks();
    // 16 rows of 4 KiB a slot
    StagingPool staging = new StagingPool(memory, 64L << 10, 1L << 20);
    ConvolutionStandIn gpu = new ConvolutionStandIn();
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = stagedNormalizerOn(allocator, gpu, staging);
        NormalizationEngine cpu = Engines.cpu()) {
      float[][] sequences = new float[rows][];
      try (FixedSizeListVector input =
              fixedColumn(allocator, random, sequences, steps, channels, new int[] {0, 17, 1500});
          FieldVector output = normalizer.causalConv(input, ConvolutionKernel.of(w), 0.25f)) {
        Float4Vector out =
            (Float4Vector)
                ((FixedSizeListVector) ((FixedSizeListVector) output).getDataVector())
                    .getDataVector();
        int floats = steps * channels;
        for (int row = 0; row < rows; row++) {
          float[] got = new float[floats];
          for (int i = 0; i < floats; i++) {
            got[i] = out.getDataBuffer().getFloat(4L * (row * floats + i));
          }
          if (sequences[row] == null) {
            assertThat(output.isNull(row)).as("row %d", row).isTrue();
            assertThat(got).as("null row %d", row).containsOnly(0f);
            continue;
          }
          assertThat(firstOutsideBound(w, 0.25f, sequences[row], steps, got))
              .as("seed %d, row %d", seed, row)
              .isEqualTo(-1);
          float[] alone = new float[floats];
          cpu.causalConvolution(
              ConvolutionKernel.of(w),
              0.25f,
              FloatBuffer.wrap(sequences[row]),
              1,
              steps,
              FloatBuffer.wrap(alone));
          assertThat(got).as("row %d against the row alone", row).isEqualTo(alone);
        }
      }
      assertThat(gpu.batches).hasSize((rows - 3 + 15) / 16).allMatch(b -> b.startsWith("direct"));
      assertThat(gpu.sawNonFinite).isFalse();
      assertThat(staging.slotsInUse()).isZero();

      gpu.failAtCall = gpu.calls.get() + 40;
      float[][] again = new float[rows][];
      NormalizationMetrics metrics = new NormalizationMetrics();
      try (FixedSizeListVector input =
              fixedColumn(allocator, random, again, steps, channels, new int[0]);
          FieldVector output = normalizer.causalConv(input, ConvolutionKernel.of(w), 0f, metrics);
          FieldVector onCpu =
              ArrowConvolution.causalConv(input, ConvolutionKernel.of(w), 0f, allocator)) {
        assertThat(metrics.cpuFallbackCalls()).as("a GPU fault on the engine thread").isEqualTo(1);
        assertThat(metrics.cpuFallbackReason()).contains("told to fail call");
        assertThat(values(output)).as("the call rerun on the CPU engine").isEqualTo(values(onCpu));
      }
      assertThat(staging.slotsInUse()).as("slots taken after a failed call").isZero();
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
    assertThat(memory.allocatedBytes()).isZero();
  }

  /** A sequence wider than a slot goes through a slot of its own, freed after it. */
  @Test
  void aSequenceWiderThanASlotTakesASlotOfItsOwn() {
    CountingHostMemory memory = new CountingHostMemory();
    StagingPool staging = new StagingPool(memory, 4L << 10, 64L << 10);
    try (BufferAllocator allocator = new RootAllocator()) {
      ConvolutionStandIn gpu = new ConvolutionStandIn();
      try (ArrowNormalizer normalizer = stagedNormalizerOn(allocator, gpu, staging)) {
        // 40 steps of 70 channels: 11,200 bytes a row, more than a slot's 4 KiB
        checkAgainstReference(allocator, normalizer, new Random(SEED + 7), Engines.cpu());
        assertThat(gpu.batches).contains("direct 1").allMatch(b -> b.startsWith("direct"));
        assertThat(staging.outstandingBytes())
            .as("pooled slots of 16 KiB only: no wide slot (24 KiB) kept")
            .isLessThanOrEqualTo(3L * 16384)
            .matches(bytes -> bytes % 16384 == 0);
      }
    }
    assertThat(memory.allocatedBytes()).isZero();
  }

  /**
   * Pinned memory the process cannot allocate for a slot: the call reruns on the CPU engine (as for
   * a GPU out of memory), with its bits, instead of failing.
   */
  @Test
  void noPinnedMemoryForASlotRerunsTheCallOnTheCpu() {
    CountingHostMemory memory = new CountingHostMemory();
    memory.refuseAllocations();
    StagingPool staging = new StagingPool(memory, 1L << 20, 8L << 20);
    try (BufferAllocator allocator = new RootAllocator()) {
      ConvolutionStandIn gpu = new ConvolutionStandIn();
      try (ArrowNormalizer normalizer = stagedNormalizerOn(allocator, gpu, staging)) {
        NormalizationMetrics metrics = new NormalizationMetrics();
        checkAgainstReference(allocator, normalizer, new Random(SEED + 8), Engines.cpu(), metrics);
        assertThat(gpu.calls.get()).isZero();
        assertThat(metrics.cpuFallbackCalls()).isEqualTo(1);
        assertThat(metrics.cpuFallbackReason()).contains("Cannot stage");
      }
    }
    assertThat(memory.allocatedBytes()).isZero();
  }

  /** The value bytes of a column of sequences, as floats' raw bits. */
  private static int[] values(FieldVector sequences) {
    Float4Vector values =
        (Float4Vector)
            ((FixedSizeListVector) ((FixedSizeListVector) sequences).getDataVector())
                .getDataVector();
    int[] bits = new int[values.getValueCount()];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = values.getDataBuffer().getInt(4L * i);
    }
    return bits;
  }

  private static ArrowNormalizer stagedNormalizerOn(
      BufferAllocator allocator, NormalizationEngine gpu, StagingPool staging) {
    return new ArrowNormalizer(
        allocator,
        DeviceEngines.ofGpus(List.of(gpu), "the test engine", List.of(staging)),
        ArrowNormalizer.DEFAULT_CHUNK_BYTES,
        1L << 20,
        AutoCallRule.NONE);
  }

  @Test
  void autoKeepsASmallCallOnTheCpu() {
    try (BufferAllocator allocator = new RootAllocator()) {
      ConvolutionStandIn gpu = new ConvolutionStandIn();
      try (ArrowNormalizer auto =
          normalizerOn(allocator, gpu, new AutoCallRule(1L << 20, 0, Integer.MAX_VALUE, 1))) {
        NormalizationMetrics metrics = new NormalizationMetrics();
        checkAgainstReference(allocator, auto, new Random(SEED + 3), Engines.cpu(), metrics);
        assertThat(gpu.calls.get()).isZero();
        assertThat(metrics.smallCallsOnCpu()).isEqualTo(1);
        assertThat(metrics.cpuFallbackCalls()).isZero();
      }
    }
  }

  private static ArrowNormalizer normalizerOn(
      BufferAllocator allocator, NormalizationEngine gpu, AutoCallRule rule) {
    return new ArrowNormalizer(
        allocator,
        DeviceEngines.ofGpus(List.of(gpu), "the test engine"),
        ArrowNormalizer.DEFAULT_CHUNK_BYTES,
        1L << 20,
        rule);
  }

  /**
   * Convolves a column of {@link #LENGTHS} rows with nulls and checks every row against the float64
   * reference and, bit for bit, against the row convolved alone on {@code alone} (which this
   * closes): batching and padding change no bit.
   */
  static void checkAgainstReference(
      BufferAllocator allocator,
      ArrowNormalizer normalizer,
      Random random,
      NormalizationEngine alone) {
    checkAgainstReference(allocator, normalizer, random, alone, new NormalizationMetrics());
  }

  /** As the other, the call's metrics added to {@code metrics}. */
  static void checkAgainstReference(
      BufferAllocator allocator,
      ArrowNormalizer normalizer,
      Random random,
      NormalizationEngine alone,
      NormalizationMetrics metrics) {
    float[][] w = randomKernel(random, CHANNELS, KERNEL_STEPS);
    float eps = 0.5f;
    List<float[]> rows = new ArrayList<>();
    try (ListVector input = ListVector.empty("tokens", allocator)) {
      FixedSizeListVector steps =
          (FixedSizeListVector)
              input
                  .addOrGetVector(FieldType.nullable(new ArrowType.FixedSizeList(CHANNELS)))
                  .getVector();
      steps.addOrGetVector(
          FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
      Float4Vector values = (Float4Vector) steps.getDataVector();
      int written = 0;
      for (int row = 0; row < LENGTHS.length; row++) {
        if (LENGTHS[row] == -1) {
          input.setNull(row);
          rows.add(null);
          continue;
        }
        int count = LENGTHS[row] == -2 ? 3 : LENGTHS[row];
        float[] sequence = randomSequence(random, count, CHANNELS);
        input.startNewValue(row);
        for (int i = 0; i < sequence.length; i++) {
          steps.setNotNull(written + i / CHANNELS);
          values.setSafe(written * CHANNELS + i, sequence[i]);
        }
        if (LENGTHS[row] == -2) {
          values.setNull(written * CHANNELS + 7);
        }
        written += count;
        input.endValue(row, count);
        rows.add(LENGTHS[row] == -2 ? null : sequence);
      }
      values.setValueCount(written * CHANNELS);
      steps.setValueCount(written);
      input.setValueCount(LENGTHS.length);
      try (NormalizationEngine closed = alone;
          FieldVector output =
              normalizer.causalConv(input, ConvolutionKernel.of(w), eps, metrics)) {
        ListVector list = (ListVector) output;
        Float4Vector out =
            (Float4Vector) ((FixedSizeListVector) list.getDataVector()).getDataVector();
        for (int row = 0; row < LENGTHS.length; row++) {
          if (rows.get(row) == null) {
            assertThat(list.isNull(row)).as("row %d", row).isTrue();
            continue;
          }
          int first = list.getElementStartIndex(row);
          int count = list.getElementEndIndex(row) - first;
          float[] sequence = rows.get(row);
          assertThat(count * CHANNELS).as("row %d", row).isEqualTo(sequence.length);
          float[] got = new float[sequence.length];
          for (int i = 0; i < got.length; i++) {
            got[i] = out.get(first * CHANNELS + i);
          }
          assertThat(firstOutsideBound(w, eps, sequence, count, got))
              .as("seed %d, row %d", SEED, row)
              .isEqualTo(-1);
          float[] single = new float[sequence.length];
          alone.causalConvolution(
              ConvolutionKernel.of(w),
              eps,
              FloatBuffer.wrap(sequence),
              1,
              count,
              FloatBuffer.wrap(single));
          assertThat(got).as("row %d against the row alone", row).isEqualTo(single);
        }
      }
    }
    assertThat(allocator.getAllocatedMemory()).as("bytes after the vectors closed").isZero();
  }

  /**
   * A fixed-size column whose long runs of rows go to the engine in place (slices of the Arrow
   * buffers) and whose short runs between null rows are gathered into one batch; twice on one
   * normalizer, so that the second call's output values come from the pool the first one filled:
   * its null rows must read as zeros with their validity bits clear.
   */
  @Test
  void longRunsGoInPlaceShortOnesAreGatheredAndNullRowsAreZeros() {
    int steps = 64;
    int channels = 16;
    int rows = 2300;
    Random random = new Random(SEED + 4);
    System.out.println("longRunsGoInPlace seed " + (SEED + 4));
    float[][] w = randomKernel(random, channels, steps);
    ConvolutionStandIn gpu = new ConvolutionStandIn();
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer normalizer = normalizerOn(allocator, gpu, AutoCallRule.NONE)) {
      int[][] nullRows = {{0, 1100, 1101, 2299}, {5, 1500}};
      List<List<String>> expected = // sequences a batch
          List.of(List.of("direct 1099", "direct 1197"), List.of("direct 1494", "heap 804"));
      for (int call = 0; call < nullRows.length; call++) {
        gpu.batches.clear();
        float[][] sequences = new float[rows][];
        try (FixedSizeListVector input =
            fixedColumn(allocator, random, sequences, steps, channels, nullRows[call])) {
          try (FieldVector output = normalizer.causalConv(input, ConvolutionKernel.of(w), 0f)) {
            FixedSizeListVector stepsOut =
                (FixedSizeListVector) ((FixedSizeListVector) output).getDataVector();
            Float4Vector out = (Float4Vector) stepsOut.getDataVector();
            int floats = steps * channels;
            for (int row = 0; row < rows; row++) {
              float[] got = new float[floats];
              for (int i = 0; i < floats; i++) {
                got[i] = out.getDataBuffer().getFloat(4L * (row * floats + i));
              }
              if (sequences[row] == null) {
                assertThat(output.isNull(row)).as("call %d, row %d", call, row).isTrue();
                assertThat(got).as("call %d, null row %d", call, row).containsOnly(0f);
                assertThat(out.isNull(row * floats)).isTrue();
                assertThat(stepsOut.isNull(row * steps)).isTrue();
                continue;
              }
              assertThat(output.isNull(row)).isFalse();
              assertThat(out.isNull(row * floats + floats - 1)).isFalse();
              assertThat(firstOutsideBound(w, 0f, sequences[row], steps, got))
                  .as("seed %d, call %d, row %d", SEED + 4, call, row)
                  .isEqualTo(-1);
            }
          }
        }
        assertThat(gpu.batches).as("call %d", call).isEqualTo(expected.get(call));
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  /** A fixed-size column of random sequences, null at {@code nullRows}; fills {@code sequences}. */
  private static FixedSizeListVector fixedColumn(
      BufferAllocator allocator,
      Random random,
      float[][] sequences,
      int steps,
      int channels,
      int[] nullRows) {
    FixedSizeListVector input = FixedSizeListVector.empty("tokens", steps, allocator);
    FixedSizeListVector stepVector =
        (FixedSizeListVector)
            input
                .addOrGetVector(FieldType.nullable(new ArrowType.FixedSizeList(channels)))
                .getVector();
    stepVector.addOrGetVector(
        FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    Float4Vector values = (Float4Vector) stepVector.getDataVector();
    int rows = sequences.length;
    for (int row = 0; row < rows; row++) {
      float[] sequence = randomSequence(random, steps, channels);
      for (int t = 0; t < steps; t++) {
        stepVector.setNotNull(row * steps + t);
      }
      for (int i = 0; i < sequence.length; i++) {
        values.setSafe(row * steps * channels + i, sequence[i]);
      }
      input.setNotNull(row);
      sequences[row] = sequence;
    }
    for (int row : nullRows) {
      input.setNull(row);
      sequences[row] = null;
    }
    values.setValueCount(rows * steps * channels);
    stepVector.setValueCount(rows * steps);
    input.setValueCount(rows);
    return input;
  }

  /** A GPU stand-in for convolutions: counts the batches, runs the default loops, or fails. */
  private static final class ConvolutionStandIn implements NormalizationEngine {
    final AtomicInteger calls = new AtomicInteger();
    final List<String> batches = Collections.synchronizedList(new ArrayList<>());
    volatile boolean failing;
    volatile int failAtCall = -1;
    volatile boolean sawNonFinite;

    @Override
    public Device device() {
      return Device.GPU;
    }

    @Override
    public String description() {
      return "convolution stand-in";
    }

    @Override
    public int threads() {
      return 1;
    }

    @Override
    public void normalize(Normalization normalization, RowBatch batch) {
      throw new UnsupportedOperationException("convolutions only");
    }

    @Override
    public void causalConvolution(
        ConvolutionKernel kernel,
        float eps,
        FloatBuffer sequences,
        int count,
        int steps,
        FloatBuffer output) {
      int call = calls.incrementAndGet();
      if (call == failAtCall) {
        throw new GpuFaultException("Cannot convolve on the stand-in: told to fail call " + call);
      }
      batches.add((sequences.isDirect() && output.isDirect() ? "direct " : "heap ") + count);
      for (int i = 0; i < sequences.capacity(); i++) {
        sawNonFinite |= !Float.isFinite(sequences.get(i));
      }
      if (failing) {
        throw new GpuFaultException("Cannot convolve on the stand-in: told to fail");
      }
      NormalizationEngine.super.causalConvolution(kernel, eps, sequences, count, steps, output);
    }

    @Override
    public void close() {}
  }
}

package io.embednorm.arrow;

import static io.embednorm.engine.CausalConvolutionReference.firstOutsideBound;
import static io.embednorm.engine.CausalConvolutionReference.randomKernel;
import static io.embednorm.engine.CausalConvolutionReference.randomSequence;
import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import java.util.ArrayList;
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
  private static final int[] LENGTHS = {5, 0, 40, -1, 5, -2, 40, 1, 5, 33};

  @Test
  void theCpuEngineConvolvesRowsOfMixedLengthsAndKeepsNullAndEmptyRows() {
    System.out.println("ArrowNormalizerConvolutionTest seed " + SEED);
    try (BufferAllocator allocator = new RootAllocator();
        ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU)) {
      checkAgainstReference(allocator, cpu, new Random(SEED));
    }
  }

  @Test
  void aGpuTakesOneBatchALengthAndAFaultRerunsTheCallOnTheCpu() {
    try (BufferAllocator allocator = new RootAllocator()) {
      ConvolutionStandIn gpu = new ConvolutionStandIn();
      try (ArrowNormalizer normalizer = normalizerOn(allocator, gpu, AutoCallRule.NONE)) {
        checkAgainstReference(allocator, normalizer, new Random(SEED + 1));
        assertThat(gpu.calls.get()).as("batches: lengths 1, 5, 33 and 40").isEqualTo(4);
        gpu.failing = true;
        checkAgainstReference(allocator, normalizer, new Random(SEED + 2));
        assertThat(gpu.calls.get()).as("the failed call's first batch").isEqualTo(5);
      }
    }
  }

  @Test
  void autoKeepsASmallCallOnTheCpu() {
    try (BufferAllocator allocator = new RootAllocator()) {
      ConvolutionStandIn gpu = new ConvolutionStandIn();
      try (ArrowNormalizer auto =
          normalizerOn(allocator, gpu, new AutoCallRule(1L << 20, 0, Integer.MAX_VALUE, 1))) {
        checkAgainstReference(allocator, auto, new Random(SEED + 3));
        assertThat(gpu.calls.get()).isZero();
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

  /** Convolves a column of {@link #LENGTHS} rows with nulls and checks every row. */
  static void checkAgainstReference(
      BufferAllocator allocator, ArrowNormalizer normalizer, Random random) {
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
      try (FieldVector output = normalizer.causalConv(input, ConvolutionKernel.of(w), eps)) {
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
        }
      }
    }
    assertThat(allocator.getAllocatedMemory()).as("bytes after the vectors closed").isZero();
  }

  /** A GPU stand-in for convolutions: counts the batches, runs the default loops, or fails. */
  private static final class ConvolutionStandIn implements NormalizationEngine {
    final AtomicInteger calls = new AtomicInteger();
    volatile boolean failing;

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
        float[] sequences,
        int count,
        int steps,
        float[] output) {
      calls.incrementAndGet();
      if (failing) {
        throw new GpuFaultException("Cannot convolve on the stand-in: told to fail");
      }
      NormalizationEngine.super.causalConvolution(kernel, eps, sequences, count, steps, output);
    }

    @Override
    public void close() {}
  }
}

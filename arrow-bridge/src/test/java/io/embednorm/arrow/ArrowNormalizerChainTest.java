package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Chains of normalizations, per-call metrics and the builder's settings, on the CPU engine. */
class ArrowNormalizerChainTest {
  private static final long SEED = Long.getLong("embednorm.test.seed", System.nanoTime());

  private BufferAllocator allocator;

  @BeforeEach
  void openAllocator() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void closeAllocator() {
    allocator.close();
  }

  @Test
  void aChainIsTheStepsOneAfterAnotherBitForBit() {
    Random random = new Random(SEED);
    double[] gamma = new double[40];
    for (int index = 0; index < gamma.length; index++) {
      gamma[index] = 0.5 + random.nextDouble();
    }
    List<Normalization> steps =
        List.of(
            Normalization.of(Op.RMS_NORM),
            Normalization.of(Op.LAYER_NORM).withWeight(gamma),
            Normalization.of(Op.SOFTMAX));
    for (ElementType type : new ElementType[] {ElementType.FLOAT32, ElementType.FLOAT16}) {
      Double[][] input = TestColumns.gaussianRows(random, type, 300, row -> 40);
      input[7] = null;
      input[9][3] = null;
      try (ArrowNormalizer normalizer =
              ArrowNormalizer.builder(allocator).device(DeviceChoice.CPU).build();
          FieldVector vector = TestColumns.build(allocator, "embedding", Layout.LIST, type, input);
          FieldVector chained = normalizer.normalize(vector, steps, new NormalizationMetrics());
          FieldVector first = normalizer.normalize(vector, steps.get(0));
          FieldVector second = normalizer.normalize(first, steps.get(1));
          FieldVector third = normalizer.normalize(second, steps.get(2))) {
        Double[][] output = TestColumns.read(chained);
        assertThat(output).as("seed %d, %s", SEED, type).isDeepEqualTo(TestColumns.read(third));
        assertThat(output[7]).isNull();
        assertThat(output[9]).isNull();
        for (Double[] row : output) {
          if (row != null) {
            double sum = 0;
            for (Double value : row) {
              sum += value;
            }
            assertThat(sum).as("seed %d: softmax sums to 1", SEED).isCloseTo(1.0, within(type));
          }
        }
      }
    }
  }

  @Test
  void metricsCountTheCallsRowsAndCpuTime() {
    Double[][] input =
        TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, 50, row -> 8);
    NormalizationMetrics metrics = new NormalizationMetrics();
    try (ArrowNormalizer normalizer =
            ArrowNormalizer.builder(allocator).device(DeviceChoice.CPU).build();
        FieldVector vector =
            TestColumns.build(
                allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input)) {
      normalizer.normalize(vector, List.of(Normalization.of(Op.L2_NORMALIZE)), metrics).close();
      normalizer.normalize(vector, List.of(Normalization.of(Op.RMS_NORM)), metrics).close();
    }
    assertThat(metrics.calls()).isEqualTo(2);
    assertThat(metrics.rows()).isEqualTo(100);
    assertThat(metrics.cpuNanos()).isPositive();
    assertThat(metrics.wallNanos()).isGreaterThanOrEqualTo(metrics.cpuNanos());
    assertThat(metrics.bytesUploaded() + metrics.bytesDownloaded() + metrics.chunks()).isZero();
    NormalizationMetrics total = new NormalizationMetrics();
    total.add(metrics);
    total.add(metrics);
    assertThat(total.rows()).isEqualTo(200);
    assertThat(total.toString()).contains("calls=4", "rows=200");
  }

  @Test
  void anEmptyChainIsRefused() {
    Double[][] input = {{1.0, 2.0}};
    try (ArrowNormalizer normalizer =
            ArrowNormalizer.builder(allocator).device(DeviceChoice.CPU).build();
        FieldVector vector =
            TestColumns.build(allocator, "embedding", Layout.LIST, ElementType.FLOAT32, input)) {
      assertThatThrownBy(() -> normalizer.normalize(vector, List.of(), new NormalizationMetrics()))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot normalize column 'embedding': no normalization was given");
    }
  }

  @Test
  void builderSettingsAreChecked() {
    assertThatThrownBy(() -> ArrowNormalizer.builder(allocator).gpuChunkBytes(0))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot set the GPU chunk size to 0 bytes: it must be between 1 and 2147483647");
    assertThatThrownBy(() -> ArrowNormalizer.builder(allocator).gpuConcurrency(0))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot use GPU 0: concurrent users must be at least 1, got 0");
    assertThatThrownBy(() -> ArrowNormalizer.builder(allocator).gpuOrdinal(-1))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot use GPU -1: ordinals start at 0");
  }

  @Test
  void pinnedAllocatorsNeedAGpuAndSayWhy() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why != null, "a GPU is usable here");
    assertThatThrownBy(() -> PinnedAllocators.newRootAllocator(1 << 20))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot create a pinned allocator: " + why);
  }

  private static org.assertj.core.data.Offset<Double> within(ElementType type) {
    return org.assertj.core.data.Offset.offset(type == ElementType.FLOAT16 ? 2e-2 : 1e-5);
  }
}

package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.arrow.internal.PinnedOutputs;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A GPU call on an ordinary allocator gets its output's elements in pinned memory (written by the
 * device in place), accounted to the caller's allocator and returned to the pinned pool when the
 * caller closes the output; over {@code embednorm.pinnedOutputBytes}, the output comes from the
 * allocator as before. The GPU is the host-copy stand-in; results are checked against the float64
 * reference.
 */
class PinnedOutputsTest {
  private static final long SEED = TestSeeds.seeds()[0];
  private static final int WIDTH = 256;
  private static final int ROWS = 2048; // 2 MiB of float32, above PinnedOutputs.SMALLEST_BYTES
  private static final Normalization STEP = Normalization.of(Op.LAYER_NORM);

  private RootAllocator allocator;
  private CountingHostMemory memory;
  private ArrowNormalizer gpu;

  @BeforeEach
  void open() {
    System.out.println("PinnedOutputsTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
    allocator = new RootAllocator();
    memory = new CountingHostMemory();
    gpu =
        new ArrowNormalizer(
            allocator,
            DeviceEngines.ofGpus(
                List.<NormalizationEngine>of(new HostCopyGpuEngine(SEED, 50)),
                "test",
                List.of(new StagingPool(memory, 1L << 20, 8L << 20))),
            ArrowNormalizer.DEFAULT_CHUNK_BYTES,
            1L << 20);
  }

  @AfterEach
  void close() {
    System.clearProperty(InternalSwitches.PINNED_OUTPUT_BYTES.name());
    gpu.close();
    assertThat(PinnedOutputs.outstandingBytes()).as("pinned output bytes").isZero();
    assertThat(memory.allocatedBytes()).as("pinned bytes after close").isZero();
    allocator.close(); // throws on a leak, failing the test
  }

  @Test
  void theOutputOfAnOrdinaryAllocatorIsPinnedAndGoesBackWhenClosed() {
    Double[][] input =
        TestColumns.gaussianRows(new Random(SEED), ElementType.FLOAT32, ROWS, row -> WIDTH);
    long bytes = (long) ROWS * WIDTH * Float.BYTES;
    try (FieldVector batch =
        TestColumns.build(allocator, "e", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input)) {
      long before = allocator.getAllocatedMemory();
      FieldVector output = gpu.normalize(batch, STEP);
      long address = ListColumn.elementsOf(output).getDataBuffer().memoryAddress();
      assertThat(memory.isPinned(address, bytes)).as("output elements pinned").isTrue();
      assertThat(PinnedOutputs.outstandingBytes()).isEqualTo(bytes);
      assertThat(allocator.getAllocatedMemory() - before)
          .as("the output is the caller's allocator's")
          .isGreaterThanOrEqualTo(bytes);
      ReferenceCheck.assertNormalized(
          STEP, ElementType.FLOAT32, input, TestColumns.read(output), "seed " + SEED);
      output.close();
      assertThat(PinnedOutputs.outstandingBytes()).isZero();
    }
  }

  @Test
  void overTheLimitTheOutputComesFromTheAllocator() {
    System.setProperty(InternalSwitches.PINNED_OUTPUT_BYTES.name(), "0");
    Double[][] input =
        TestColumns.gaussianRows(new Random(SEED + 1), ElementType.FLOAT32, ROWS, row -> WIDTH);
    try (FieldVector batch =
            TestColumns.build(allocator, "e", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input);
        FieldVector output = gpu.normalize(batch, STEP)) {
      long address = ListColumn.elementsOf(output).getDataBuffer().memoryAddress();
      assertThat(memory.isPinned(address, 4)).as("output elements pinned").isFalse();
      ReferenceCheck.assertNormalized(
          STEP, ElementType.FLOAT32, input, TestColumns.read(output), "seed " + SEED);
    }
  }
}

package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.arrow.internal.HostOutputs;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.util.Random;
import org.apache.arrow.memory.AllocationListener;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A CPU call on an ordinary allocator takes a large output's elements from the pool of {@link
 * HostOutputs}: accounted to the caller's allocator, back in the pool when the caller closes the
 * output, reused by the next call without any of the old contents showing (checked against the
 * float64 reference after poisoning the reused block), freed once no normalizer is open.
 */
class HostOutputsTest {
  private static final long SEED = TestSeeds.seeds()[0];
  private static final int WIDTH = 256;
  private static final int ROWS = 2048; // 2 MiB of float32, above HostOutputs.SMALLEST_BYTES
  private static final long BYTES = (long) ROWS * WIDTH * Float.BYTES;
  private static final Normalization STEP = Normalization.of(Op.RMS_NORM);

  private RootAllocator allocator;
  private ArrowNormalizer cpu;

  @BeforeEach
  void open() {
    System.out.println("HostOutputsTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
    allocator = new RootAllocator();
    cpu = ArrowNormalizer.builder(allocator).device(DeviceChoice.CPU).build();
  }

  @AfterEach
  void close() {
    System.clearProperty(InternalSwitches.HOST_OUTPUT_POOL_BYTES.name());
    cpu.close();
    if (HostOutputs.openNormalizers() == 0) {
      assertThat(HostOutputs.idleBytes())
          .as("idle bytes after the last normalizer closed")
          .isZero();
    }
    allocator.close(); // throws on a leak, failing the test
  }

  @Test
  void theNextCallReusesAClosedOutputsBlockAndNoneOfItsContentsShow() {
    Random random = new Random(SEED);
    Double[][] first = TestColumns.gaussianRows(random, ElementType.FLOAT32, ROWS, row -> WIDTH);
    Double[][] second = TestColumns.gaussianRows(random, ElementType.FLOAT32, ROWS, row -> WIDTH);
    for (int row = 0; row < ROWS; row += 7) {
      second[row] = null;
    }
    long address;
    try (FieldVector batch =
        TestColumns.build(allocator, "e", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, first)) {
      long before = allocator.getAllocatedMemory();
      FieldVector output = cpu.normalize(batch, STEP);
      ArrowBuf elements = ListColumn.elementsOf(output).getDataBuffer();
      address = elements.memoryAddress();
      assertThat(allocator.getAllocatedMemory() - before)
          .as("the output is the caller's allocator's")
          .isGreaterThanOrEqualTo(BYTES);
      ReferenceCheck.assertNormalized(
          STEP, ElementType.FLOAT32, first, TestColumns.read(output), "seed " + SEED);
      elements.setOne(0, BYTES); // NaN patterns everywhere, for the next call to overwrite
      output.close();
      assertThat(HostOutputs.idleBytes())
          .as("the block back in the pool")
          .isGreaterThanOrEqualTo(BYTES);
    }
    try (FieldVector batch =
            TestColumns.build(allocator, "e", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, second);
        FieldVector output = cpu.normalize(batch, STEP)) {
      ArrowBuf elements = ListColumn.elementsOf(output).getDataBuffer();
      assertThat(elements.memoryAddress()).as("the pooled block again").isEqualTo(address);
      ReferenceCheck.assertNormalized(
          STEP, ElementType.FLOAT32, second, TestColumns.read(output), "seed " + SEED);
      for (int row = 0; row < ROWS; row += 7) {
        for (int column = 0; column < WIDTH; column++) {
          assertThat(elements.getInt(((long) row * WIDTH + column) * Float.BYTES))
              .as("row %d (null), element %d: zeroed, not the old contents", row, column)
              .isZero();
        }
      }
    }
  }

  @Test
  void anOutputReleasedAfterTheLastNormalizerClosedIsFreedNotPooled() {
    assumeTrue(HostOutputs.openNormalizers() == 1, "another normalizer is open in this JVM");
    Double[][] input =
        TestColumns.gaussianRows(new Random(SEED + 2), ElementType.FLOAT32, ROWS, row -> WIDTH);
    try (FieldVector batch =
        TestColumns.build(allocator, "e", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input)) {
      FieldVector output = cpu.normalize(batch, STEP);
      cpu.close();
      assertThat(HostOutputs.openNormalizers()).isZero();
      output.close();
      assertThat(HostOutputs.idleBytes()).as("released with no normalizer open").isZero();
    }
  }

  @Test
  void aBlockWhoseAllocatorRefusesItGoesBackOnce() {
    long idle = HostOutputs.idleBytes();
    AllocationListener refusing =
        new AllocationListener() {
          @Override
          public void onAllocation(long size) {
            throw new IllegalStateException("refused by the test's listener");
          }
        };
    try (RootAllocator refuses = new RootAllocator(refusing, Long.MAX_VALUE)) {
      assertThatThrownBy(() -> HostOutputs.buffer(refuses, BYTES))
          .hasMessageContaining("refused by the test's listener");
    }
    assertThat(HostOutputs.idleBytes() - idle).as("the block pooled once").isEqualTo(BYTES);
    try (ArrowBuf first = HostOutputs.buffer(allocator, BYTES);
        ArrowBuf second = HostOutputs.buffer(allocator, BYTES)) {
      assertThat(first.memoryAddress()).isNotEqualTo(second.memoryAddress());
    }
  }

  @Test
  void smallOutputsAndAZeroLimitTakeTheCallersAllocator() {
    Random random = new Random(SEED + 1);
    Double[][] small = TestColumns.gaussianRows(random, ElementType.FLOAT32, 64, row -> WIDTH);
    try (FieldVector batch =
        TestColumns.build(allocator, "e", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, small)) {
      cpu.normalize(batch, STEP).close();
    }
    assertThat(HostOutputs.idleBytes()).as("a 64 KiB output is not pooled").isZero();
    System.setProperty(InternalSwitches.HOST_OUTPUT_POOL_BYTES.name(), "0");
    Double[][] large = TestColumns.gaussianRows(random, ElementType.FLOAT32, ROWS, row -> WIDTH);
    try (FieldVector batch =
            TestColumns.build(allocator, "e", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, large);
        FieldVector output = cpu.normalize(batch, STEP)) {
      ReferenceCheck.assertNormalized(
          STEP, ElementType.FLOAT32, large, TestColumns.read(output), "seed " + SEED);
    }
    assertThat(HostOutputs.idleBytes()).as("nothing pooled with the pool at 0").isZero();
  }
}

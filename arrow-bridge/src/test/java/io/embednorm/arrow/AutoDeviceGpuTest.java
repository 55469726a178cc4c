package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * Auto's size rules on a real GPU: a small Arrow file runs on the CPU engine without starting the
 * GPU and the summary's reason says why; with the file limit at 0 the same file runs on the GPU; a
 * small Arrow call of a GPU normalizer built under auto runs on the CPU engine, a large one on the
 * GPU; a large call on ordinary (not pinned) memory runs on the CPU engine when the staged rule
 * says so and on the GPU, staged, when it does not. Skipped where no GPU is usable.
 */
@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class AutoDeviceGpuTest {
  private static final long SEED = TestSeeds.seeds()[0];

  static boolean gpuUsable() {
    return Engines.gpuUnavailableReason() == null;
  }

  @BeforeAll
  static void requireGpu() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
  }

  @AfterEach
  void clearSwitches() {
    System.clearProperty(InternalSwitches.AUTO_GPU_MIN_FILE_BYTES.name());
    System.clearProperty(InternalSwitches.AUTO_STAGED_CPU_THREADS.name());
    System.clearProperty(InternalSwitches.AUTO_GPU_MIN_STAGED_CALL_BYTES.name());
  }

  @Test
  void aSmallFileRunsOnTheCpuUnderAutoAndSaysWhy(@TempDir Path folder) throws Exception {
    System.out.println("AutoDeviceGpuTest seed " + SEED);
    Path input = folder.resolve("small.arrow");
    try (RootAllocator allocator = new RootAllocator()) {
      TestFiles.write(
          allocator,
          input,
          new TestFiles.Shape(Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, 64, 2, 100, 0.1),
          new Random(SEED),
          ArrowFormat.FILE);
    }
    Normalization step = Normalization.of(Op.RMS_NORM);
    NormalizeResult small =
        ArrowFiles.normalizeFile(
            input, folder.resolve("cpu.arrow"), "embedding", step, DeviceChoice.AUTO, rows -> {});
    assertThat(small.device()).isEqualTo(Device.CPU);
    assertThat(small.deviceReason()).contains("embednorm.auto.gpuMinFileBytes");

    System.setProperty(InternalSwitches.AUTO_GPU_MIN_FILE_BYTES.name(), "0");
    NormalizeResult anySize =
        ArrowFiles.normalizeFile(
            input, folder.resolve("gpu.arrow"), "embedding", step, DeviceChoice.AUTO, rows -> {});
    assertThat(anySize.device()).isEqualTo(Device.GPU);
  }

  @Test
  void smallCallsOfAnAutoGpuNormalizerRunOnTheCpu() {
    Normalization step = Normalization.of(Op.L2_NORMALIZE);
    long limit = InternalSwitches.AUTO_GPU_MIN_CALL_BYTES.value();
    int width = 256;
    int smallRows = 4;
    int largeRows = (int) (limit / (width * Float.BYTES)) + 1;
    Random random = new Random(SEED + 1);
    try (RootAllocator allocator = PinnedAllocators.newRootAllocator(Long.MAX_VALUE);
        ArrowNormalizer auto = ArrowNormalizer.create(allocator, DeviceChoice.AUTO)) {
      assertThat(auto.device()).isEqualTo(Device.GPU);
      for (int rows : new int[] {smallRows, largeRows}) {
        Double[][] input =
            TestColumns.gaussianRows(random, ElementType.FLOAT32, rows, row -> width);
        NormalizationMetrics metrics = new NormalizationMetrics();
        try (FieldVector batch =
                TestColumns.build(
                    allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input);
            FieldVector output = auto.normalize(batch, List.of(step), metrics)) {
          boolean small = rows == smallRows;
          assertThat(auto.deviceFor(batch)).isEqualTo(small ? Device.CPU : Device.GPU);
          assertThat(metrics.smallCallsOnCpu()).as(metrics.toString()).isEqualTo(small ? 1 : 0);
          assertThat(metrics.chunks() > 0).as(metrics.toString()).isEqualTo(!small);
          ReferenceCheck.assertNormalized(
              step, ElementType.FLOAT32, input, TestColumns.read(output), rows + " rows");
        }
      }
    }
  }

  @Test
  void largeCallsOnOrdinaryMemoryFollowTheStagedRule() {
    Normalization step = Normalization.of(Op.RMS_NORM);
    int width = 768;
    int rows = (int) (InternalSwitches.AUTO_GPU_MIN_CALL_BYTES.value() / (width * Float.BYTES)) * 4;
    Random random = new Random(SEED + 2);
    Double[][] input = TestColumns.gaussianRows(random, ElementType.FLOAT32, rows, row -> width);
    for (String threads : new String[] {"1", String.valueOf(Integer.MAX_VALUE)}) {
      boolean onCpu = threads.equals("1");
      System.setProperty(InternalSwitches.AUTO_STAGED_CPU_THREADS.name(), threads);
      System.setProperty(InternalSwitches.AUTO_GPU_MIN_STAGED_CALL_BYTES.name(), "0");
      NormalizationMetrics metrics = new NormalizationMetrics();
      try (RootAllocator allocator = new RootAllocator();
          ArrowNormalizer auto = ArrowNormalizer.create(allocator, DeviceChoice.AUTO);
          FieldVector batch =
              TestColumns.build(
                  allocator, "embedding", Layout.FIXED_SIZE_LIST, ElementType.FLOAT32, input);
          FieldVector output = auto.normalize(batch, List.of(step), metrics)) {
        assertThat(auto.deviceFor(batch)).isEqualTo(onCpu ? Device.CPU : Device.GPU);
        assertThat(metrics.stagedCallsOnCpu()).as(metrics.toString()).isEqualTo(onCpu ? 1 : 0);
        assertThat(metrics.stagedBytes() > 0).as(metrics.toString()).isEqualTo(!onCpu);
        ReferenceCheck.assertNormalized(
            step, ElementType.FLOAT32, input, TestColumns.read(output), "threads " + threads);
      }
    }
  }
}

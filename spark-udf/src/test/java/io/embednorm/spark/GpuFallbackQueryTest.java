package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.InternalSwitches;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark query whose batches fail on the GPU, on CI: a JVM of its own ({@link FaultedGpuQuery})
 * whose GPU is {@link FaultingGpuProvider} (the CPU engine with each element's lowest bit flipped,
 * faulted through the CUDA engine's hook), so that the columnar operator's production fallback runs
 * as on a real GPU. A JVM of its own, because engines are found once per JVM: in this one the fake
 * would be every test's GPU.
 *
 * <p>Of 8 one-chunk batches in one task, call 3 fails with a GPU fault and calls 5 and 6 run out of
 * memory below the split floor: exactly those batches hold the CPU engine's bits, the operator's
 * {@code cpuFallbackBatches} is 3, one warning is logged for the task, every row is within the
 * float64 reference's bound, and the task's Arrow memory is back.
 */
class GpuFallbackQueryTest {
  @TempDir Path directory;

  @Test
  void faultedBatchesRunOnTheCpuEngineCountedInTheMetricWithOneWarning() throws Exception {
    long seed = TestData.SEED;
    String output =
        runQuery(
            seed,
            List.of(
                switchTo(InternalSwitches.FAULTS_FAIL_GPU_CALL.name(), "3"),
                switchTo(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK.name(), "5"),
                switchTo(InternalSwitches.FAULTS_OUT_OF_MEMORY_CHUNKS.name(), "2")));
    String result =
        output.lines().filter(line -> line.startsWith("RESULT ")).findFirst().orElse(null);
    assertThat(result).as("seed %d, the query's output:%n%s", seed, output).isNotNull();
    assertThat(result)
        .as("seed %d", seed)
        .isEqualTo(
            "RESULT cpuFallbackBatches=3 stagedBatches=8 numBatches=8 warnings=1 cpuBatches=[2, 4, 5]"
                + " otherBatches=[] offReference=0 taskBytes=0 openTaskAllocators=0");
    assertThat(output)
        .contains(
            "WARNING embednorm ran a batch of rms_norm on the CPU engine in task ",
            "GpuFaultException: Cannot run GPU call 3 (a chunk of 8 rows)");
  }

  private static String switchTo(String name, String value) {
    return "-D" + name + "=" + value;
  }

  /** Runs {@link FaultedGpuQuery} in a new JVM whose engines are the faulting GPU's. */
  private String runQuery(long seed, List<String> switches)
      throws IOException, InterruptedException {
    return TestGpuJvm.run(
        directory, FaultingGpuProvider.class, FaultedGpuQuery.class, switches, Long.toString(seed));
  }
}

package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.HostMemory;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.spi.EngineProvider;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
            FaultedGpuQuery.class,
            seed,
            List.of(
                switchTo(InternalSwitches.FAULTS_FAIL_GPU_CALL.name(), "3"),
                switchTo(InternalSwitches.FAULTS_OUT_OF_MEMORY_AT_CHUNK.name(), "5"),
                switchTo(InternalSwitches.FAULTS_OUT_OF_MEMORY_CHUNKS.name(), "2")));
    assertThat(resultLine(output, seed))
        .as("seed %d", seed)
        .isEqualTo(
            "RESULT cpuFallbackBatches=3 numBatches=8 warnings=1 cpuBatches=[2, 4, 5]"
                + " otherBatches=[] offReference=0 taskBytes=0 openTaskAllocators=0");
    assertThat(output)
        .contains(
            "WARNING embednorm ran a batch of rms_norm on the CPU engine in task ",
            "GpuFaultException: Cannot run GPU call 3 (a chunk of 8 rows)");
  }

  /**
   * {@code causal_conv} in the operator: GPU call 3 fails, so batch 2 holds the CPU engine's bits
   * (each batch one call), counted in {@code cpuFallbackBatches} with one warning naming the
   * function.
   */
  @Test
  void aFaultedConvolutionBatchRunsOnTheCpuEngineCountedWithOneWarning() throws Exception {
    long seed = TestData.SEED;
    String output =
        runQuery(
            FaultedConvolutionQuery.class,
            seed,
            List.of(switchTo(InternalSwitches.FAULTS_FAIL_GPU_CALL.name(), "3")));
    assertThat(resultLine(output, seed))
        .as("seed %d", seed)
        .isEqualTo(
            "RESULT cpuFallbackBatches=1 numBatches=8 warnings=1 cpuBatches=[2]"
                + " otherBatches=[] offReference=0 taskBytes=0 openTaskAllocators=0");
    assertThat(output)
        .contains(
            "WARNING embednorm ran a batch of causal_conv on the CPU engine in task ",
            "GpuFaultException: Cannot run GPU call 3 (causal_conv of 8 sequences)");
  }

  /** The query's {@code RESULT} line, which must be there. */
  private static String resultLine(String output, long seed) {
    String result =
        output.lines().filter(line -> line.startsWith("RESULT ")).findFirst().orElse(null);
    assertThat(result).as("seed %d, the query's output:%n%s", seed, output).isNotNull();
    return result;
  }

  private static String switchTo(String name, String value) {
    return "-D" + name + "=" + value;
  }

  /** Runs {@code main} in a new JVM whose engines are the faulting GPU's. */
  private String runQuery(Class<?> main, long seed, List<String> switches)
      throws IOException, InterruptedException {
    Path services = directory.resolve("META-INF").resolve("services");
    Files.createDirectories(services);
    Files.writeString(
        services.resolve(EngineProvider.class.getName()), FaultingGpuProvider.class.getName());
    Files.writeString(
        services.resolve(HostMemory.class.getName()), UnpinnedHostMemory.class.getName());
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!option.startsWith("-agentlib") && !option.startsWith("-javaagent")) {
        command.add(option);
      }
    }
    command.add("-Xmx1g");
    String logging = System.getProperty("log4j2.configurationFile");
    if (logging != null) {
      command.add("-Dlog4j2.configurationFile=" + logging);
    }
    command.addAll(switches);
    command.add("-cp");
    command.add(directory + File.pathSeparator + System.getProperty("java.class.path"));
    command.add(main.getName());
    command.add(Long.toString(seed));
    Path log = directory.resolve("query.log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean ended = process.waitFor(180, TimeUnit.SECONDS);
    if (!ended) {
      process.destroyForcibly();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(ended).as("the query's JVM ended; its output:%n%s", output).isTrue();
    assertThat(process.exitValue()).as("exit status; output:%n%s", output).isZero();
    return output;
  }
}

package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.TestSeeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The columnar operator's staged path on CI: in a JVM of its own ({@link StagedGpuQuery}) whose GPU
 * is arrow-bridge's {@link io.embednorm.arrow.HostCopyGpuEngine} (chunks on lane threads, out of
 * step), with staging slots of 1000 bytes (a batch takes several, a wide row one of its own) and
 * three of them, every op and a chain over float and double columns of fixed and ragged rows with
 * nulls, from on-heap and off-heap Spark vectors, in several batches each: every row holds the CPU
 * engine's bits with the test GPU's mark (each element's lowest bit flipped), every batch went
 * straight from Spark's vectors through the slots into the result vectors (none copied to Arrow),
 * and the executor's Arrow allocator never held a byte.
 */
class StagedColumnarTest {
  private static final Pattern CASE =
      Pattern.compile(
          "CASE (.+): seed=(-?\\d+) rows=(\\d+) mismatched=(\\d+) numBatches=(\\d+)"
              + " stagedBatches=(\\d+) bytesCopiedToArrow=(\\d+) cpuFallbackBatches=(\\d+)"
              + " numGpuChunks=(\\d+) stagedBytes=(\\d+) firstMismatch=(.*)");

  @TempDir Path directory;

  @Test
  void stagedBatchesGiveTheGpusBitsWithNoArrowMemory() throws Exception {
    long seed = TestSeeds.seeds()[TestSeeds.seeds().length - 1];
    System.out.println("StagedColumnarTest seed " + seed + " (-Dembednorm.test.seed to repeat)");
    Path tables = Files.createDirectories(directory.resolve("tables"));
    String output =
        TestGpuJvm.run(
            directory,
            HostCopyGpuProvider.class,
            StagedGpuQuery.class,
            List.of(
                "-D" + InternalSwitches.STAGING_SLOT_BYTES.name() + "=1000",
                "-D" + InternalSwitches.STAGING_POOL_BYTES.name() + "=6000"),
            Long.toString(seed),
            tables.toString());
    List<String> cases = output.lines().filter(line -> line.startsWith("CASE ")).toList();
    cases.forEach(System.out::println);
    assertThat(cases).as("the query's output:%n%s", output).hasSize(8);
    for (String line : cases) {
      Matcher found = CASE.matcher(line);
      assertThat(found.matches()).as(line).isTrue();
      String context = "seed " + seed + ", " + line;
      assertThat(Integer.parseInt(found.group(3))).as(context).isEqualTo(150);
      assertThat(Long.parseLong(found.group(4))).as(context).isZero();
      long batches = Long.parseLong(found.group(5));
      assertThat(batches).as(context).isGreaterThanOrEqualTo(150 / StagedGpuQuery.BATCH_ROWS);
      assertThat(Long.parseLong(found.group(6))).as(context).isEqualTo(batches);
      assertThat(Long.parseLong(found.group(7))).as(context).isZero();
      assertThat(Long.parseLong(found.group(8))).as(context).isZero();
      assertThat(Long.parseLong(found.group(9))).as(context).isGreaterThan(batches);
      assertThat(Long.parseLong(found.group(10))).as(context).isPositive();
    }
    assertThat(output.lines().filter(line -> line.startsWith("RESULT ")))
        .as("seed %d, the query's output:%n%s", seed, output)
        .containsExactly("RESULT rootPeakBytes=0 taskBytes=0 openTaskAllocators=0");
  }
}

package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.internal.MappedPathUnavailable;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.TestSeeds;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile Arrow IPC inputs ({@link HostileFiles}) against {@link ArrowFiles#normalizeFile} on the
 * CPU, both ways in: the device overload (the mapped path where it applies) and the record-batch
 * path with a caller's allocator. Each case must end in one clean error (an {@link
 * EmbedNormException} whose message is one line starting "Cannot ", no output or temporary file
 * left) or in an output whose every non-null row matches a float64 reference of the op on the input
 * as Arrow Java reads it and whose other columns are the input's, buffer by buffer ({@link
 * PassThroughBuffers}); either way within a timeout and with every Arrow buffer freed.
 *
 * <p>{@value #CASES} cases per seed by default (set {@code -Dembednorm.fuzz.cases=N} for more,
 * {@code -Dembednorm.test.seed=S} to replay a seed, {@code -Dembednorm.fuzz.case=I} to replay one
 * case of it). A failing input is saved under {@code target/fuzz-failures/}.
 */
class ArrowFilesFuzzTest {
  private static final int CASES = 400;
  private static final long TIMEOUT_SECONDS = 30;
  private static final int REPORTED_FAILURES = 10;

  @TempDir Path directory;

  private RootAllocator root;
  private ArrowNormalizer normalizer;
  private ExecutorService executor;
  private final Map<FileNormalizationPath, Integer> successes =
      new EnumMap<>(FileNormalizationPath.class);
  private int errors;

  @BeforeEach
  void setUp() {
    root = new RootAllocator();
    normalizer = ArrowNormalizer.create(root, DeviceChoice.CPU);
    executor = Executors.newSingleThreadExecutor();
  }

  @AfterEach
  void tearDown() {
    executor.shutdownNow();
    normalizer.close();
    root.close();
  }

  @Test
  void everyHostileInputGivesOneCleanErrorOrACorrectOutput() throws Exception {
    int cases = Integer.getInteger("embednorm.fuzz.cases", CASES);
    Integer only = Integer.getInteger("embednorm.fuzz.case");
    List<String> failures = new ArrayList<>();
    for (long seed : TestSeeds.seeds()) {
      System.out.println("ArrowFilesFuzzTest seed " + seed + ", " + cases + " cases");
      for (int index = 0; index < cases; index++) {
        if (only != null && only != index) {
          continue;
        }
        String failure = runCase(seed, index);
        if (failure != null) {
          failures.add(failure);
          System.out.println(failure);
        }
      }
    }
    System.out.println("ArrowFilesFuzzTest: outputs " + successes + ", clean errors " + errors);
    assertThat(failures.subList(0, Math.min(failures.size(), REPORTED_FAILURES)))
        .as(
            "%d failing cases (replay with -Dembednorm.test.seed and -Dembednorm.fuzz.case)",
            failures.size())
        .isEmpty();
    if (only == null) {
      assertThat(successes.getOrDefault(FileNormalizationPath.MAPPED, 0))
          .as("cases normalized on the mapped path")
          .isPositive();
      assertThat(successes.getOrDefault(FileNormalizationPath.RECORD_BATCH, 0))
          .as("cases normalized on the record-batch path")
          .isPositive();
      assertThat(errors).as("cases ending in an error").isPositive();
    }
  }

  /** Runs case {@code index} of {@code seed}; returns what went wrong, or null. */
  private String runCase(long seed, int index) throws Exception {
    HostileFiles.Case hostile;
    try (BufferAllocator writing = root.newChildAllocator("writing", 0, Long.MAX_VALUE)) {
      hostile = HostileFiles.generate(new Random(TestSeeds.mix(seed, index)), writing);
    }
    Path input = Files.createDirectories(directory.resolve("input")).resolve(index + ".arrow");
    Path outputs = Files.createDirectories(directory.resolve("output-" + index));
    Files.write(input, hostile.bytes());
    String where = "seed " + seed + " case " + index + " (" + hostile.description() + ")";
    List<String> problems = new ArrayList<>();
    try {
      problems.addAll(
          check(
              hostile,
              input,
              outputs.resolve("by-device.arrow"),
              output ->
                  ArrowFiles.normalizeFile(
                      input,
                      output,
                      hostile.column(),
                      hostile.normalization(),
                      DeviceChoice.CPU,
                      rows -> {})));
      problems.addAll(
          check(
              hostile,
              input,
              outputs.resolve("record-batches.arrow"),
              output -> {
                try (BufferAllocator allocator =
                    root.newChildAllocator("case", 0, Long.MAX_VALUE)) {
                  return ArrowFiles.normalizeFile(
                      input,
                      output,
                      hostile.column(),
                      hostile.normalization(),
                      normalizer,
                      allocator);
                }
              }));
    } catch (TimeoutException timeout) {
      problems.add("did not finish within " + TIMEOUT_SECONDS + " s");
      save(input, seed, index);
      throw new AssertionError(where + ": " + problems, timeout);
    }
    if (problems.isEmpty()) {
      deleteAll(outputs);
      Files.delete(input);
      return null;
    }
    save(input, seed, index);
    return where + ": " + String.join("; ", problems);
  }

  private interface Run {
    NormalizeResult normalize(Path output);
  }

  /** Runs one way in and checks its outcome. */
  private List<String> check(HostileFiles.Case hostile, Path input, Path output, Run run)
      throws Exception {
    long allocatedBefore = root.getAllocatedMemory();
    Future<NormalizeResult> future = executor.submit(() -> run.normalize(output));
    List<String> problems = new ArrayList<>();
    String way = output.getFileName() + ": ";
    NormalizeResult result = null;
    Throwable failure = null;
    try {
      result = future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException failed) {
      failure = failed.getCause();
    }
    if (root.getAllocatedMemory() != allocatedBefore) {
      problems.add(
          way
              + "leaked "
              + (root.getAllocatedMemory() - allocatedBefore)
              + " bytes of Arrow memory");
    }
    if (failure != null && Integer.getInteger("embednorm.fuzz.case") != null) {
      failure.printStackTrace(System.out);
    }
    if (failure != null && hostile.mustSucceed()) {
      problems.add(way + "failed on an intact input: " + stackTop(failure));
    }
    if (failure != null) {
      for (Throwable suppressed : failure.getSuppressed()) {
        problems.add(way + "suppressed " + suppressed.toString().replace('\n', ' '));
      }
      if (!(failure instanceof EmbedNormException) || failure instanceof MappedPathUnavailable) {
        problems.add(way + "escaped " + stackTop(failure));
      } else if (failure.getMessage() == null
          || !failure.getMessage().startsWith("Cannot ")
          || failure.getMessage().contains("\n")) {
        problems.add(way + "unclean message: " + failure.getMessage());
      }
      try (Stream<Path> left = Files.list(output.getParent())) {
        List<Path> files = left.toList();
        if (!files.isEmpty()) {
          problems.add(way + "left " + files + " behind after " + failure.getMessage());
        }
      }
      errors++;
      return problems;
    }
    successes.merge(result.path(), 1, Integer::sum);
    try {
      compare(hostile, input, output);
    } catch (AssertionError | IOException | RuntimeException wrong) {
      problems.add(way + "wrote a wrong output on the " + result.path() + " path: " + wrong);
    }
    for (String difference : passThrough(hostile, input, output, result.path())) {
      problems.add(
          way
              + "changed a column it passes through on the "
              + result.path()
              + " path: "
              + difference);
    }
    Files.delete(output);
    return problems;
  }

  /** Compares every row of the output with the reference of the input, as Arrow Java reads both. */
  private void compare(HostileFiles.Case hostile, Path input, Path output) throws IOException {
    try (BufferAllocator allocator = root.newChildAllocator("check", 0, Long.MAX_VALUE)) {
      List<Double[]> inputRows = new ArrayList<>();
      ElementType type = read(input, hostile.column(), allocator, inputRows);
      List<Double[]> outputRows = new ArrayList<>();
      read(output, hostile.column(), allocator, outputRows);
      ReferenceCheck.assertNormalized(
          hostile.normalization(),
          type,
          inputRows.toArray(new Double[0][]),
          outputRows.toArray(new Double[0][]),
          "output");
    }
  }

  /**
   * Compares the columns the output passes through with the input's, buffer by buffer as the IPC
   * layout lays them out ({@link IpcBuffers}), not through Arrow's vectors, so that a damaged
   * column that was copied compares as bytes: the mapped path must copy every byte of them, the
   * record-batch path every byte their rows are made of as Arrow Java reads them.
   */
  private static List<String> passThrough(
      HostileFiles.Case hostile, Path input, Path output, FileNormalizationPath path)
      throws IOException {
    IpcBuffers in;
    try {
      in = IpcBuffers.read(input);
    } catch (RuntimeException unreadable) {
      return List.of("the input it read has a layout the test cannot read: " + unreadable);
    }
    IpcBuffers out;
    try {
      out = IpcBuffers.read(output);
    } catch (RuntimeException unreadable) {
      return List.of("its output has a layout the test cannot read: " + unreadable);
    }
    return path == FileNormalizationPath.MAPPED
        ? PassThroughBuffers.exact(in, out, hostile.column())
        : PassThroughBuffers.asArrowJavaReadsThem(in, out, hostile.column());
  }

  private static ElementType read(
      Path path, String column, BufferAllocator allocator, List<Double[]> rows) throws IOException {
    byte[] head = new byte[6];
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
      channel.read(java.nio.ByteBuffer.wrap(head));
    }
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
        ArrowReader reader =
            new String(head, java.nio.charset.StandardCharsets.US_ASCII).equals("ARROW1")
                ? new ArrowFileReader(channel, allocator)
                : new ArrowStreamReader(channel, allocator)) {
      VectorSchemaRoot batch = reader.getVectorSchemaRoot();
      FieldVector vector = batch.getVector(column);
      ElementType type = EmbeddingColumn.elementType(vector.getField(), column);
      while (reader.loadNextBatch()) {
        rows.addAll(Arrays.asList(TestColumns.read(batch.getVector(column))));
      }
      return type;
    }
  }

  private static String stackTop(Throwable failure) {
    StackTraceElement[] stack = failure.getStackTrace();
    return failure
        + (stack.length > 0 ? " at " + stack[0] : "")
        + (failure.getCause() != null ? " caused by " + failure.getCause() : "");
  }

  private static void save(Path input, long seed, int index) throws IOException {
    Path saved = Paths.get("target", "fuzz-failures");
    Files.createDirectories(saved);
    Files.copy(
        input,
        saved.resolve("seed-" + seed + "-case-" + index + ".arrow"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  private static void deleteAll(Path directory) throws IOException {
    try (Stream<Path> files = Files.list(directory)) {
      for (Path file : files.toList()) {
        Files.delete(file);
      }
    }
    Files.delete(directory);
  }
}

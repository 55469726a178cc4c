package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.embednorm.jobs.internal.SampleData;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code embednorm normalize} end to end on Arrow IPC files, against a float64 reference. */
class NormalizeCommandTest {
  @TempDir Path folder;
  private BufferAllocator allocator;

  @BeforeEach
  void openAllocator() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void closeAllocator() {
    allocator.close(); // throws on a leak
  }

  @Test
  void normalizesFixedSizeListColumnAndPassesIdThrough() throws IOException {
    long seed = System.nanoTime();
    Path input = folder.resolve("in.arrow");
    Path output = folder.resolve("out.arrow");
    SampleData.writeArrow(allocator, input, 20_000, 33, seed);

    CommandOutput result =
        normalize(input.toString(), output.toString(), "--op", "rms_norm", "--device", "cpu");

    assertThat(result.exitCode()).as("seed %d, stderr %s", seed, result.err()).isZero();
    assertThat(result.out())
        .contains("20000 rows")
        .contains("on cpu (cpu was requested)")
        .contains("mapped path (FixedSizeList<float32>(33) in 3 uncompressed record batches)");
    List<float[]> in = readRows(input);
    List<float[]> out = readRows(output);
    assertThat(out).hasSameSizeAs(in);
    for (int row = 0; row < in.size(); row++) {
      assertClose(out.get(row), rmsReference(in.get(row), 1e-6, null), seed, row);
    }
    assertThat(readIds(output)).isEqualTo(readIds(input));
  }

  @Test
  void normalizesByTheL1AndLinfNorms() throws IOException {
    long seed = System.nanoTime();
    Path input = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, input, 500, 33, seed);
    List<float[]> in = readRows(input);
    for (String op : new String[] {"l1_normalize", "linf_normalize"}) {
      Path output = folder.resolve(op + ".arrow");
      CommandOutput result =
          normalize(input.toString(), output.toString(), "--op", op, "--eps", "0");
      assertThat(result.exitCode()).as("seed %d, stderr %s", seed, result.err()).isZero();
      List<float[]> out = readRows(output);
      for (int row = 0; row < in.size(); row++) {
        float[] x = in.get(row);
        double norm = 0;
        for (float value : x) {
          norm =
              op.equals("l1_normalize") ? norm + Math.abs(value) : Math.max(norm, Math.abs(value));
        }
        float[] expected = new float[x.length];
        for (int i = 0; i < x.length; i++) {
          expected[i] = (float) (x[i] / norm);
        }
        assertThat(out.get(row))
            .as("seed %d, %s row %d", seed, op, row)
            .containsExactly(expected, within(2e-6f));
      }
    }
  }

  @Test
  void normalizesListColumnWithWeightFile() throws IOException {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    Path input = folder.resolve("list.arrow");
    Path output = folder.resolve("list-out.arrow");
    float[][] rows = new float[50][];
    for (int row = 0; row < rows.length; row++) {
      rows[row] = new float[8];
      for (int i = 0; i < 8; i++) {
        rows[row][i] = (float) random.nextGaussian() * 3;
      }
    }
    writeListFile(input, rows);
    Path weight = Files.writeString(folder.resolve("w.txt"), "1 2 3 4\n0.5, 0.25, -1, 8\n");
    double[] w = {1, 2, 3, 4, 0.5, 0.25, -1, 8};

    CommandOutput result =
        normalize(
            input.toString(),
            output.toString(),
            "--op",
            "rms_norm",
            "--eps",
            "0.001",
            "--weight",
            weight.toString());

    assertThat(result.exitCode()).as("seed %d, stderr %s", seed, result.err()).isZero();
    assertThat(result.out()).contains("mapped path (List<float32> in 1 uncompressed record batch)");
    List<float[]> out = readRows(output);
    for (int row = 0; row < rows.length; row++) {
      assertClose(out.get(row), rmsReference(rows[row], 0.001, w), seed, row);
    }
  }

  @Test
  void streamInputTakesTheRecordBatchPathAndSaysWhy() throws IOException {
    long seed = System.nanoTime();
    Path file = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, file, 300, 5, seed);
    Path stream = folder.resolve("in.arrows");
    try (ArrowFileReader reader =
            new ArrowFileReader(FileChannel.open(file, StandardOpenOption.READ), allocator);
        FileChannel channel =
            FileChannel.open(stream, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        ArrowStreamWriter writer =
            new ArrowStreamWriter(reader.getVectorSchemaRoot(), null, channel)) {
      writer.start();
      while (reader.loadNextBatch()) {
        writer.writeBatch();
      }
      writer.end();
    }
    Path output = folder.resolve("out.arrow");

    CommandOutput result =
        normalize(stream.toString(), output.toString(), "--op", "rms_norm", "--device", "cpu");

    assertThat(result.exitCode()).as("seed %d, stderr %s", seed, result.err()).isZero();
    assertThat(result.out())
        .contains("300 rows")
        .contains(
            "record-batch path (the mapped path does not apply: the input is not in the Arrow"
                + " IPC file format)");
    List<float[]> in = readRows(file);
    List<float[]> out = readRows(output);
    for (int row = 0; row < in.size(); row++) {
      assertClose(out.get(row), rmsReference(in.get(row), 1e-6, null), seed, row);
    }
  }

  @Test
  void missingColumnFailsWithOneLineAndNoOutput() throws IOException {
    Path input = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, input, 10, 4, 1);
    Path output = folder.resolve("out.arrow");
    CommandOutput result =
        normalize(input.toString(), output.toString(), "--op", "softmax", "--column", "vector");
    assertFailed(result, output, "Cannot normalize column 'vector': no such column");
  }

  @Test
  void wrongColumnTypeFails() throws IOException {
    Path input = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, input, 10, 4, 1);
    Path output = folder.resolve("out.arrow");
    CommandOutput result =
        normalize(input.toString(), output.toString(), "--op", "l2_normalize", "--column", "id");
    assertFailed(result, output, "Cannot normalize column 'id'");
  }

  @Test
  void weightOfWrongLengthFails() throws IOException {
    Path input = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, input, 10, 4, 1);
    Path output = folder.resolve("out.arrow");
    Path weight = Files.writeString(folder.resolve("w.txt"), "1, 2, 3");
    CommandOutput result =
        normalize(
            input.toString(),
            output.toString(),
            "--op",
            "layer_norm",
            "--weight",
            weight.toString());
    assertFailed(
        result,
        output,
        "Cannot apply layer_norm to row 0: weight file '"
            + weight
            + "' has 3 elements but the row has 4");
  }

  /** Issue 29, finding 5: 1e400, NaN and Infinity used to pass and turn outputs into inf/NaN. */
  @Test
  void weightFileWithNumberBeyondDoubleFails() throws IOException {
    Path input = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, input, 10, 4, 1);
    Path output = folder.resolve("out.arrow");
    for (String item : new String[] {"1e400", "NaN", "-Infinity"}) {
      Path weight = Files.writeString(folder.resolve("w.txt"), "1, 2, " + item + ", 4");
      CommandOutput result =
          normalize(
              input.toString(),
              output.toString(),
              "--op",
              "rms_norm",
              "--weight",
              weight.toString());
      assertFailed(
          result,
          output,
          "Cannot read weight file '"
              + weight
              + "': item 3 ('"
              + item
              + "') is not a finite number");
    }
  }

  @Test
  void outputThatIsNoRegularFileIsRefusedAndKept() throws Exception {
    Path input = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, input, 10, 4, 1);
    Path fifo = folder.resolve("pipe");
    assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
    List<Path> outputs = new ArrayList<>(List.of(fifo));
    // A character device like /dev/null (1, 3), made here so a regression cannot touch the real
    // one.
    Path device = folder.resolve("null");
    if (new ProcessBuilder("mknod", device.toString(), "c", "1", "3").start().waitFor() == 0) {
      outputs.add(device);
    }
    for (Path output : outputs) {
      String kind = output.equals(fifo) ? "a FIFO (named pipe)" : "a character device";
      String message =
          "Cannot write output '" + output + "': it is " + kind + ", not a regular file";
      CommandOutput normalize =
          normalize(input.toString(), output.toString(), "--op", "rms_norm", "--device", "cpu");
      CommandOutput generate =
          CommandOutput.run(
              "generate",
              "--rows",
              "5",
              "--dim",
              "3",
              "--format",
              "arrow",
              "--output",
              output.toString());
      for (CommandOutput result : List.of(normalize, generate)) {
        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err().strip().lines()).hasSize(1);
        assertThat(result.err()).endsWith(message + System.lineSeparator());
      }
      int type = (Integer) Files.getAttribute(output, "unix:mode") & 0170000;
      assertThat(type).isEqualTo(output.equals(fifo) ? 0010000 : 0020000);
    }
    assertThat(folder)
        .isDirectoryNotContaining(path -> path.toString().contains(".embednorm-partial-"));
  }

  @Test
  void unreadableInputFails() throws IOException {
    Path input = Files.writeString(folder.resolve("not-arrow.arrow"), "hello, world");
    Path output = folder.resolve("out.arrow");
    CommandOutput result = normalize(input.toString(), output.toString(), "--op", "rms_norm");
    assertFailed(result, output, "Cannot read Arrow file '" + input + "'");
    Path missing = folder.resolve("missing.arrow");
    assertFailed(
        normalize(missing.toString(), output.toString(), "--op", "rms_norm"),
        output,
        "Cannot read Arrow file '" + missing + "'");
  }

  @Test
  void unknownOpAndDeviceFail() throws IOException {
    Path input = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, input, 10, 4, 1);
    Path output = folder.resolve("out.arrow");
    assertFailed(
        normalize(input.toString(), output.toString(), "--op", "batch_norm"),
        output,
        "Cannot parse op 'batch_norm': expected one of rms_norm, layer_norm, softmax, log_softmax,"
            + " l2_normalize, l1_normalize, linf_normalize");
    assertFailed(
        normalize(input.toString(), output.toString(), "--op", "rms_norm", "--device", "gpu"),
        output,
        "Cannot use device gpu");
  }

  @Test
  void entryPointWithoutSparkRunsAndFailsAsTheSubcommandDoes() throws IOException {
    Path input = folder.resolve("in.arrow");
    SampleData.writeArrow(allocator, input, 100, 8, 7);
    Path output = folder.resolve("out.arrow");
    String in = input.toString();
    String out = output.toString();

    CommandOutput done =
        CommandOutput.capture(
            () ->
                NormalizeCommand.run(
                    new String[] {"--input", in, "--output", out, "--op", "l2_normalize"}));
    assertThat(done.exitCode()).as(done.err()).isZero();
    assertThat(done.out()).startsWith("embednorm normalize: l2_normalize").contains("100 rows");
    assertThat(output).isNotEmptyFile();

    String failing = folder.resolve("failing.arrow").toString();
    CommandOutput failed =
        CommandOutput.capture(
            () ->
                NormalizeCommand.run(
                    new String[] {"--input", in, "--output", failing, "--op", "batch_norm"}));
    assertThat(failed.exitCode()).isEqualTo(1);
    assertThat(failed.err())
        .isEqualTo(normalize(in, failing, "--op", "batch_norm").err())
        .startsWith("embednorm normalize: Cannot parse op 'batch_norm'")
        .hasLineCount(1);

    CommandOutput usage =
        CommandOutput.capture(
            () ->
                NormalizeCommand.run(
                    new String[] {
                      "--input", in, "--output", failing, "--op", "rms_norm", "--threads"
                    }));
    assertThat(usage.exitCode()).isEqualTo(2);
    assertThat(usage.err()).contains("Unknown option: '--threads'").contains("Usage: embednorm");
  }

  /** Runs {@code embednorm normalize --input IN --output OUT} with more options. */
  private static CommandOutput normalize(String input, String output, String... options) {
    String[] arguments = new String[5 + options.length];
    arguments[0] = "normalize";
    arguments[1] = "--input";
    arguments[2] = input;
    arguments[3] = "--output";
    arguments[4] = output;
    System.arraycopy(options, 0, arguments, 5, options.length);
    return CommandOutput.run(arguments);
  }

  private static void assertFailed(CommandOutput result, Path output, String message) {
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.err().strip().lines()).hasSize(1);
    assertThat(result.err()).startsWith("embednorm normalize: ").contains(message);
    assertThat(output).doesNotExist();
    assertThat(output.getParent())
        .isDirectoryNotContaining(path -> path.toString().contains(".embednorm-partial-"));
  }

  private static double[] rmsReference(float[] x, double epsilon, double[] weight) {
    double squares = 0;
    for (float value : x) {
      squares += (double) value * value;
    }
    double scale = 1 / Math.sqrt(squares / x.length + epsilon);
    double[] y = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      y[i] = x[i] * scale * (weight == null ? 1 : (float) weight[i]);
    }
    return y;
  }

  private static void assertClose(float[] actual, double[] reference, long seed, int row) {
    double largest = 0;
    for (double value : reference) {
      largest = Math.max(largest, Math.abs(value));
    }
    assertThat(actual).as("seed %d row %d", seed, row).hasSize(reference.length);
    for (int i = 0; i < reference.length; i++) {
      double bound = 1e-5 * Math.abs(reference[i]) + 1e-6 * largest;
      assertThat(Math.abs(actual[i] - reference[i]))
          .as("seed %d row %d element %d: %s vs %s", seed, row, i, actual[i], reference[i])
          .isLessThanOrEqualTo(bound);
    }
  }

  private List<float[]> readRows(Path file) throws IOException {
    List<float[]> rows = new ArrayList<>();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      while (reader.loadNextBatch()) {
        FieldVector vector = reader.getVectorSchemaRoot().getVector("embedding");
        for (int row = 0; row < vector.getValueCount(); row++) {
          List<?> values = (List<?>) vector.getObject(row);
          float[] floats = new float[values.size()];
          for (int i = 0; i < floats.length; i++) {
            floats[i] = (Float) values.get(i);
          }
          rows.add(floats);
        }
      }
    }
    return rows;
  }

  private List<Long> readIds(Path file) throws IOException {
    List<Long> ids = new ArrayList<>();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      while (reader.loadNextBatch()) {
        BigIntVector vector = (BigIntVector) reader.getVectorSchemaRoot().getVector("id");
        for (int row = 0; row < vector.getValueCount(); row++) {
          ids.add(vector.get(row));
        }
      }
    }
    return ids;
  }

  private void writeListFile(Path file, float[][] rows) throws IOException {
    try (ListVector list = ListVector.empty("embedding", allocator)) {
      UnionListWriter writer = list.getWriter();
      for (int row = 0; row < rows.length; row++) {
        writer.setPosition(row);
        writer.startList();
        for (float value : rows[row]) {
          writer.float4().writeFloat4(value);
        }
        writer.endList();
      }
      writer.setValueCount(rows.length);
      list.setValueCount(rows.length);
      assertThat(((Float4Vector) list.getDataVector()).getValueCount()).isEqualTo(rows.length * 8);
      try (VectorSchemaRoot root = VectorSchemaRoot.of(list);
          FileChannel channel =
              FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          ArrowFileWriter fileWriter = new ArrowFileWriter(root, null, channel)) {
        fileWriter.start();
        fileWriter.writeBatch();
        fileWriter.end();
      }
    }
  }
}

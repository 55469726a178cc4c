package io.embednorm.arrow;

import static io.embednorm.arrow.TestColumns.Layout.FIXED_SIZE_LIST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where {@code ArrowFiles.normalizeFile} writes: refused outputs (devices, FIFOs, directories, the
 * input by another name) stay as they were, and an interrupted write leaves no partial file, or one
 * that the next write removes.
 */
class OutputFilesTest {
  private static final Normalization RMS = Normalization.of(Op.RMS_NORM);

  @TempDir Path directory;

  @Test
  void fifoDeviceAndDirectoryOutputsAreRefusedAndStayAsTheyWere() throws Exception {
    Path input = writeInput(directory.resolve("in.arrow"), 2);
    Path fifo = directory.resolve("pipe");
    run("mkfifo", fifo.toString());
    Path linkToFifo = Files.createSymbolicLink(directory.resolve("link"), fifo);
    Path folder = Files.createDirectory(directory.resolve("folder"));
    assertRefused(input, fifo, "it is a FIFO (named pipe), not a regular file");
    assertRefused(
        input,
        linkToFifo,
        "it is a FIFO (named pipe) (through a symbolic link), not a regular file");
    assertRefused(input, folder, "it is a directory, not a regular file");
    assertThat(fileType(fifo)).isEqualTo(FIFO);
    assertThat(Files.isSymbolicLink(linkToFifo)).isTrue();
    assertThat(folder).isEmptyDirectory();
    // A character device like /dev/null (1, 3), made here so a regression cannot touch the real
    // one.
    Path device = directory.resolve("null");
    assumeTrue(
        new ProcessBuilder("mknod", device.toString(), "c", "1", "3").start().waitFor() == 0,
        "mknod needs root");
    assertRefused(input, device, "it is a character device, not a regular file");
    assertThat(fileType(device)).isEqualTo(CHARACTER_DEVICE);
    assertThat(fileType(Path.of("/dev/null"))).isEqualTo(CHARACTER_DEVICE);
    assertThat(partialFiles()).isEmpty();
  }

  @Test
  void theInputByAnotherNameIsRefused() throws Exception {
    Path input = writeInput(directory.resolve("in.arrow"), 2);
    byte[] before = Files.readAllBytes(input);
    Path hardLink = Files.createLink(directory.resolve("hard.arrow"), input);
    Path symbolicLink = Files.createSymbolicLink(directory.resolve("soft.arrow"), input);
    for (Path output : List.of(input, hardLink, symbolicLink, directory.resolve("x/../in.arrow"))) {
      assertThatThrownBy(() -> normalize(input, output))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage(
              "Cannot write output '"
                  + output
                  + "': it is the input file '"
                  + input
                  + "' (by another name or a hard link); write to a new path instead");
    }
    assertThat(Files.readAllBytes(input)).isEqualTo(before);
    assertThat(partialFiles()).isEmpty();
  }

  @Test
  void aSymbolicLinkToARegularFileHasThatFileWritten() throws Exception {
    Path input = writeInput(directory.resolve("in.arrow"), 2);
    Path target = directory.resolve("target.arrow");
    Files.writeString(target, "previous");
    Path link = Files.createSymbolicLink(directory.resolve("link.arrow"), target);
    normalize(input, link);
    assertThat(Files.isSymbolicLink(link)).isTrue();
    assertThat(Files.size(target)).isEqualTo(Files.size(input));
  }

  @Test
  void sigtermDeletesThePartialFileAndKeepsThePreviousOutput() throws Exception {
    Path input = writeInput(directory.resolve("in.arrow"), 3);
    Path output = directory.resolve("out.arrow");
    Files.writeString(output, "previous output");
    Process writer = startStoppedWrite(input, output);
    try {
      assertThat(partialFiles()).containsExactly("out.arrow.embednorm-partial-" + writer.pid());
      writer.destroy(); // SIGTERM
      assertThat(writer.waitFor(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      writer.destroyForcibly();
    }
    assertThat(partialFiles()).isEmpty();
    assertThat(Files.readString(output)).isEqualTo("previous output");
  }

  @Test
  void aPartialFileOfAKilledProcessIsRemovedByTheNextWrite() throws Exception {
    Path input = writeInput(directory.resolve("in.arrow"), 3);
    Path output = directory.resolve("out.arrow");
    Process writer = startStoppedWrite(input, output);
    writer.destroyForcibly(); // SIGKILL: no shutdown hook runs
    assertThat(writer.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String leftover = "out.arrow.embednorm-partial-" + writer.pid();
    assertThat(partialFiles()).containsExactly(leftover);

    PrintStream originalErr = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try {
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      normalize(input, output);
    } finally {
      System.setErr(originalErr);
    }
    assertThat(err.toString(StandardCharsets.UTF_8))
        .isEqualTo(
            "embednorm: removed '"
                + directory.resolve(leftover)
                + "', a partial output left by an interrupted run (process "
                + writer.pid()
                + ")"
                + System.lineSeparator());
    assertThat(partialFiles()).isEmpty();
    assertThat(Files.size(output)).isEqualTo(Files.size(input));
  }

  /** Starts {@link StoppedWriteMain} and waits until it is in the middle of writing. */
  private static Process startStoppedWrite(Path input, Path output) throws IOException {
    List<String> command =
        Subprocesses.javaCommand(
            StoppedWriteMain.class.getName(), List.of(input.toString(), output.toString()));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    BufferedReader lines =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder seen = new StringBuilder();
    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
      if (line.equals("writing")) {
        return process;
      }
      seen.append(line).append('\n');
    }
    throw new AssertionError("The writer stopped before writing:\n" + seen);
  }

  private void assertRefused(Path input, Path output, String why) {
    assertThatThrownBy(() -> normalize(input, output))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot write output '" + output + "': " + why);
  }

  private static void normalize(Path input, Path output) {
    ArrowFiles.normalizeFile(input, output, "embedding", RMS, DeviceChoice.CPU, rows -> {});
  }

  /** A file of {@code batches} batches of 4 rows of 8 float32 values, column "embedding". */
  private static Path writeInput(Path path, int batches) {
    Random random = new Random(7);
    List<VectorSchemaRoot> roots = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator()) {
      try {
        for (int batch = 0; batch < batches; batch++) {
          Double[][] rows = TestColumns.gaussianRows(random, ElementType.FLOAT32, 4, row -> 8);
          FieldVector embedding =
              TestColumns.build(allocator, "embedding", FIXED_SIZE_LIST, ElementType.FLOAT32, rows);
          roots.add(new VectorSchemaRoot(List.of(embedding)));
        }
        ArrowFiles.writeFile(path, allocator, roots.toArray(new VectorSchemaRoot[0]));
      } finally {
        roots.forEach(VectorSchemaRoot::close);
      }
    }
    return path;
  }

  private List<String> partialFiles() throws IOException {
    return Subprocesses.partialFiles(directory);
  }

  private static final int FIFO = 0010000;
  private static final int CHARACTER_DEVICE = 0020000;

  private static int fileType(Path path) throws IOException {
    return (Integer) Files.getAttribute(path, "unix:mode") & 0170000;
  }

  private static void run(String... command) throws Exception {
    assertThat(new ProcessBuilder(command).inheritIO().start().waitFor()).isZero();
  }
}

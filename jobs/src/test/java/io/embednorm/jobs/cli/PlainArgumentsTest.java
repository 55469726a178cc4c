package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.jobs.internal.SampleData;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** {@link PlainArguments} against picocli, the parser it stands in for. */
class PlainArgumentsTest {
  @TempDir Path folder;

  @Test
  void knowsExactlyPicocliOptionsOtherThanHelpAndVersion() {
    Set<String> picocli = new TreeSet<>();
    for (OptionSpec option : new CommandLine(new NormalizeCommand()).getCommandSpec().options()) {
      if (!option.usageHelp() && !option.versionHelp()) {
        picocli.addAll(Arrays.asList(option.names()));
      }
    }
    assertThat(new TreeSet<>(PlainArguments.OPTIONS)).isEqualTo(picocli);
  }

  @Test
  void givesTheCommandPicocliGivesForPlainArguments() {
    List<List<String>> commandLines =
        List.of(
            List.of("--input", "in.arrow", "--output", "out.arrow", "--op", "rms_norm"),
            List.of("--op=softmax", "--output=o.arrow", "--input=i.arrow"),
            List.of(
                "--input",
                "dir with spaces/in.arrow",
                "--output",
                "a=b.arrow",
                "--op",
                "layer_norm",
                "--eps",
                "1e-3",
                "--weight",
                "w.txt",
                "--bias=b.txt",
                "--device",
                "cpu",
                "--column",
                "vectors"),
            List.of("--input", "i", "--output", "o", "--op", "batch_norm", "--device", "tpu"),
            List.of("--input", "i", "--output", "o", "--op", "l2_normalize", "--eps", "0x1p-20"),
            List.of("--input=", "--output", "o", "--op", "log_softmax", "--column="));
    for (List<String> commandLine : commandLines) {
      String[] arguments = commandLine.toArray(String[]::new);
      Optional<NormalizeCommand> plain = PlainArguments.parse(arguments);
      NormalizeCommand picocli = new NormalizeCommand();
      new CommandLine(picocli).parseArgs(arguments);
      assertThat(plain).as("%s", commandLine).isPresent();
      assertThat(describe(plain.get())).as("%s", commandLine).isEqualTo(describe(picocli));
    }
  }

  @Test
  void leavesEverythingElseToPicocli() {
    List<List<String>> commandLines =
        List.of(
            List.of(),
            List.of("--help"),
            List.of("-h"),
            List.of("--version"),
            List.of("--input", "i", "--output", "o", "--op", "rms_norm", "--help"),
            List.of("--input", "i", "--output", "o"),
            List.of("--input", "i", "--output", "o", "--op"),
            List.of("--input", "i", "--output", "o", "--op", "rms_norm", "--threads", "2"),
            List.of("--input", "i", "--output", "o", "--op", "rms_norm", "--op", "softmax"),
            List.of("--input", "i", "--output", "o", "--op", "rms_norm", "--eps", "-1"),
            List.of("--input", "i", "--output", "o", "--op", "rms_norm", "--eps", "small"),
            List.of("--input", "i", "--output", "--op", "--op", "rms_norm"),
            List.of("--input", "i", "--output", "o", "--op", "rms_norm", "extra"),
            List.of("@arguments.txt"),
            List.of("--input", "@i", "--output", "o", "--op", "rms_norm"),
            List.of("--input", "i\0", "--output", "o", "--op", "rms_norm"));
    for (List<String> commandLine : commandLines) {
      assertThat(PlainArguments.parse(commandLine.toArray(String[]::new)))
          .as("%s", commandLine)
          .isEmpty();
    }
  }

  @Test
  void runsPlainArgumentsAndReportsFailuresAsPicocliDoes() throws Exception {
    Path input = folder.resolve("in.arrow");
    try (BufferAllocator allocator = new RootAllocator()) {
      SampleData.writeArrow(allocator, input, 100, 8, 7);
    }
    Path output = folder.resolve("out.arrow");
    String[] plain = {"--input", input.toString(), "--output", output.toString(), "--op"};

    CommandOutput done =
        CommandOutput.capture(() -> NormalizeCommand.run(with(plain, "l2_normalize")));
    assertThat(done.exitCode()).as(done.err()).isZero();
    assertThat(done.out()).startsWith("embednorm normalize: l2_normalize").contains("100 rows");
    assertThat(output).isNotEmptyFile();

    CommandOutput failed =
        CommandOutput.capture(() -> NormalizeCommand.run(with(plain, "batch_norm")));
    CommandOutput failedInPicocli =
        CommandOutput.run(with(with(new String[] {"normalize"}, plain), "batch_norm"));
    assertThat(failed.exitCode()).isEqualTo(1);
    assertThat(failed.err())
        .isEqualTo(failedInPicocli.err())
        .startsWith("embednorm normalize: Cannot parse op 'batch_norm'")
        .hasLineCount(1);

    CommandOutput usage =
        CommandOutput.capture(() -> NormalizeCommand.run(with(plain, "rms_norm", "--threads")));
    assertThat(usage.exitCode()).isEqualTo(2);
    assertThat(usage.err()).contains("Unknown option: '--threads'").contains("Usage: embednorm");
  }

  private static String[] with(String[] arguments, String... more) {
    String[] all = Arrays.copyOf(arguments, arguments.length + more.length);
    System.arraycopy(more, 0, all, arguments.length, more.length);
    return all;
  }

  private static String describe(NormalizeCommand command) {
    return List.of(
            String.valueOf(command.input),
            String.valueOf(command.output),
            String.valueOf(command.column),
            String.valueOf(command.options))
        .stream()
        .collect(Collectors.joining(" | "));
  }
}

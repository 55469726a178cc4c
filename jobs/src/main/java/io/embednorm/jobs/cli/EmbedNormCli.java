package io.embednorm.jobs.cli;

import picocli.CommandLine.Command;

/** {@code bin/embednorm}: normalize embedding columns on Spark, on Arrow files, or try it out. */
@Command(
    name = "embednorm",
    mixinStandardHelpOptions = true,
    versionProvider = VersionLines.class,
    description =
        "Normalizes embedding columns: rms_norm, layer_norm, softmax, log_softmax, l2_normalize,"
            + " l1_normalize, linf_normalize.",
    subcommands = {
      DemoCommand.class,
      GenerateCommand.class,
      NormalizeCommand.class,
      SqlCommand.class,
      JobCommand.class
    })
public final class EmbedNormCli implements Runnable {

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command line and returns its exit code (tests call this; main exits with it). */
  public static int run(String... args) {
    return ErrorReporter.commandLine(new EmbedNormCli()).execute(args);
  }

  @Override
  public void run() {
    ErrorReporter.commandLine(this).usage(System.out);
  }
}

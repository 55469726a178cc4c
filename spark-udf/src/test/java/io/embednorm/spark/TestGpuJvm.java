package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.HostMemory;
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

/**
 * Runs a main class in a new JVM whose GPU is a test engine: a services file put first on its class
 * path names {@code provider} as the GPU's engine provider and {@link UnpinnedHostMemory} as its
 * pinned memory. A JVM of its own, because engines are found once per JVM: in this one the fake
 * would be every test's GPU.
 */
final class TestGpuJvm {
  private TestGpuJvm() {}

  /**
   * Runs {@code main} with {@code arguments} and the JVM options {@code switches}, the services in
   * {@code directory}; returns its output once it exits with status 0 (within 180 seconds).
   */
  static String run(
      Path directory,
      Class<? extends EngineProvider> provider,
      Class<?> main,
      List<String> switches,
      String... arguments)
      throws IOException, InterruptedException {
    Path services = directory.resolve("META-INF").resolve("services");
    Files.createDirectories(services);
    Files.writeString(services.resolve(EngineProvider.class.getName()), provider.getName());
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
    command.addAll(List.of(arguments));
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

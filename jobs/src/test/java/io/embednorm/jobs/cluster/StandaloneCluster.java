package io.embednorm.jobs.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A Spark standalone cluster of separate JVMs on this host, from the Maven build's Spark jars: one
 * master and a few workers bound to 127.0.0.1 on free ports, all files under one folder. Closing
 * kills every JVM it started (applications, executors, workers, master); whoever starts it closes
 * it.
 */
public final class StandaloneCluster implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final Pattern MASTER_URL =
      Pattern.compile("Starting Spark master at (spark://\\S+:\\d+)");
  private static final String EXECUTOR_MAIN = "CoarseGrainedExecutorBackend";
  private static final int TAIL_LINES = 40;

  private final Path folder;
  private final SparkDistribution spark;
  private final List<LoggedProcess> processes = new ArrayList<>();
  private final List<Worker> workers = new ArrayList<>();
  private String masterUrl;
  private int drivers;

  /** One worker: its JVM and the folder where it keeps its executors' logs. */
  public record Worker(LoggedProcess process, Path workDirectory) {}

  /** One executor JVM, started by worker number {@code worker}, and its log. */
  public record Executor(
      int worker, String applicationId, String executorId, ProcessHandle process, Path log) {}

  private StandaloneCluster(Path folder, SparkDistribution spark) {
    this.folder = folder;
    this.spark = spark;
  }

  /** Starts a master and {@code workerCount} workers of one core and 1 GiB each. */
  public static StandaloneCluster start(Path folder, int workerCount) {
    return start(folder, workerCount, 1, "1g", Map.of());
  }

  /**
   * Starts a master and {@code workerCount} workers offering {@code cores} cores and {@code memory}
   * each, with {@code workerConfiguration} as the workers' Spark settings (such as {@code
   * spark.worker.resource.gpu.amount}), and waits until every worker registered.
   */
  public static StandaloneCluster start(
      Path folder,
      int workerCount,
      int cores,
      String memory,
      Map<String, String> workerConfiguration) {
    StandaloneCluster cluster =
        new StandaloneCluster(folder, SparkDistribution.create(folder.resolve("spark-home")));
    try {
      cluster.startMaster();
      for (int index = 0; index < workerCount; index++) {
        cluster.startWorker(index, cores, memory, workerConfiguration);
      }
      for (Worker worker : cluster.workers) {
        cluster.await(worker.process(), Pattern.compile("Successfully registered with master"));
      }
      return cluster;
    } catch (RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
  }

  public String masterUrl() {
    return masterUrl;
  }

  public SparkDistribution spark() {
    return spark;
  }

  public List<Worker> workers() {
    return List.copyOf(workers);
  }

  /**
   * Starts {@code spark-submit --master <this cluster> --deploy-mode client --class mainClass
   * [--conf key=value...] jar arguments...} in its own JVM, the driver bound to 127.0.0.1 without
   * its web UI, and returns at once.
   */
  public LoggedProcess submit(
      Path jar, String mainClass, Map<String, String> configuration, List<String> arguments) {
    List<String> submit =
        new ArrayList<>(
            List.of("--master", masterUrl, "--deploy-mode", "client", "--class", mainClass));
    Map<String, String> defaults =
        Map.of(
            "spark.driver.host", "127.0.0.1",
            "spark.driver.bindAddress", "127.0.0.1",
            "spark.ui.enabled", "false",
            "spark.executor.extraJavaOptions", String.join(" ", spark.jvmOptions()));
    defaults.forEach(
        (key, value) -> {
          if (!configuration.containsKey(key)) {
            submit.addAll(List.of("--conf", key + "=" + value));
          }
        });
    configuration.forEach((key, value) -> submit.addAll(List.of("--conf", key + "=" + value)));
    submit.add(jar.toAbsolutePath().toString());
    submit.addAll(arguments);
    return launch(
        "driver " + drivers++, "1g", Map.of(), "org.apache.spark.deploy.SparkSubmit", submit);
  }

  /**
   * Starts {@code $SPARK_HOME/bin/spark-submit --master <this cluster> arguments...} as a user
   * would, and returns at once: this cluster's SPARK_HOME with Spark's launch scripts ({@link
   * SparkDistribution#addLaunchScripts}), whose {@code conf/spark-defaults.conf} is the cluster's
   * own. Nothing else is added to the arguments.
   */
  public LoggedProcess submitThroughScript(List<String> arguments) {
    List<String> command =
        new ArrayList<>(
            List.of(
                spark.home().resolve("bin").resolve("spark-submit").toString(),
                "--master",
                masterUrl));
    command.addAll(arguments);
    String name = "driver " + drivers++;
    LoggedProcess process =
        LoggedProcess.start(
            name,
            command,
            spark.environment(directory("local")),
            folder.resolve(name.replace(' ', '-') + ".log"));
    processes.add(process);
    return process;
  }

  /** The logs ({@code stderr}) of every executor the workers started, ended ones included. */
  public List<Path> executorLogs() {
    List<Path> logs = new ArrayList<>();
    for (Worker worker : workers) {
      try (Stream<Path> files = Files.walk(worker.workDirectory())) {
        files.filter(path -> path.endsWith("stderr")).sorted().forEach(logs::add);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot list " + worker.workDirectory(), e);
      }
    }
    return logs;
  }

  /** The executor JVMs running now, found among each worker's child processes. */
  public List<Executor> executors() {
    List<Executor> executors = new ArrayList<>();
    for (int index = 0; index < workers.size(); index++) {
      int worker = index;
      workers
          .get(index)
          .process()
          .handle()
          .children()
          .forEach(child -> executor(worker, child).ifPresent(executors::add));
    }
    return executors;
  }

  /** The last lines of every log: master, workers, applications and executors. */
  public String logTails() {
    StringBuilder tails = new StringBuilder();
    processes.forEach(process -> tails.append(process.tail(TAIL_LINES)));
    for (int index = 0; index < workers.size(); index++) {
      Path work = workers.get(index).workDirectory();
      try (Stream<Path> files = Files.walk(work)) {
        for (Path file : files.filter(path -> path.endsWith("stderr")).sorted().toList()) {
          tails.append(LoggedProcess.tail("executor of worker " + index, file, TAIL_LINES));
        }
      } catch (IOException e) {
        tails.append("(cannot list ").append(work).append(": ").append(e.getMessage());
      }
    }
    return tails.toString();
  }

  /** The CPU time each live JVM of the cluster took so far, executors included, in one line. */
  public String cpuTimes() {
    StringBuilder times = new StringBuilder("CPU seconds:");
    for (LoggedProcess process : processes) {
      times.append(' ').append(process.name()).append(' ').append(cpuSeconds(process.handle()));
    }
    for (Executor executor : executors()) {
      times
          .append(" executor ")
          .append(executor.executorId())
          .append(' ')
          .append(cpuSeconds(executor.process()));
    }
    return times.toString();
  }

  private static String cpuSeconds(ProcessHandle process) {
    return process
        .info()
        .totalCpuDuration()
        .map(duration -> String.format(java.util.Locale.ROOT, "%.1f", duration.toMillis() / 1e3))
        .orElse("?");
  }

  /** Kills every JVM of the cluster, the latest started first. */
  @Override
  public void close() {
    for (int index = processes.size() - 1; index >= 0; index--) {
      processes.get(index).close();
    }
  }

  private void startMaster() {
    LoggedProcess master =
        launch(
            "master",
            "512m",
            Map.of(),
            "org.apache.spark.deploy.master.Master",
            List.of("--host", "127.0.0.1", "--port", "0", "--webui-port", "0"));
    masterUrl = await(master, MASTER_URL).group(1);
  }

  private void startWorker(
      int index, int cores, String memory, Map<String, String> workerConfiguration) {
    Path work = directory("work-" + index);
    LoggedProcess worker =
        launch(
            "worker " + index,
            "512m",
            workerConfiguration,
            "org.apache.spark.deploy.worker.Worker",
            List.of(
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--webui-port",
                "0",
                "--cores",
                Integer.toString(cores),
                "--memory",
                memory,
                "--work-dir",
                work.toString(),
                masterUrl));
    workers.add(new Worker(worker, work));
  }

  /** Starts a JVM of the cluster; Spark takes {@code configuration} from its system properties. */
  private LoggedProcess launch(
      String name,
      String heap,
      Map<String, String> configuration,
      String mainClass,
      List<String> arguments) {
    Path log = folder.resolve(name.replace(' ', '-') + ".log");
    List<String> command = new ArrayList<>(spark.javaCommand(heap, mainClass, arguments));
    List<String> properties = new ArrayList<>();
    // The master's REST server would take the fixed port 6066.
    properties.add("-Dspark.master.rest.enabled=false");
    configuration.forEach((key, value) -> properties.add("-D" + key + "=" + value));
    command.addAll(command.indexOf("-cp"), properties);
    LoggedProcess process =
        LoggedProcess.start(name, command, spark.environment(directory("local")), log);
    processes.add(process);
    return process;
  }

  private Matcher await(LoggedProcess process, Pattern pattern) {
    return process
        .awaitLine(pattern, START_TIMEOUT)
        .orElseThrow(
            () ->
                new AssertionError(
                    "Cannot start the standalone cluster: "
                        + process.name()
                        + (process.isAlive() ? " logged no '" : " ended before logging '")
                        + pattern
                        + "' within "
                        + START_TIMEOUT.toSeconds()
                        + " s\n"
                        + logTails()));
  }

  private Optional<Executor> executor(int worker, ProcessHandle process) {
    List<String> arguments = List.of(process.info().arguments().orElse(new String[0]));
    if (!process.info().commandLine().orElse("").contains(EXECUTOR_MAIN)) {
      return Optional.empty();
    }
    int application = arguments.indexOf("--app-id");
    int executor = arguments.indexOf("--executor-id");
    if (application < 0 || executor < 0) {
      return Optional.empty();
    }
    String applicationId = arguments.get(application + 1);
    String executorId = arguments.get(executor + 1);
    Path log =
        workers
            .get(worker)
            .workDirectory()
            .resolve(applicationId)
            .resolve(executorId)
            .resolve("stderr");
    return Optional.of(new Executor(worker, applicationId, executorId, process, log));
  }

  private Path directory(String name) {
    try {
      return Files.createDirectories(folder.resolve(name));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create " + folder.resolve(name), e);
    }
  }
}

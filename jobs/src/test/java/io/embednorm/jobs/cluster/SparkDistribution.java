package io.embednorm.jobs.cluster;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Spark from the Maven build laid out as a SPARK_HOME: a {@code jars/} folder of links to the jars
 * of the jobs module's class paths (written at package), which is where a standalone worker's
 * executors take their class path from. It holds what a Spark distribution holds: the provided jars
 * and the runtime ones that Spark brings too (Arrow, SLF4J, Jackson, Netty), not what the
 * spark-submit jar carries (embednorm, picocli, JCuda).
 */
public final class SparkDistribution {
  private static final Path PROVIDED_CLASSPATH = Path.of("target", "classpath-provided.txt");
  private static final Path RUNTIME_CLASSPATH = Path.of("target", "classpath-runtime.txt");
  private static final Pattern SUBMITTED_JAR = Pattern.compile("(embednorm|picocli|jcuda)-.*");
  private static final Path JVM_OPTIONS = Path.of("..", "conf", "jvm.options");
  private static final Path LAUNCH_SCRIPTS = Path.of("shared", "pyspark", "spark-home");
  private static final Set<PosixFilePermission> EXECUTABLE =
      PosixFilePermissions.fromString("rwxr-xr-x");

  private final Path home;
  private final String classPath;
  private final List<String> jvmOptions;

  private SparkDistribution(Path home, String classPath, List<String> jvmOptions) {
    this.home = home;
    this.classPath = classPath;
    this.jvmOptions = jvmOptions;
  }

  /** Lays out SPARK_HOME under {@code folder}. */
  public static SparkDistribution create(Path folder) {
    try {
      List<String> entries = new ArrayList<>(classPath(PROVIDED_CLASSPATH));
      for (String entry : classPath(RUNTIME_CLASSPATH)) {
        if (!SUBMITTED_JAR.matcher(Path.of(entry).getFileName().toString()).matches()) {
          entries.add(entry);
        }
      }
      String classPath = String.join(File.pathSeparator, entries);
      Path home = Files.createDirectories(folder);
      Path jars = Files.createDirectories(home.resolve("jars"));
      Files.createDirectories(home.resolve("conf"));
      Set<String> names = new HashSet<>();
      for (String entry : entries) {
        Path jar = Path.of(entry).toAbsolutePath();
        String name = jar.getFileName().toString();
        // Two jars of the same file name (different groups) both belong on the class path.
        String link = names.add(name) ? name : names.size() + "-" + name;
        names.add(link);
        Files.createSymbolicLink(jars.resolve(link), jar);
      }
      List<String> options =
          Files.readAllLines(JVM_OPTIONS).stream()
              .map(String::strip)
              .filter(line -> !line.isEmpty() && !line.startsWith("#"))
              .toList();
      return new SparkDistribution(home, classPath, options);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot lay out SPARK_HOME: " + e.getMessage(), e);
    }
  }

  /**
   * Spark's launch scripts ({@code bin/}, {@code sbin/}) from the nearest {@code
   * shared/pyspark/spark-home} in or above the working directory (the checkout's {@code
   * ../shared}), or empty where there is none: Maven serves Spark's jars, not its distribution.
   */
  public static Optional<Path> launchScripts() {
    for (Path folder = Path.of("").toAbsolutePath(); folder != null; folder = folder.getParent()) {
      Path scripts = folder.resolve(LAUNCH_SCRIPTS);
      if (Files.isRegularFile(scripts.resolve("bin").resolve("spark-submit"))) {
        return Optional.of(scripts);
      }
    }
    return Optional.empty();
  }

  /**
   * Copies {@code bin/} and {@code sbin/} of {@code scripts} ({@link #launchScripts()}) into this
   * SPARK_HOME, which makes it a distribution a user's commands run against.
   *
   * @return this SPARK_HOME's {@code bin/spark-submit}
   */
  public Path addLaunchScripts(Path scripts) {
    try {
      for (String name : List.of("bin", "sbin")) {
        Path target = Files.createDirectories(home.resolve(name));
        try (Stream<Path> files = Files.list(scripts.resolve(name))) {
          for (Path file : files.filter(Files::isRegularFile).toList()) {
            Path copy = target.resolve(file.getFileName().toString());
            Files.copy(file, copy, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(copy, EXECUTABLE);
          }
        }
      }
      return home.resolve("bin").resolve("spark-submit");
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot copy Spark's launch scripts: " + e.getMessage(), e);
    }
  }

  private static List<String> classPath(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IllegalStateException(
          "Cannot find Spark's jars: no " + file.toAbsolutePath() + "; run after package");
    }
    return List.of(Files.readString(file).strip().split(File.pathSeparator));
  }

  /** The packaged spark-submit jar in the jobs module's {@code target/}: run after package. */
  public static Path jobJar() throws IOException {
    try (DirectoryStream<Path> jars =
        Files.newDirectoryStream(Path.of("target"), "embednorm-jobs-*-spark-submit.jar")) {
      for (Path jar : jars) {
        return jar;
      }
    }
    throw new AssertionError("no spark-submit jar in target/: run after package");
  }

  public Path home() {
    return home;
  }

  /**
   * The JVM options of every JVM of a test cluster, executors included: the module openings Spark 4
   * and Arrow need on Java 17 (conf/jvm.options), C1 alone and the serial collector. Test JVMs live
   * for seconds on small data, where C2's compilations would cost more CPU than they save. Without
   * the Vector API module the CPU engine runs its scalar passes and starts no SIMD warm-up thread,
   * for the same reason.
   */
  public List<String> jvmOptions() {
    List<String> options = new ArrayList<>();
    jvmOptions.stream()
        .filter(option -> option.startsWith("--add-opens=") || option.startsWith("-D"))
        .forEach(options::add);
    options.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    return options;
  }

  /** The command that runs {@code mainClass} on Spark's class path with {@link #jvmOptions()}. */
  public List<String> javaCommand(String heap, String mainClass, List<String> arguments) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions());
    command.add("-Xmx" + heap);
    command.add("-cp");
    command.add(classPath);
    command.add(mainClass);
    command.addAll(arguments);
    return command;
  }

  /**
   * The environment of every JVM of the cluster: this SPARK_HOME, this JVM's Java, loopback
   * addresses and local folders under {@code localDirectories}.
   */
  public Map<String, String> environment(Path localDirectories) {
    return Map.of(
        "SPARK_HOME", home.toString(),
        "SPARK_CONF_DIR", home.resolve("conf").toString(),
        "SPARK_SCALA_VERSION", "2.13",
        "JAVA_HOME", System.getProperty("java.home"),
        "SPARK_LOCAL_IP", "127.0.0.1",
        "SPARK_LOCAL_DIRS", localDirectories.toString());
  }
}

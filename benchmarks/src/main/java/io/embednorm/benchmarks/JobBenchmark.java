package io.embednorm.benchmarks;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.jobs.JobSettings;
import io.embednorm.jobs.NormalizeJob;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * The job's outputs against their peer, in one {@code local[*]} session on one Parquet input of
 * {@code rows × dim} {@code array<float>} embeddings (with an {@code id} column): in turn, each
 * round, the plain Spark copy ({@code spark.read().parquet(in).write().parquet(out)}, what {@code
 * bin/embednorm sql "SELECT *" --output} runs), the normalize job Parquet → Parquet, and the job
 * Parquet → Arrow IPC ({@code --format arrow}), and the job's query written to Spark's {@code noop}
 * format (read, normalize and turn into rows, no write: the floor under any output). Prints each
 * one's median wall time and rows/s over the rounds after the warm-up, the job's time over the
 * copy's, and the Arrow output's rows/s over the Parquet output's, both ratios per round (median,
 * lowest, highest).
 *
 * <p>The outputs of the last round stay in {@code --work} ({@code copy}, {@code job-parquet},
 * {@code job-arrow}), for {@code benchmarks/scripts/job_output_check.py}, which reads both job
 * outputs with pyarrow and compares them bit for bit.
 *
 * <pre>
 * java -cp ... io.embednorm.benchmarks.JobBenchmark [--rows N] [--dim D] [--op rms_norm]
 *     [--device auto|cpu|gpu] [--rounds R] [--warmups W] [--work DIR] [--master local[*]]
 * </pre>
 */
public final class JobBenchmark {
  private static final List<String> RUNS = List.of("copy", "job-parquet", "job-arrow", "job-noop");

  private JobBenchmark() {}

  public static void main(String[] arguments) throws Exception {
    Map<String, String> options = parse(arguments);
    long rows = Long.parseLong(options.getOrDefault("--rows", "200000"));
    int dim = Integer.parseInt(options.getOrDefault("--dim", "768"));
    int rounds = Integer.parseInt(options.getOrDefault("--rounds", "3"));
    int warmups = Integer.parseInt(options.getOrDefault("--warmups", "1"));
    String op = options.getOrDefault("--op", "rms_norm");
    DeviceChoice device = DeviceChoice.fromName(options.getOrDefault("--device", "auto"));
    Path work = Path.of(options.getOrDefault("--work", "/tmp/embednorm-job-benchmark"));
    Path input = work.resolve("input-" + rows + "x" + dim + ".parquet");
    SparkSession spark =
        SparkSession.builder()
            .master(options.getOrDefault("--master", "local[*]"))
            .appName("embednorm-job-benchmark")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.extensions", "io.embednorm.spark.EmbedNormExtensions")
            .getOrCreate();
    try {
      if (!Files.exists(input)) {
        generate(spark, rows, dim, input);
      }
      System.out.printf(
          Locale.ROOT,
          "Spark %s, %s, %d cores, %d x %d array<float> Parquet at %s, %s on %s, %d warm-up"
              + " round(s), %d round(s), runs in turn: %s%n",
          spark.version(),
          spark.sparkContext().master(),
          Runtime.getRuntime().availableProcessors(),
          rows,
          dim,
          input,
          op,
          device.name().toLowerCase(Locale.ROOT),
          warmups,
          rounds,
          RUNS);
      Map<String, double[]> seconds = new LinkedHashMap<>();
      RUNS.forEach(run -> seconds.put(run, new double[rounds]));
      for (int round = -warmups; round < rounds; round++) {
        for (String run : RUNS) {
          double time = time(spark, run, input, work.resolve(run), op, device);
          System.out.printf(
              Locale.ROOT,
              "%s %d %-12s %7.2f s%n",
              round < 0 ? "warm-up" : "round",
              round < 0 ? round + warmups + 1 : round + 1,
              run,
              time);
          if (round >= 0) {
            seconds.get(run)[round] = time;
          }
        }
      }
      report(seconds, rows);
    } finally {
      spark.stop();
    }
  }

  private static double time(
      SparkSession spark, String run, Path input, Path output, String op, DeviceChoice device) {
    long started = System.nanoTime();
    if (run.equals("copy")) {
      spark.read().parquet(input.toString()).write().mode("overwrite").parquet(output.toString());
    } else {
      NormalizeJob.run(
          spark,
          new JobSettings(
              input.toString(),
              "parquet",
              output.toString(),
              run.substring("job-".length()),
              "embedding",
              null,
              Normalization.of(Op.fromName(op)),
              device,
              "overwrite"));
    }
    return (System.nanoTime() - started) / 1e9;
  }

  private static void report(Map<String, double[]> seconds, long rows) {
    System.out.printf(
        Locale.ROOT, "%n%-12s %10s %12s  %s%n", "run", "median s", "rows/s", "seconds per round");
    for (Map.Entry<String, double[]> run : seconds.entrySet()) {
      double median = median(run.getValue());
      System.out.printf(
          Locale.ROOT,
          "%-12s %10.2f %12.0f  %s%n",
          run.getKey(),
          median,
          rows / median,
          Arrays.toString(rounded(run.getValue())));
    }
    double[] copy = seconds.get("copy");
    double[] parquet = seconds.get("job-parquet");
    double[] arrow = seconds.get("job-arrow");
    double[] jobOverCopy = new double[copy.length];
    double[] arrowSpeedUp = new double[copy.length];
    double[] arrowOverFloor = new double[copy.length];
    for (int round = 0; round < copy.length; round++) {
      jobOverCopy[round] = parquet[round] / copy[round];
      arrowSpeedUp[round] = parquet[round] / arrow[round];
      arrowOverFloor[round] = arrow[round] / seconds.get("job-noop")[round];
    }
    System.out.println();
    printRatio("job Parquet -> Parquet time / plain Spark copy time", jobOverCopy);
    printRatio("job Parquet -> Arrow IPC rows/s / job Parquet -> Parquet rows/s", arrowSpeedUp);
    printRatio("job Parquet -> Arrow IPC time / job without a write (noop) time", arrowOverFloor);
  }

  private static void printRatio(String what, double[] perRound) {
    System.out.printf(
        Locale.ROOT,
        "%-66s %5.2fx (rounds %.2f-%.2f)%n",
        what,
        median(perRound),
        Arrays.stream(perRound).min().orElse(Double.NaN),
        Arrays.stream(perRound).max().orElse(Double.NaN));
  }

  /** Deterministic pseudo-random values in (-2, 2), from a hash of row and position. */
  private static void generate(SparkSession spark, long rows, int dim, Path data) {
    long started = System.nanoTime();
    spark
        .sql(
            "SELECT id, transform(sequence(0, "
                + (dim - 1)
                + "), i -> CAST((hash(id, i) % 2000000) / 1000000.0 AS FLOAT)) AS embedding"
                + " FROM range("
                + rows
                + ")")
        .write()
        .parquet(data.toString());
    System.out.printf(
        Locale.ROOT, "generated %s in %.1f s%n", data, (System.nanoTime() - started) / 1e9);
  }

  private static double[] rounded(double[] values) {
    return Arrays.stream(values).map(value -> Math.round(value * 100) / 100.0).toArray();
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int middle = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  }

  private static Map<String, String> parse(String[] arguments) {
    List<String> list = new ArrayList<>(Arrays.asList(arguments));
    if (list.size() % 2 != 0) {
      throw new IllegalArgumentException(
          "Cannot read the options " + list + ": expected pairs of --name value");
    }
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < list.size(); i += 2) {
      options.put(list.get(i), list.get(i + 1));
    }
    return options;
  }
}

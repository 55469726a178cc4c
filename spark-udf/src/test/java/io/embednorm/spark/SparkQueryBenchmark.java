package io.embednorm.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark benchmark of issue 5: in one {@code local[*]} session, over a Parquet file of {@code
 * rows × dim} {@code array<float>} embeddings, times a passthrough query, RMSNorm written with
 * Spark's built-in higher-order functions (the sum of squares computed once per row by {@code
 * aggregate}, whose finishing lambda scales the row with {@code transform}: a norm hoisted into a
 * subquery is inlined back into the lambda by Spark's planner, which then computes it once per
 * element, D times the work), and {@code rms_norm}, and prints each one's time and its ratio to the
 * passthrough.
 *
 * <p>Every query writes {@code (id, embedding)} to Spark's {@code noop} format, which runs the
 * whole plan and turns every output row into an {@code UnsafeRow} (all elements copied) but writes
 * nothing: the three queries produce the same rows, every element of every output is computed and
 * copied, and the differences between them are the normalization alone.
 *
 * <pre>
 * java -cp ... io.embednorm.spark.SparkQueryBenchmark [--rows N] [--dim D] [--warmups W]
 *     [--repeats R] [--data DIR] [--master local[*]] [--device auto|cpu|gpu]
 * </pre>
 */
public final class SparkQueryBenchmark {
  private SparkQueryBenchmark() {}

  public static void main(String[] arguments) throws Exception {
    Map<String, String> options = options(arguments);
    long rows = Long.parseLong(options.getOrDefault("--rows", "200000"));
    int dim = Integer.parseInt(options.getOrDefault("--dim", "768"));
    int warmups = Integer.parseInt(options.getOrDefault("--warmups", "1"));
    int repeats = Integer.parseInt(options.getOrDefault("--repeats", "3"));
    Path data =
        Paths.get(
            options.getOrDefault(
                "--data", "/tmp/embednorm-spark-benchmark-" + rows + "x" + dim + ".parquet"));
    SparkSession spark =
        SparkSession.builder()
            .master(options.getOrDefault("--master", "local[*]"))
            .appName("embednorm-spark-benchmark")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.extensions", EmbedNormExtensions.class.getName())
            .config(EmbedNormConfig.DEVICE.name(), options.getOrDefault("--device", "auto"))
            .getOrCreate();
    try {
      if (!Files.exists(data)) {
        generate(spark, rows, dim, data);
      }
      spark.read().parquet(data.toString()).createOrReplaceTempView("embeddings");
      Map<String, String> queries = new LinkedHashMap<>();
      queries.put("passthrough", "SELECT id, embedding FROM embeddings");
      queries.put(
          "higher-order functions",
          "SELECT id, aggregate(embedding, 0D, (sum, v) -> sum + v * v, sum -> transform(embedding,"
              + " v -> CAST(v / sqrt(sum / size(embedding) + 1e-6) AS FLOAT))) AS embedding"
              + " FROM embeddings");
      queries.put("rms_norm", "SELECT id, rms_norm(embedding) AS embedding FROM embeddings");
      System.out.printf(
          Locale.ROOT,
          "Spark %s, %s, %d cores, %d x %d array<float> Parquet at %s, %d warm-up(s), %d"
              + " repeat(s), noop writes%n",
          spark.version(),
          spark.sparkContext().master(),
          Runtime.getRuntime().availableProcessors(),
          rows,
          dim,
          data,
          warmups,
          repeats);
      Map<String, double[]> seconds = new LinkedHashMap<>();
      for (Map.Entry<String, String> query : queries.entrySet()) {
        Dataset<Row> frame = spark.sql(query.getValue());
        System.out.println("== " + query.getKey() + ": " + query.getValue());
        System.out.println(frame.queryExecution().executedPlan().treeString());
        for (int run = 0; run < warmups; run++) {
          time(frame);
        }
        double[] runs = new double[repeats];
        for (int run = 0; run < repeats; run++) {
          runs[run] = time(frame);
        }
        seconds.put(query.getKey(), runs);
      }
      double baseline = median(seconds.get("passthrough"));
      System.out.printf(
          Locale.ROOT, "%-24s %10s %10s %8s  %s%n", "query", "median s", "min s", "ratio", "runs");
      for (Map.Entry<String, double[]> result : seconds.entrySet()) {
        double[] runs = result.getValue();
        System.out.printf(
            Locale.ROOT,
            "%-24s %10.2f %10.2f %7.2fx  %s%n",
            result.getKey(),
            median(runs),
            Arrays.stream(runs).min().orElse(Double.NaN),
            median(runs) / baseline,
            Arrays.toString(runs));
      }
    } finally {
      spark.stop();
    }
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

  private static double time(Dataset<Row> frame) {
    long started = System.nanoTime();
    frame.write().format("noop").mode("overwrite").save();
    return Math.round((System.nanoTime() - started) / 1e7) / 100.0;
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int middle = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  }

  private static Map<String, String> options(String[] arguments) {
    Map<String, String> options = new LinkedHashMap<>();
    List<String> list = new ArrayList<>(Arrays.asList(arguments));
    for (int i = 0; i + 1 < list.size(); i += 2) {
      options.put(list.get(i), list.get(i + 1));
    }
    return options;
  }
}

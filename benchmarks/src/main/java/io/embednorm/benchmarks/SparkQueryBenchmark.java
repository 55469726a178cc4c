package io.embednorm.benchmarks;

import io.embednorm.spark.EmbedNormConfig;
import io.embednorm.spark.EmbedNormExtensions;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.util.QueryExecutionListener;
import org.apache.spark.storage.StorageLevel;
import scala.jdk.javaapi.CollectionConverters;

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
 * <p>After the table it prints the SQL metrics of the columnar operator in the last {@code
 * rms_norm} run, summed over its tasks: where the operator's time went (Arrow allocation, the copy
 * from Spark into Arrow, the normalization and its GPU stages, the copy back into Spark), so that
 * one run on a GPU host says why the GPU path costs what it costs.
 *
 * <pre>
 * java -cp ... io.embednorm.spark.SparkQueryBenchmark [--rows N] [--dim D] [--warmups W]
 *     [--repeats R] [--data DIR] [--master local[*]] [--device auto|cpu|gpu]
 *     [--queries passthrough,higher-order functions,rms_norm] [--cache] [--conf key=value]...
 * </pre>
 *
 * <p>{@code --cache} reads the table into executor memory once, before the first query, so that the
 * queries time the normalization and Spark's own row handling without the Parquet scan (on a
 * cluster with one executor per GPU, the workload that scales with the GPUs).
 *
 * <p>{@code --queries} runs a subset by name (the passthrough always runs, as the baseline): the
 * higher-order form takes ten times as long as the others, which a before-and-after of the operator
 * does not need.
 */
public final class SparkQueryBenchmark {
  private SparkQueryBenchmark() {}

  /** The operator's times that do not overlap and make up its operator time. */
  private static final List<String> PARTS =
      List.of("allocationTime", "copyToArrowTime", "normalizeTime", "outputTime");

  /** Times that are part of the normalize wall time (the GPU stages overlap one another). */
  private static final List<String> INSIDE_NORMALIZE =
      List.of("pinningTime", "gpuTime", "uploadTime", "kernelTime", "downloadTime", "cpuTime");

  /** The option that sets a Spark setting for the session; may be given several times. */
  private static final String CONF = "--conf";

  /** The flag that caches the table in executor memory before the queries. */
  private static final String CACHE = "--cache";

  public static void main(String[] arguments) throws Exception {
    Map<String, String> options = new LinkedHashMap<>();
    Map<String, String> settings = new LinkedHashMap<>();
    parse(arguments, options, settings);
    long rows = Long.parseLong(options.getOrDefault("--rows", "200000"));
    int dim = Integer.parseInt(options.getOrDefault("--dim", "768"));
    int warmups = Integer.parseInt(options.getOrDefault("--warmups", "1"));
    int repeats = Integer.parseInt(options.getOrDefault("--repeats", "3"));
    Path data =
        Paths.get(
            options.getOrDefault(
                "--data", "/tmp/embednorm-spark-benchmark-" + rows + "x" + dim + ".parquet"));
    SparkSession.Builder builder =
        SparkSession.builder()
            .master(options.getOrDefault("--master", "local[*]"))
            .appName("embednorm-spark-benchmark")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.extensions", EmbedNormExtensions.class.getName())
            .config(EmbedNormConfig.DEVICE.name(), options.getOrDefault("--device", "auto"));
    settings.forEach(builder::config);
    SparkSession spark = builder.getOrCreate();
    ExecutedQueries executed = new ExecutedQueries();
    spark.listenerManager().register(executed);
    try {
      if (!Files.exists(data)) {
        generate(spark, rows, dim, data);
      }
      Dataset<Row> table = spark.read().parquet(data.toString());
      if (options.containsKey(CACHE)) {
        long started = System.nanoTime();
        table = table.persist(StorageLevel.MEMORY_ONLY());
        long cached = table.count();
        System.out.printf(
            Locale.ROOT,
            "cached %d rows in executor memory in %.1f s%n",
            cached,
            (System.nanoTime() - started) / 1e9);
      }
      table.createOrReplaceTempView("embeddings");
      Map<String, String> queries = new LinkedHashMap<>();
      queries.put("passthrough", "SELECT id, embedding FROM embeddings");
      queries.put(
          "higher-order functions",
          "SELECT id, aggregate(embedding, 0D, (sum, v) -> sum + v * v, sum -> transform(embedding,"
              + " v -> CAST(v / sqrt(sum / size(embedding) + 1e-6) AS FLOAT))) AS embedding"
              + " FROM embeddings");
      queries.put("rms_norm", "SELECT id, rms_norm(embedding) AS embedding FROM embeddings");
      select(queries, options.get("--queries"));
      System.out.printf(
          Locale.ROOT,
          "Spark %s, %s, %d cores, %d x %d array<float> Parquet at %s, %d warm-up(s), %d"
              + " repeat(s), noop writes%s%n",
          spark.version(),
          spark.sparkContext().master(),
          Runtime.getRuntime().availableProcessors(),
          rows,
          dim,
          data,
          warmups,
          repeats,
          settings.isEmpty() ? "" : ", settings " + settings);
      Map<String, double[]> seconds = new LinkedHashMap<>();
      SparkPlan lastNormalization = null;
      for (Map.Entry<String, String> query : queries.entrySet()) {
        Dataset<Row> frame = spark.sql(query.getValue());
        System.out.println("== " + query.getKey() + ": " + query.getValue());
        System.out.println(frame.queryExecution().executedPlan().treeString());
        for (int run = 0; run < warmups; run++) {
          time(frame);
        }
        double[] runs = new double[repeats];
        for (int run = 0; run < repeats; run++) {
          executed.clear();
          runs[run] = time(frame);
          if (query.getKey().equals("rms_norm")) {
            lastNormalization = executed.next();
          }
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
      printOperatorMetrics(lastNormalization);
    } finally {
      spark.stop();
    }
  }

  /**
   * The SQL metrics of the columnar operator in {@code plan}, summed over tasks: times in
   * milliseconds with their share of the operator time (the parts above the line add up to it, with
   * "other" for the rest; the indented ones are inside the normalize wall time, and the GPU stages
   * overlap one another), sizes in MB.
   */
  private static void printOperatorMetrics(SparkPlan plan) {
    EmbedNormProjectExec operator = plan == null ? null : find(plan, EmbedNormProjectExec.class);
    if (operator == null) {
      System.out.println("EmbedNormProject metrics: the last rms_norm run has no EmbedNormProject");
      return;
    }
    Map<String, SQLMetric> metrics = CollectionConverters.asJava(operator.metrics());
    long operatorTime = metrics.get("operatorTime").value();
    System.out.println(
        "EmbedNormProject metrics of the last rms_norm run (summed over its tasks; time shares"
            + " of the operator time):");
    long accounted = 0;
    for (Map.Entry<String, SQLMetric> metric : metrics.entrySet()) {
      String indent = INSIDE_NORMALIZE.contains(metric.getKey()) ? "    " : "  ";
      System.out.println(metricLine(metric.getKey(), metric.getValue(), operatorTime, indent));
      if (PARTS.contains(metric.getKey())) {
        accounted += metric.getValue().value();
      }
    }
    System.out.printf(
        Locale.ROOT,
        "  %-20s %-34s %12.1f ms %5.1f %%%n",
        "other",
        "operator time not in the parts",
        (operatorTime - accounted) / 1e6,
        share(operatorTime - accounted, operatorTime));
  }

  private static String metricLine(String key, SQLMetric metric, long operatorTime, String indent) {
    String description = metric.name().isDefined() ? metric.name().get() : key;
    long value = metric.value();
    switch (metric.metricType()) {
      case "nsTiming":
        return String.format(
            Locale.ROOT,
            "%s%-20s %-34s %12.1f ms %5.1f %%",
            indent,
            key,
            description,
            value / 1e6,
            share(value, operatorTime));
      case "size":
        return String.format(
            Locale.ROOT, "%s%-20s %-34s %12.1f MB", indent, key, description, value / 1e6);
      default:
        return String.format(Locale.ROOT, "%s%-20s %-34s %12d", indent, key, description, value);
    }
  }

  private static double share(long part, long whole) {
    return whole == 0 ? 0 : 100.0 * part / whole;
  }

  /** Keeps the passthrough and the queries named in {@code names} (comma-separated), if given. */
  private static void select(Map<String, String> queries, String names) {
    if (names == null) {
      return;
    }
    List<String> chosen = Arrays.stream(names.split(",")).map(String::trim).toList();
    for (String name : chosen) {
      if (!queries.containsKey(name)) {
        throw new IllegalArgumentException(
            "Cannot run the query '" + name + "': the queries are " + queries.keySet());
      }
    }
    queries.keySet().removeIf(name -> !name.equals("passthrough") && !chosen.contains(name));
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

  /**
   * Reads {@code --name value} pairs into {@code options}, and each {@code --conf key=value} into
   * {@code settings}.
   */
  private static void parse(
      String[] arguments, Map<String, String> options, Map<String, String> settings) {
    List<String> list = new ArrayList<>(Arrays.asList(arguments));
    if (list.remove(CACHE)) {
      options.put(CACHE, "true");
    }
    if (list.size() % 2 != 0) {
      throw new IllegalArgumentException(
          "Cannot read the options "
              + list
              + ": expected pairs of --name value (and the flag "
              + CACHE
              + "), got "
              + list.size()
              + " words");
    }
    for (int i = 0; i < list.size(); i += 2) {
      String name = list.get(i);
      String value = list.get(i + 1);
      if (!name.equals(CONF)) {
        options.put(name, value);
        continue;
      }
      int equals = value.indexOf('=');
      if (equals <= 0) {
        throw new IllegalArgumentException(
            "Cannot read " + CONF + " '" + value + "': expected key=value");
      }
      settings.put(value.substring(0, equals).trim(), value.substring(equals + 1).trim());
    }
  }

  /** Hands over the executed plan of each successful query, in order. */
  private static final class ExecutedQueries implements QueryExecutionListener {
    private final BlockingQueue<SparkPlan> plans = new LinkedBlockingQueue<>();

    @Override
    public void onSuccess(String functionName, QueryExecution execution, long durationNanos) {
      plans.add(execution.executedPlan());
    }

    @Override
    public void onFailure(String functionName, QueryExecution execution, Exception exception) {}

    void clear() {
      plans.clear();
    }

    /**
     * The plan of the next query to finish; Spark calls listeners on another thread, soon after the
     * query.
     */
    SparkPlan next() throws InterruptedException {
      SparkPlan plan = plans.poll(60, TimeUnit.SECONDS);
      if (plan == null) {
        throw new IllegalStateException(
            "Cannot read the query's metrics: Spark did not report it within 60 s");
      }
      return plan;
    }
  }

  /** The first node of {@code type} in {@code plan}, adaptive and query stages included. */
  private static <T> T find(SparkPlan plan, Class<T> type) {
    if (type.isInstance(plan)) {
      return type.cast(plan);
    }
    List<SparkPlan> children = new ArrayList<>(CollectionConverters.asJava(plan.children()));
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      children.add(adaptive.executedPlan());
    } else if (plan instanceof QueryStageExec stage) {
      children.add(stage.plan());
    }
    for (SparkPlan child : children) {
      T found = find(child, type);
      if (found != null) {
        return found;
      }
    }
    return null;
  }
}

package io.embednorm.benchmarks;

import static org.apache.spark.sql.functions.call_function;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;

import io.embednorm.engine.Engines;
import io.embednorm.spark.EmbedNormExtensions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.SparkSession;

/**
 * SQL {@code causal_conv} end to end: in one {@code local[*]} session over a Parquet file of {@code
 * rows} token sequences (each of 1 to T steps of C channels, {@code array<array<float>>}), the
 * median time of a passthrough of the sequences and of {@code causal_conv} with a constant kernel
 * in the columnar operator on the GPU and on the CPU engine, and on the CPU row path ({@code
 * spark.embednorm.columnar=false}), each written to Spark's {@code noop} format (every output row
 * built, nothing written). Arguments: {@code --rows N --steps T --channels C --repeats R --data
 * DIR}.
 */
public final class ConvolutionSqlBenchmark {
  private ConvolutionSqlBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = option(args, "--rows", 4096);
    int steps = option(args, "--steps", 256);
    int channels = option(args, "--channels", 256);
    int repeats = option(args, "--repeats", 3);
    Path data = Path.of(text(args, "--data", Files.createTempDirectory("conv-sql").toString()));
    SparkSession spark =
        SparkSession.builder()
            .master("local[*]")
            .appName("embednorm-causal-conv-sql")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.extensions", EmbedNormExtensions.class.getName())
            .config("spark.sql.parquet.enableNestedColumnVectorizedReader", "true")
            .getOrCreate();
    String table = data.resolve("sequences.parquet").toString();
    spark
        .range(rows)
        .select(
            col("id"),
            expr(String.format(
                    Locale.ROOT,
                    "transform(sequence(1, 1 + cast(pmod(hash(id), %d) as int)), t ->"
                        + " transform(sequence(1, %d), c -> cast((pmod(hash(id, t, c), 2001) -"
                        + " 1000) / 1000 as float)))",
                    steps,
                    channels))
                .as("s"))
        .write()
        .mode("overwrite")
        .parquet(table);
    Random random = new Random(1);
    float[][] w = new float[channels][steps + 1];
    for (float[] row : w) {
      for (int j = 0; j < row.length; j++) {
        row[j] = random.nextFloat() * 0.1f;
      }
    }
    Column kernel = lit(w);
    String[][] runs = {
      {"passthrough", "cpu", "true"},
      {"causal_conv, columnar operator, gpu", "gpu", "true"},
      {"causal_conv, columnar operator, cpu engine", "cpu", "true"},
      {"causal_conv, CPU row path", "cpu", "false"}
    };
    double base = 0;
    System.out.printf(
        Locale.ROOT,
        "%d sequences of 1..%d steps of %d channels, median of %d after a warm-up, noop writes%n",
        rows,
        steps,
        channels,
        repeats);
    for (String[] run : runs) {
      if (run[1].equals("gpu") && Engines.gpuUnavailableReason() != null) {
        System.out.println(run[0] + ": skipped, " + Engines.gpuUnavailableReason());
        continue;
      }
      spark.conf().set("spark.embednorm.device", run[1]);
      spark.conf().set("spark.embednorm.columnar", run[2]);
      Column output =
          run[0].equals("passthrough")
              ? col("s")
              : call_function("causal_conv", col("s"), kernel).as("y");
      Runnable query =
          () ->
              spark
                  .read()
                  .parquet(table)
                  .select(col("id"), output)
                  .write()
                  .format("noop")
                  .mode("overwrite")
                  .save();
      boolean operator =
          spark
              .read()
              .parquet(table)
              .select(col("id"), output)
              .queryExecution()
              .executedPlan()
              .toString()
              .contains("EmbedNormProject");
      double seconds = median(repeats, query);
      if (base == 0) {
        base = seconds;
      }
      System.out.printf(
          Locale.ROOT,
          "%-45s %8.3f s  %6.2fx passthrough  (EmbedNormProject in the plan: %s)%n",
          run[0],
          seconds,
          seconds / base,
          operator);
    }
    spark.stop();
  }

  private static double median(int repeats, Runnable query) {
    query.run();
    double[] seconds = new double[repeats];
    for (int i = 0; i < repeats; i++) {
      long started = System.nanoTime();
      query.run();
      seconds[i] = (System.nanoTime() - started) / 1e9;
    }
    Arrays.sort(seconds);
    return seconds[repeats / 2];
  }

  private static int option(String[] args, String name, int fallback) {
    return Integer.parseInt(text(args, name, Integer.toString(fallback)));
  }

  private static String text(String[] args, String name, String fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }
}

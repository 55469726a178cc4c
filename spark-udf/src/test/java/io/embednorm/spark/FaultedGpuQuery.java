package io.embednorm.spark;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.apache.logging.log4j.Level;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The main class of the JVM that {@link GpuFallbackQueryTest} starts with {@link
 * FaultingGpuProvider} as its GPU and faults switched on: runs one query of {@link #BATCHES}
 * batches in one task on the "GPU" and prints, on one line starting {@code RESULT}, the operator's
 * {@code cpuFallbackBatches}, the warnings logged, which batches hold the CPU engine's bits, the
 * rows off the float64 reference, and the task memory left.
 */
public final class FaultedGpuQuery {
  static final int BATCHES = 8;
  static final int BATCH_ROWS = 8;
  static final int WIDTH = 16;

  private FaultedGpuQuery() {}

  public static void main(String[] arguments) {
    long seed = Long.parseLong(arguments[0]);
    SparkSession spark = session();
    List<Double[]> rows = rows(seed);
    TestData.frame(spark, "float", rows).createOrReplaceTempView("embeddings");
    Outcome outcome = query(spark, "embeddings");
    EmbedNormProjectExec operator = outcome.operator();
    Map<Integer, List<?>> values = outcome.values();
    List<String> warnings = outcome.warnings();
    TreeSet<Integer> cpuBatches = new TreeSet<>();
    TreeSet<Integer> otherBatches = new TreeSet<>();
    int offReference = 0;
    double epsilon = Reference.defaultEpsilon("rms_norm");
    try (NormalizationEngine cpu = Engines.cpu(1)) {
      for (int id = 0; id < rows.size(); id++) {
        List<?> y = values.get(id);
        int[] expected = onCpu(cpu, rows.get(id));
        boolean cpuBits = true;
        boolean flippedBits = true;
        for (int i = 0; i < WIDTH; i++) {
          int bits = Float.floatToRawIntBits(((Number) y.get(i)).floatValue());
          cpuBits &= bits == expected[i];
          flippedBits &= bits == (expected[i] ^ 1);
        }
        if (cpuBits) {
          cpuBatches.add(id / BATCH_ROWS);
        } else if (!flippedBits) {
          otherBatches.add(id / BATCH_ROWS);
        }
        try {
          Accuracy.FLOAT.assertRow(
              "row " + id, y, Reference.compute("rms_norm", rows.get(id), epsilon, null, null));
        } catch (AssertionError off) {
          offReference++;
        }
      }
    }
    report(spark, operator, warnings, cpuBatches, otherBatches, offReference);
  }

  /**
   * Prints the {@code RESULT} line (the operator's fallback metric and batches, the warnings, which
   * batches hold the CPU engine's bits and which neither its nor the flipped ones, the rows off the
   * reference, the task memory left) and each warning, then stops Spark and the JVM.
   */
  static void report(
      SparkSession spark,
      EmbedNormProjectExec operator,
      List<String> warnings,
      TreeSet<Integer> cpuBatches,
      TreeSet<Integer> otherBatches,
      int offReference) {
    System.out.println(
        "RESULT cpuFallbackBatches="
            + operator.metrics().get("cpuFallbackBatches").get().value()
            + " numBatches="
            + operator.metrics().get("numBatches").get().value()
            + " warnings="
            + warnings.size()
            + " cpuBatches="
            + cpuBatches
            + " otherBatches="
            + otherBatches
            + " offReference="
            + offReference
            + " taskBytes="
            + TaskAllocators.allocatedBytes()
            + " openTaskAllocators="
            + TaskAllocators.openTaskAllocators());
    for (String warning : warnings) {
      System.out.println("WARNING " + warning);
    }
    spark.stop();
    System.exit(0);
  }

  /** One local session on the faulting "GPU", batches of {@link #BATCH_ROWS} rows. */
  static SparkSession session() {
    return SparkSession.builder()
        .master("local[1]")
        .appName("embednorm-faulted-gpu-query")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config(
            "spark.sql.optimizer.excludedRules",
            "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation")
        .config("spark.sql.extensions", EmbedNormExtensions.class.getName())
        .config(EmbedNormConfig.DEVICE.name(), "gpu")
        .config(EmbedNormConfig.BATCH_ROWS.name(), Integer.toString(BATCH_ROWS))
        .getOrCreate();
  }

  /** What one query gave: its operator, its rows by id and the warnings embednorm logged. */
  record Outcome(
      EmbedNormProjectExec operator, Map<Integer, List<?>> values, List<String> warnings) {}

  /** Runs rms_norm over {@code view}'s column {@code x}, capturing embednorm's warnings. */
  static Outcome query(SparkSession spark, String view) {
    Dataset<Row> result;
    Map<Integer, List<?>> values;
    List<String> warnings;
    try (LogCapture log = LogCapture.of("io.embednorm", Level.WARN)) {
      result = spark.sql("SELECT id, rms_norm(x) AS y FROM " + view);
      values = Results.byId(result);
      warnings = log.messages();
    }
    EmbedNormProjectExec operator =
        Results.find(result.queryExecution().executedPlan(), EmbedNormProjectExec.class);
    return new Outcome(operator, values, warnings);
  }

  /** {@link #BATCHES} batches of float rows of {@link #WIDTH} elements from {@code seed}. */
  static List<Double[]> rows(long seed) {
    Random random = new Random(seed);
    List<Double[]> rows = new ArrayList<>();
    for (int row = 0; row < BATCHES * BATCH_ROWS; row++) {
      Double[] values = new Double[WIDTH];
      for (int i = 0; i < WIDTH; i++) {
        values[i] = (double) (float) (random.nextGaussian() * 2 + 0.25);
      }
      rows.add(values);
    }
    return rows;
  }

  /** The bits of one row's rms_norm by the CPU engine. */
  static int[] onCpu(NormalizationEngine cpu, Double[] row) {
    ByteBuffer input = ByteBuffer.allocate(WIDTH * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer output = ByteBuffer.allocate(WIDTH * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < WIDTH; i++) {
      input.putFloat(i * Float.BYTES, (float) (double) row[i]);
    }
    cpu.normalize(
        Normalization.of(Op.RMS_NORM),
        RowBatch.fixedWidth(ElementType.FLOAT32, 1, WIDTH, input, output));
    int[] bits = new int[WIDTH];
    for (int i = 0; i < WIDTH; i++) {
      bits[i] = output.getInt(i * Float.BYTES);
    }
    return bits;
  }
}

package io.embednorm.spark;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import io.embednorm.spark.internal.TaskAllocators;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The main class of the JVM that {@link StagedColumnarTest} starts with {@link HostCopyGpuProvider}
 * as its GPU: runs every op, and a chain, over float and double columns of fixed and of ragged rows
 * (with null rows, rows holding a null element, empty rows and a row wider than a staging slot), in
 * batches of {@link #BATCH_ROWS} rows, from Spark's on-heap vectors (rows batched by the operator)
 * and from off-heap ones (a Parquet scan). Prints a {@code CASE} line per query: the rows whose
 * bits differ from the CPU engine's with the test GPU's lowest bit flipped, and the operator's
 * metrics; then a {@code RESULT} line with the Arrow memory the executor's root allocator ever held
 * and the task memory left.
 */
public final class StagedGpuQuery {
  static final int BATCH_ROWS = 16;
  private static final int ROWS = 150;
  private static final int FIXED_WIDTH = 37;

  /** Wider than a staging slot of the test JVM (1000 bytes) in either type: a slot of its own. */
  private static final int WIDE_ROW = 400;

  private static final List<String> CALLS =
      List.of(
          "rms_norm(x)",
          "layer_norm(x)",
          "softmax(x)",
          "log_softmax(x)",
          "l2_normalize(x)",
          "l1_normalize(x)",
          "linf_normalize(x)",
          "l2_normalize(rms_norm(x))");

  private static final List<List<Op>> STEPS =
      List.of(
          List.of(Op.RMS_NORM),
          List.of(Op.LAYER_NORM),
          List.of(Op.SOFTMAX),
          List.of(Op.LOG_SOFTMAX),
          List.of(Op.L2_NORMALIZE),
          List.of(Op.L1_NORMALIZE),
          List.of(Op.LINF_NORMALIZE),
          List.of(Op.RMS_NORM, Op.L2_NORMALIZE));

  private StagedGpuQuery() {}

  public static void main(String[] arguments) {
    long seed = Long.parseLong(arguments[0]);
    Path folder = Path.of(arguments[1]);
    SparkSession spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("embednorm-staged-gpu-query")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config(
                "spark.sql.optimizer.excludedRules",
                "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation")
            .config("spark.sql.extensions", EmbedNormExtensions.class.getName())
            .config(EmbedNormConfig.DEVICE.name(), "gpu")
            .config(EmbedNormConfig.BATCH_ROWS.name(), Integer.toString(BATCH_ROWS))
            .config("spark.sql.columnVector.offheap.enabled", "true")
            .config("spark.sql.parquet.columnarReaderBatchSize", Integer.toString(BATCH_ROWS))
            .getOrCreate();
    try (NormalizationEngine cpu = Engines.cpu(1)) {
      for (String type : List.of("float", "double")) {
        for (boolean ragged : new boolean[] {false, true}) {
          long caseSeed = TestSeeds.mix(seed, type.length(), ragged ? 1 : 0);
          List<Double[]> rows = rows(new Random(caseSeed), type, ragged);
          Dataset<Row> frame = TestData.frame(spark, type, rows);
          String layout = ragged ? "ragged" : "fixed";
          frame.createOrReplaceTempView("memory");
          check(spark, cpu, "on-heap " + type + " " + layout, "memory", type, rows, caseSeed);
          TestData.parquetView(spark, frame, folder.resolve(type + "-" + layout), "scanned");
          check(spark, cpu, "off-heap " + type + " " + layout, "scanned", type, rows, caseSeed);
        }
      }
    }
    System.out.println(
        "RESULT rootPeakBytes="
            + TaskAllocators.root().getPeakMemoryAllocation()
            + " taskBytes="
            + TaskAllocators.allocatedBytes()
            + " openTaskAllocators="
            + TaskAllocators.openTaskAllocators());
    spark.stop();
    System.exit(0);
  }

  private static void check(
      SparkSession spark,
      NormalizationEngine cpu,
      String name,
      String view,
      String type,
      List<Double[]> rows,
      long seed) {
    StringBuilder select = new StringBuilder("SELECT id");
    for (int call = 0; call < CALLS.size(); call++) {
      select.append(", ").append(CALLS.get(call)).append(" AS c").append(call);
    }
    Dataset<Row> result = spark.sql(select + " FROM " + view);
    List<Row> collected = result.collectAsList();
    int mismatched = 0;
    String first = "none";
    for (Row row : collected) {
      int id = row.getInt(0);
      for (int call = 0; call < CALLS.size(); call++) {
        List<?> actual = row.isNullAt(call + 1) ? null : row.getList(call + 1);
        long[] expected = expected(cpu, rows.get(id), STEPS.get(call), type);
        if (!sameBits(actual, expected, type)) {
          if (mismatched == 0) {
            first = "row " + id + " of " + CALLS.get(call) + ": " + actual;
          }
          mismatched++;
        }
      }
    }
    EmbedNormProjectExec operator =
        Results.find(result.queryExecution().executedPlan(), EmbedNormProjectExec.class);
    StringBuilder line = new StringBuilder("CASE " + name + ": seed=" + seed);
    line.append(" rows=").append(collected.size());
    line.append(" mismatched=").append(mismatched);
    for (String metric :
        List.of(
            "numBatches",
            "stagedBatches",
            "bytesCopiedToArrow",
            "cpuFallbackBatches",
            "numGpuChunks",
            "stagedBytes")) {
      line.append(' ').append(metric).append('=');
      line.append(operator == null ? "?" : operator.metrics().get(metric).get().value());
    }
    System.out.println(line.append(" firstMismatch=").append(first));
  }

  /**
   * Rows of {@link #FIXED_WIDTH} values, or of random widths up to 80 with a null row, a row with a
   * null element, an empty row and a {@link #WIDE_ROW} row among them.
   */
  private static List<Double[]> rows(Random random, String type, boolean ragged) {
    List<Double[]> rows = new ArrayList<>();
    for (int id = 0; id < ROWS; id++) {
      int width = ragged ? random.nextInt(81) : FIXED_WIDTH;
      if (ragged && id == 40) {
        width = WIDE_ROW;
      }
      if (ragged && id == 7) {
        width = 0;
      }
      Double[] row = new Double[width];
      for (int i = 0; i < width; i++) {
        double value = random.nextGaussian() * 3 + 0.5;
        row[i] = type.equals("float") ? (double) (float) value : value;
      }
      if (ragged && id % 11 == 3) {
        row = null;
      } else if (ragged && id % 13 == 5 && width > 0) {
        row[width / 2] = null;
      }
      rows.add(row);
    }
    return rows;
  }

  /**
   * The bits the test GPU gives {@code row}: the CPU engine's steps, each element's lowest bit
   * flipped; null for a null result (a null row or element).
   */
  private static long[] expected(
      NormalizationEngine cpu, Double[] row, List<Op> steps, String type) {
    if (row == null) {
      return null;
    }
    for (Double value : row) {
      if (value == null) {
        return null;
      }
    }
    boolean asFloat = type.equals("float");
    ElementType elementType = asFloat ? ElementType.FLOAT32 : ElementType.FLOAT64;
    int bytes = Math.max(row.length, 1) * elementType.byteWidth();
    ByteBuffer input = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer output = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < row.length; i++) {
      if (asFloat) {
        input.putFloat(i * Float.BYTES, (float) (double) row[i]);
      } else {
        input.putDouble(i * Double.BYTES, row[i]);
      }
    }
    long[] bits = new long[row.length];
    if (row.length == 0) {
      return bits;
    }
    ByteBuffer in = input;
    for (Op op : steps) {
      cpu.normalize(
          Normalization.of(op), RowBatch.fixedWidth(elementType, 1, row.length, in, output));
      in = output;
    }
    for (int i = 0; i < row.length; i++) {
      bits[i] = asFloat ? output.getInt(i * Float.BYTES) ^ 1 : output.getLong(i * Double.BYTES) ^ 1;
    }
    return bits;
  }

  private static boolean sameBits(List<?> actual, long[] expected, String type) {
    if (actual == null || expected == null) {
      return actual == null && expected == null;
    }
    if (actual.size() != expected.length) {
      return false;
    }
    for (int i = 0; i < expected.length; i++) {
      long bits =
          type.equals("float")
              ? Float.floatToRawIntBits((Float) actual.get(i))
              : Double.doubleToRawLongBits((Double) actual.get(i));
      if (bits != expected[i]) {
        return false;
      }
    }
    return true;
  }
}

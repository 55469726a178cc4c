package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.Serializable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.CollectionAccumulator;

/**
 * The job's Arrow IPC output ({@code --format arrow}): {@link ArrowIpcFileFormat} with the
 * embedding column as a fixed-size list of the width of each task's first non-null row, found as
 * the task writes (no query before the write). A task whose first record batch has no non-null
 * embedding writes the column as {@code List<element>}; a task without rows writes no file. The
 * tasks report their widths through an accumulator: files of different widths fail the job after
 * the write, and the output is removed.
 */
public final class ArrowOutput {
  /** The name {@code --format} takes. */
  public static final String FORMAT = "arrow";

  /** The option naming the accumulator of {@link #WIDTHS} that the tasks report widths to. */
  static final String WIDTHS_OPTION = "embednorm.arrow.widths";

  /** The accumulators of the writes in progress in this JVM, by the option's value. */
  private static final Map<String, CollectionAccumulator<FileWidth>> WIDTHS =
      new ConcurrentHashMap<>();

  /** The width a task's file gave its fixed-size list column. */
  record FileWidth(int width, String file) implements Serializable {}

  private ArrowOutput() {}

  /** Whether {@code format} names this output. */
  public static boolean isNamed(String format) {
    return FORMAT.equalsIgnoreCase(format);
  }

  /**
   * Writes with {@code writer} to {@code output}, {@code column} as a fixed-size list; then fails,
   * removing the output, when two files took different widths.
   */
  public static void save(
      SparkSession spark, DataFrameWriter<Row> writer, String column, String output) {
    String key = UUID.randomUUID().toString();
    CollectionAccumulator<FileWidth> widths =
        spark.sparkContext().collectionAccumulator("embednorm arrow widths");
    WIDTHS.put(key, widths);
    try {
      writer
          .format(ArrowIpcFileFormat.class.getName())
          .option(ArrowIpcFileFormat.COLUMN, column)
          .option(WIDTHS_OPTION, key)
          .save(output);
    } finally {
      WIDTHS.remove(key);
    }
    check(spark, column, output, widths.value());
  }

  /**
   * The accumulator registered under {@code key}, or null (a write not started by {@link #save}).
   */
  static CollectionAccumulator<FileWidth> widths(String key) {
    return key == null ? null : WIDTHS.get(key);
  }

  private static void check(
      SparkSession spark, String column, String output, List<FileWidth> reported) {
    Map<Integer, String> files = new TreeMap<>();
    for (FileWidth file : reported) {
      files.putIfAbsent(file.width(), new Path(file.file()).getName());
    }
    if (files.size() < 2) {
      return;
    }
    StringBuilder found = new StringBuilder();
    files.forEach(
        (width, file) ->
            found
                .append(found.length() == 0 ? "" : ", ")
                .append(width)
                .append(" in ")
                .append(file));
    Path path = new Path(output);
    try {
      path.getFileSystem(spark.sparkContext().hadoopConfiguration()).delete(path, true);
    } catch (IOException failure) {
      throw new EmbedNormException(
          "Cannot remove output '" + output + "' of mixed widths: " + failure.getMessage(),
          failure);
    }
    throw new EmbedNormException(
        "Cannot write column '"
            + column
            + "' as Arrow FixedSizeList: tasks found rows of different widths ("
            + found
            + "), and an output takes one; the output was removed; --format parquet takes rows of"
            + " any width");
  }
}

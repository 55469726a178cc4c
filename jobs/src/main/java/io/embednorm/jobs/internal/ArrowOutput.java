package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.Serializable;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
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
 * embedding writes the column as {@code List<element>}, and after the write the driver rewrites
 * such files with the width the others found ({@link ListFiles}), so that every file has one
 * schema; where every embedding is null they stay {@code List}s. A task without rows writes no
 * file. The tasks report their widths through an accumulator: files of different widths (a {@code
 * List} file's rows included) fail the job after the write, and the output is removed.
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
    List<FileWidth> reported = widths.value();
    check(spark, column, output, reported);
    fixListFiles(spark, column, output, reported);
  }

  /**
   * Gives the files that wrote {@code column} as a {@code List} the one width the others found (see
   * {@link ListFiles}); fails as {@link #check} does when one of them holds a row of another width.
   * Without a width found (every embedding null) the files stay {@code List}s.
   */
  private static void fixListFiles(
      SparkSession spark, String column, String output, List<FileWidth> reported) {
    Set<Integer> found = new TreeSet<>();
    Set<String> fixedNames = new HashSet<>();
    for (FileWidth file : reported) {
      found.add(file.width());
      fixedNames.add(new Path(file.file()).getName());
    }
    if (found.size() != 1) {
      return;
    }
    int width = found.iterator().next();
    String mismatch;
    try {
      mismatch =
          ListFiles.fixAll(
              new Path(output),
              column,
              width,
              fixedNames,
              spark.sparkContext().hadoopConfiguration());
    } catch (IOException failure) {
      throw new EmbedNormException(
          "Cannot write Arrow output '"
              + output
              + "': a file without a width could not take the width "
              + width
              + " of the others: "
              + failure.getMessage(),
          failure);
    }
    if (mismatch != null) {
      String first = reported.get(0).file();
      failMixed(
          spark, column, output, width + " in " + new Path(first).getName() + ", " + mismatch);
    }
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
    failMixed(spark, column, output, found.toString());
  }

  /** Removes the output and fails: its files hold rows of different widths ({@code found}). */
  private static void failMixed(SparkSession spark, String column, String output, String found) {
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
